"""One request to a model for a tool's ``ctx.sample``: text in, text out.

A tool that asks the model for help (``await ctx.sample(prompt)``) wants a
single answer, not a conversation: no tools, no history, nothing added to
the kernel's ``%%chat``. This goes through the same provider adapter a
``Chat`` step uses (:data:`~dsh_nb.models.providers.PROVIDER_TABLE`), so
every provider ``Chat`` speaks is one a tool can sample from, over the
official SDK client the door configured.
"""

from __future__ import annotations

from typing import Any

from dsh_nb.models.providers import provider_row
from dsh_nb.models.view import ChatView

__all__ = ["sample_text"]


async def sample_text(
    client: Any,
    *,
    provider: str,
    model: str,
    prompt: str,
    system: str | None = None,
    max_tokens: int | None = None,
) -> str:
    """Send ``prompt`` (and ``system``) to ``model``; return its text.

    Parameters
    ----------
    client
        The provider's async SDK client (``openai.AsyncOpenAI``,
        ``anthropic.AsyncAnthropic``), configured with its key and URL.
    provider
        A name in :data:`~dsh_nb.models.providers.PROVIDERS`.
    max_tokens
        The reply's limit; the provider's default when None (Anthropic's
        adapter sends 4096, which its API requires).

    Raises
    ------
    ValueError
        An unknown provider, an empty model name, or a bad ``max_tokens``.
    Exception
        Whatever the SDK raises for a failed request (describe it with
        :func:`~dsh_nb.models.chat.describe_error`).
    """
    row = provider_row(provider)
    if not model:
        raise ValueError("sample_text() needs a model name")
    options: dict[str, Any] = {}
    if max_tokens is not None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
            raise ValueError(f"max_tokens must be an int, not {max_tokens!r}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be 1 or more, not {max_tokens}")
        options["max_tokens"] = max_tokens
    adapter = row.make_adapter(client, request_options=options)
    completion = await adapter.complete(
        model=model,
        system=system or "",
        messages=[adapter.user_message(prompt)],
        tools=[],
        stream=False,
        view=ChatView(),
    )
    return completion.text
