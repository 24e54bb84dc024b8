"""A connected server talks to the call that caused it (``connect_mcp``).

The other way round from :mod:`.talk`: while one of our calls waits on a
connected server's tool, the server may report progress, send log
messages and ask (``elicitation/create``). Each goes to the
``ToolContext`` of that call, so it shows in the call's card (a notebook),
its journal, or its own MCP client (a served registry that connects to
another server), and a question reaches whoever answers that call's
questions: the notebook's person, or a decline.

Progress carries the request's token, so it reaches exactly its call. Log
messages and elicitations are the session's: they go to the call now in
flight on this connection (the latest one, when several are); with no
call in flight a log message is dropped and an elicitation declined. The
connection declares elicitation to the server; it declares no sampling
(no door offers a model to a tool yet).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.tools.context import ToolContextError, current_tool_context
from dsh_nb.tools.context.values import LEVELS

if TYPE_CHECKING:
    from mcp import types

    from dsh_nb.tools.context import ToolContext

__all__ = ["ServerTalk"]

_log = logging.getLogger(__name__)


def _current() -> ToolContext | None:
    try:
        return current_tool_context()
    except ToolContextError:
        return None


async def _progress(
    ctx: ToolContext, done: float, total: float | None, message: str | None
) -> None:
    ctx.progress(done, total, message)


class ServerTalk:
    """One connection's calls in flight, and the callbacks that reach them."""

    def __init__(self) -> None:
        self._calls: list[ToolContext] = []

    async def calling(
        self, call_tool: Callable[..., Awaitable[Any]], name: str, arguments: Any
    ) -> Any:
        """``call_tool(name, arguments)``, heard by the current call's context."""
        ctx = _current()
        if ctx is None:
            return await call_tool(name, arguments)
        self._calls.append(ctx)
        try:
            on_progress = functools.partial(_progress, ctx)
            return await call_tool(name, arguments, progress_callback=on_progress)
        finally:
            self._calls.remove(ctx)

    def callbacks(self) -> dict[str, Any]:
        """The SDK ``Client``'s keyword arguments for the server's messages."""
        return {"logging_callback": self._on_log, "elicitation_callback": self._on_ask}

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        if not self._calls:
            return
        data = params.data
        text = data if isinstance(data, str) else repr(data)
        level = params.level if params.level in LEVELS else "info"
        if params.logger:
            text = f"{params.logger}: {text}"
        self._calls[-1].log(text, level=level)

    async def _on_ask(self, context: Any, params: Any) -> types.ElicitResult:
        from mcp import types

        schema = getattr(params, "requested_schema", None)
        if not self._calls or not isinstance(schema, dict):
            return types.ElicitResult(action="decline")
        try:
            answer = await self._calls[-1].ask_form(params.message, schema)
        except Exception as exc:  # noqa: BLE001 - a failed ask is a decline
            _log.warning("a server's question failed: %s", exc)
            return types.ElicitResult(action="decline")
        if answer.action == "accept":
            return types.ElicitResult(action="accept", content=answer.value)
        return types.ElicitResult(action=answer.action)
