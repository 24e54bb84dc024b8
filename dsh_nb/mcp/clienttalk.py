"""A connected server talks to the call that caused it (``connect_mcp``).

The other way round from :mod:`.talk`: while one of our calls waits on a
connected server's tool, the server may report progress, send log
messages and ask (``elicitation/create``). Each goes to the
``ToolContext`` of that call, so it shows in the call's card (a notebook),
its journal, or its own MCP client (a served registry that connects to
another server), and a question reaches whoever answers that call's
questions: the notebook's person, or a decline.

Each message reaches the call that caused it, also when several calls are
in flight on one connection:

* progress by the request's ``progressToken`` (the SDK hands each call its
  own callback);
* a log message or a question by the request it is related to. Over
  Streamable HTTP a server sends those on the response stream of the
  request that caused them, and the SDK runs our callback in the context
  of the task that sent that request, so the call's ``ToolContext`` is the
  current one there (a message that came on no request's stream, such as
  the session's GET stream, has none);
* a message related to no request is the session's: with one call in
  flight it is that call's; with several (or with stdio, whose wire says
  nothing about which request a message belongs to) nobody can tell, so
  it is not guessed: a log line goes to the ``dsh_nb.mcp.clienttalk``
  logger, a question is declined. With no call in flight the same holds.

The connection declares elicitation to the server, and opts in to log
messages at every level on a 2026-07-28 connection (where they arrive
only for requests that ask); it declares no sampling (no door offers a
model to a tool yet).
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
#: A server's log level as a ``logging`` level, for a line no call owns.
_PY_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


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
        return {
            "logging_callback": self._on_log,
            "elicitation_callback": self._on_ask,
            "log_level": "debug",  # the 2026-07-28 opt-in; the card folds lines
        }

    def _owner(self) -> ToolContext | None:
        """The call in flight the server's current message belongs to."""
        ctx = _current()
        if ctx is not None and any(call is ctx for call in self._calls):
            return ctx  # it came on that call's own request stream
        return self._calls[0] if len(self._calls) == 1 else None

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        data = params.data
        text = data if isinstance(data, str) else repr(data)
        level = params.level if params.level in LEVELS else "info"
        if params.logger:
            text = f"{params.logger}: {text}"
        owner = self._owner()
        if owner is None:
            _log.log(_PY_LEVELS.get(level, logging.INFO), "%s", text)
            return
        owner.log(text, level=level)

    async def _on_ask(self, context: Any, params: Any) -> types.ElicitResult:
        from mcp import types

        schema = getattr(params, "requested_schema", None)
        owner = self._owner()
        if owner is None or not isinstance(schema, dict):
            if owner is None and self._calls:
                _log.warning(
                    "a server asked %r with %d calls in flight and no sign of "
                    "which one it belongs to: declined",
                    getattr(params, "message", ""),
                    len(self._calls),
                )
            return types.ElicitResult(action="decline")
        try:
            answer = await owner.ask_form(params.message, schema)
        except Exception as exc:  # noqa: BLE001 - a failed ask is a decline
            _log.warning("a server's question failed: %s", exc)
            return types.ElicitResult(action="decline")
        if answer.action == "accept":
            return types.ElicitResult(action="accept", content=answer.value)
        return types.ElicitResult(action=answer.action)
