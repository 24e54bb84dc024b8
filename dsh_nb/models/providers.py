"""The model providers: one adapter Protocol, one table row per provider.

A provider is its official async SDK client and an adapter that speaks
its wire format (:mod:`~dsh_nb.models.openai_api`,
:mod:`~dsh_nb.models.anthropic_api`). :class:`ProviderAdapter` is all the
step loop asks of an adapter, as httpx's ``BaseTransport`` is all its client
asks of a transport; :data:`PROVIDER_TABLE` is the one place a provider is
named. Adding one is a module with its adapter and a row here: the
step loop, ``run_eval`` (its practice model, recordings and replays),
``python -m dsh_nb.evals``, ``%%chat``'s ``DshChat.provider`` and
``%tools --NAME`` all read the table. SDKs are imported on first use:
each takes 0.3-1 s to import.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    from dsh_nb.models.scripted import ApiError, Turn
    from dsh_nb.models.view import ChatView, Completion
    from dsh_nb.models.wire import ParsedCall
    from dsh_nb.tools.values.execution import ToolExecutionResult

__all__ = [
    "PROVIDERS",
    "PROVIDER_TABLE",
    "Provider",
    "ProviderAdapter",
    "provider_row",
    "routed",
    "sdk_shaped",
]

#: An SDK client's request method (``chat.completions.create``).
Create = Callable[..., Awaitable[Any]]


class ProviderAdapter(Protocol):
    """One SDK client's requests and replies, in its provider's wire form."""

    client: Any

    @staticmethod
    def tools(schemas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
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

    # --- the wire without a client (evaluations, practice, replay) --------

    @staticmethod
    def earlier(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Earlier conversation, given in Chat Completions form, in this
        wire form; a ``ValueError`` says what this wire cannot carry."""
        ...

    @staticmethod
    def read_request(
        request: Mapping[str, Any],
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """A request's messages and tools in one neutral form (``role``,
        ``content``, an assistant's ``calls``; ``name``, ``description``,
        ``parameters``): what a practice model reads, whatever the wire."""
        ...

    @staticmethod
    def reply_body(turn: Turn, model: str, seq: int) -> dict[str, Any]:
        """A scripted turn as this API's whole response body."""
        ...

    @staticmethod
    def reply_events(
        turn: Turn, model: str, seq: int, request: Mapping[str, Any]
    ) -> list[str]:
        """A scripted turn as this API's streamed events, for ``request``."""
        ...

    @staticmethod
    def error_body(error: ApiError) -> dict[str, Any]:
        """A scripted failure as this API's error body."""
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
    request: tuple[str, ...]
    """The client's request method, as a path (``chat.completions.create``)."""
    response: str
    """``"module:Class"`` of the SDK's response type (a pydantic model)."""
    route: str
    """The HTTP path a request ends in (``/chat/completions``), for the
    loopback :class:`~dsh_nb.models.replay_server.ReplayServer`."""
    label: str = ""
    """What ``%tools --NAME`` gives, in a few words (the name when empty)."""
    key_env: str = ""
    """The environment variable its key is read from by default
    (``NAME_API_KEY`` when empty)."""

    @property
    def key_variable(self) -> str:
        """The environment variable the key is read from by default."""
        return self.key_env or f"{self.name.upper()}_API_KEY"

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

    def adapter_class(self) -> type[ProviderAdapter]:
        """The adapter's class: its static methods need no client."""
        module, _, name = self.adapter.partition(":")
        found: type[ProviderAdapter] = getattr(importlib.import_module(module), name)
        return found

    def request_method(self, client: Any) -> Create:
        """``client``'s request method (``client.chat.completions.create``)."""
        target = client
        for part in self.request:
            target = getattr(target, part)
        method: Create = target
        return method

    def parse_response(self, body: Any) -> Any:
        """``body`` as the SDK's own response object (a ``ValueError`` if
        it is not one)."""
        module, _, name = self.response.partition(":")
        return getattr(importlib.import_module(module), name).model_validate(body)


def provider_row(name: str) -> Provider:
    """The table's row for ``name``; a ``ValueError`` lists the names."""
    row = PROVIDER_TABLE.get(name) if isinstance(name, str) else None
    if row is None:
        known = ", ".join(map(repr, PROVIDER_TABLE))
        raise ValueError(f"provider must be one of {known}, not {name!r}")
    return row


def routed(path: str) -> Provider | None:
    """The row whose requests end in ``path``, if any."""
    for row in PROVIDER_TABLE.values():
        if path.endswith(row.route):
            return row
    return None


def sdk_shaped(target: object, create: Callable[[Provider], Create]) -> None:
    """Give ``target`` every provider's request method, at the SDK's path.

    A stand-in client (a practice model, a recording's trial client)
    answers whichever provider's ``Chat`` talks to it:
    ``create(row)`` is what ``row.request`` calls.
    """
    for row in PROVIDER_TABLE.values():
        *path, method = row.request
        node = target
        for part in path:
            child = getattr(node, part, None)
            if child is None:
                child = SimpleNamespace()
                setattr(node, part, child)
            node = child
        setattr(node, method, create(row))


PROVIDER_TABLE: Final[Mapping[str, Provider]] = {
    row.name: row
    for row in (
        Provider(
            name="openai",
            sdk="openai",
            client="AsyncOpenAI",
            adapter="dsh_nb.models.openai_api:OpenAIAdapter",
            request=("chat", "completions", "create"),
            response="openai.types.chat:ChatCompletion",
            route="/chat/completions",
            label="OpenAI Chat Completions",
        ),
        Provider(
            name="anthropic",
            sdk="anthropic",
            client="AsyncAnthropic",
            adapter="dsh_nb.models.anthropic_api:AnthropicAdapter",
            request=("messages", "create"),
            response="anthropic.types:Message",
            route="/messages",
            label="Anthropic Messages",
        ),
    )
}
"""Every provider, by the name ``Chat(provider=...)`` takes."""

PROVIDERS: Final = tuple(PROVIDER_TABLE)
"""The provider names, in the table's order (``openai`` first: the default)."""
