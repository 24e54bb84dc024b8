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

A sampling request (``sampling/createMessage``) becomes its call's
``ctx.sample``: in a notebook the kernel's ``DshChat`` model after an
approval, drawn in the call's card; through a served registry, its own
client's model. Where the call's door has no model, or it was refused,
the server gets an MCP error that says why.

A question or a sample runs in its call's context variables: a stdio
server's request arrives in the connection's own task, and a prompt shown
from there would land under the cell that connected, not under the call.

The connection declares elicitation and sampling to the server, and opts
in to log messages at every level on a 2026-07-28 connection (where they
arrive only for requests that ask).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

from dsh_nb.tools.context import (
    SamplingUnavailable,
    ToolContextError,
    current_tool_context,
)
from dsh_nb.tools.context.values import LEVELS
from dsh_nb.tools.errors import error_message

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
#: What a sample's result names as its model: the door's model answered,
#: and this layer does not know which one it was.
_MODEL: Final = "dsh_nb"
T = TypeVar("T")


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
        #: Each call's context variables (a kernel's parent message among
        #: them), so what a server asks shows under the cell of its call.
        self._scopes: dict[int, contextvars.Context] = {}

    async def calling(
        self, call_tool: Callable[..., Awaitable[Any]], name: str, arguments: Any
    ) -> Any:
        """``call_tool(name, arguments)``, heard by the current call's context."""
        ctx = _current()
        if ctx is None:
            return await call_tool(name, arguments)
        self._calls.append(ctx)
        self._scopes[id(ctx)] = contextvars.copy_context()
        try:
            on_progress = functools.partial(_progress, ctx)
            return await call_tool(name, arguments, progress_callback=on_progress)
        finally:
            self._calls.remove(ctx)
            if not any(call is ctx for call in self._calls):
                self._scopes.pop(id(ctx), None)

    async def _in_call(self, ctx: ToolContext, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` with ``ctx``'s call's context variables.

        A stdio server's request arrives in the connection's own task, whose
        context is that of the cell that connected: a prompt displayed from
        there would land under that cell, not under the call's card.
        """
        scope = self._scopes.get(id(ctx))
        if scope is None:
            return await work
        # The task copies the context current when it is made: the call's.
        task: asyncio.Future[T] = scope.run(asyncio.ensure_future, work)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            raise

    def callbacks(self) -> dict[str, Any]:
        """The SDK ``Client``'s keyword arguments for the server's messages."""
        return {
            "logging_callback": self._on_log,
            "elicitation_callback": self._on_ask,
            "sampling_callback": self._on_sample,
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
            answer = await self._in_call(owner, owner.ask_form(params.message, schema))
        except Exception as exc:  # noqa: BLE001 - a failed ask is a decline
            _log.warning("a server's question failed: %s", exc)
            return types.ElicitResult(action="decline")
        if answer.action == "accept":
            return types.ElicitResult(action="accept", content=answer.value)
        return types.ElicitResult(action=answer.action)

    async def _on_sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        from mcp import types

        ctx = self._owner()
        if ctx is None:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message="the client cannot tell which of its calls this "
                "sampling request belongs to (none is in flight), so no model "
                "is asked",
            )
        try:
            prompt = _prompt(params.messages)
            text = await self._in_call(
                ctx,
                ctx.sample(
                    prompt, system=params.system_prompt, max_tokens=params.max_tokens
                ),
            )
        except SamplingUnavailable as exc:
            # The spec's code for a sample the client's user did not allow.
            return types.ErrorData(code=-1, message=str(exc))
        except (TypeError, ValueError) as exc:
            return types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))
        except Exception as exc:  # noqa: BLE001 - the server hears why; we go on
            _log.warning("a server's sampling request failed: %s", exc)
            return types.ErrorData(
                code=types.INTERNAL_ERROR,
                message=f"the client's model request failed: {error_message(exc)}",
            )
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=text),
            model=_MODEL,
            stop_reason="endTurn",
        )


def _prompt(messages: Sequence[Any]) -> str:
    """The text ``ctx.sample`` sends for a server's messages.

    One user message is the prompt as it is; a conversation is written out
    turn by turn. Only text is supported: an image or audio block is a
    ``ValueError`` naming it, answered to the server as bad params.
    """
    parts: list[tuple[str, str]] = []
    for message in messages:
        content = message.content
        blocks = content if isinstance(content, list) else [content]
        texts = []
        for block in blocks:
            kind = getattr(block, "type", None)
            if kind != "text":
                raise ValueError(
                    f"this client samples text only; a {kind!r} block was sent"
                )
            texts.append(block.text)
        parts.append((str(message.role), "\n".join(texts)))
    if not parts:
        raise ValueError("a sampling request needs at least one message")
    if len(parts) == 1 and parts[0][0] == "user":
        return parts[0][1]
    return "\n\n".join(f"{role}: {text}" for role, text in parts)
