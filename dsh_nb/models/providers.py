"""The model providers: one adapter Protocol, one table row per provider.

A provider is its official async SDK client and an adapter that speaks
its wire format (:mod:`~dsh_nb.models.openai_api`,
:mod:`~dsh_nb.models.anthropic_api`). :class:`ProviderAdapter` is all the
step loop asks of an adapter, as httpx's ``BaseTransport`` is all its client
asks of a transport; :data:`PROVIDER_TABLE` is the one place a provider is
named. Adding one is a module with its adapter and a row here. SDKs and
adapters are imported on first use: each SDK takes 0.3-1 s to import.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from dsh_nb.models.view import ChatView, Completion
    from dsh_nb.models.wire import ParsedCall
    from dsh_nb.tools.values.execution import ToolExecutionResult

__all__ = ["PROVIDERS", "PROVIDER_TABLE", "Provider", "ProviderAdapter"]


class ProviderAdapter(Protocol):
    """One SDK client's requests and replies, in its provider's wire form."""

    client: Any

    def tools(self, schemas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The registry's tool schemas as the provider takes them."""
        ...

    def user_message(self, text: str) -> dict[str, Any]:
        """A user's message in the conversation's wire form."""
        ...

    def new_question(self, messages: list[dict[str, Any]]) -> None:
        """Tidy the conversation before a new user message (e.g. reasoning)."""
        ...

    def add_notice(self, messages: list[dict[str, Any]], text: str) -> None:
        """Tell the model something (a policy change) before the next step."""
        ...

    def results(
        self,
        calls: Sequence[ParsedCall],
        results: Sequence[ToolExecutionResult | str],
    ) -> list[dict[str, Any]]:
        """The messages answering a step's calls, in call order."""
        ...

    async def complete(
        self,
        *,
        model: str,
        system: str,
        messages: Sequence[Mapping[str, Any]],
        tools: list[dict[str, Any]],
        stream: bool,
        view: ChatView,
    ) -> Completion:
        """One request: the reply, its calls announced to ``view`` as they come."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Provider:
    """One row: the SDK's client class, and the adapter that speaks for it."""

    name: str
    sdk: str
    """The SDK module (``pip install 'dsh_nb[models]'`` brings it)."""
    client: str
    """The SDK's async client class."""
    adapter: str
    """``"module:Class"`` of the adapter."""

    def make_client(self, base_url: str | None, api_key: str | None) -> Any:
        """The SDK's async client, with a clear error if the SDK is missing."""
        try:
            sdk = importlib.import_module(self.sdk)
        except ImportError:
            raise ImportError(
                f"provider {self.name!r} needs the {self.sdk} SDK: "
                "pip install 'dsh_nb[models]'"
            ) from None
        return getattr(sdk, self.client)(base_url=base_url, api_key=api_key)

    def make_adapter(
        self, client: Any, *, request_options: Mapping[str, Any]
    ) -> ProviderAdapter:
        """This provider's adapter around ``client``."""
        module, _, name = self.adapter.partition(":")
        adapter: ProviderAdapter = getattr(importlib.import_module(module), name)(
            client, request_options=request_options
        )
        return adapter


PROVIDER_TABLE: Final[Mapping[str, Provider]] = {
    row.name: row
    for row in (
        Provider(
            name="openai",
            sdk="openai",
            client="AsyncOpenAI",
            adapter="dsh_nb.models.openai_api:OpenAIAdapter",
        ),
        Provider(
            name="anthropic",
            sdk="anthropic",
            client="AsyncAnthropic",
            adapter="dsh_nb.models.anthropic_api:AnthropicAdapter",
        ),
    )
}
"""Every provider, by the name ``Chat(provider=...)`` takes."""

PROVIDERS: Final = tuple(PROVIDER_TABLE)
"""The provider names, in the table's order (``openai`` first: the default)."""
