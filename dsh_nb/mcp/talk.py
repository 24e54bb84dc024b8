"""A served call's ``ToolContext``, spoken over MCP to the client that called.

The server's door gives every ``tools/call`` one :class:`McpTalk` (a hearer
of the call's context, see :mod:`dsh_nb.tools.context.toolcontext`):

* progress becomes ``notifications/progress``, only when the request
  carried a ``progressToken`` (the SDK's ``report_progress`` knows), at
  the context's throttled rate;
* a log line (``ctx.log``, a print, a ``logging`` record) becomes
  ``notifications/message`` at or above the level the client chose with
  ``logging/setLevel`` (every level until it chooses; a 2026-07-28 client
  opts in per request, and the SDK filters for it);
* ``ask`` becomes ``elicitation/create`` with the question's form where the
  client declared elicitation, else a decline; a 2026-07-28 client gets
  the form in an ``input_required`` round instead (:mod:`.rounds`);
* ``sample`` becomes ``sampling/createMessage`` where the client declared
  sampling, else :class:`~dsh_nb.tools.SamplingUnavailable` names why.

Notifications are sent in order, one after the other, and the handler
waits for the last of them (briefly) before it answers the call, so a
client sees a call's progress before its result.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.tools.context import Answer, SamplingUnavailable
from dsh_nb.tools.context.values import LEVELS
from dsh_nb.tools.errors import error_message

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from dsh_nb.tools.context import (
        LogLine,
        Progress,
        Question,
        SampleRequest,
        ToolContext,
    )

__all__ = ["LogLevels", "McpTalk"]

_log = logging.getLogger(__name__)
_DRAIN_S: Final = 2.0
_DEFAULT_MAX_TOKENS: Final = 1024


def _plain(method: Any) -> Any:
    """The SDK method under its 2026 deprecation wrapper (no warning per call)."""
    return getattr(method, "__wrapped__", method)


class LogLevels:
    """The level each client chose with ``logging/setLevel`` (handshake era)."""

    def __init__(self) -> None:
        self._chosen: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

    async def set_level(self, ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
        """The ``logging/setLevel`` handler."""
        from mcp import types

        key = getattr(ctx.session, "_connection", None)
        if key is not None:
            self._chosen[key] = LEVELS.index(str(params.level))
        return types.EmptyResult()

    def allows(self, ctx: ServerRequestContext[Any, Any], level: str) -> bool:
        key = getattr(ctx.session, "_connection", None)
        chosen = self._chosen.get(key, 0) if key is not None else 0
        return LEVELS.index(level) >= chosen


class McpTalk:
    """One served call's hearer: its request, and the client behind it."""

    def __init__(
        self,
        ctx: ServerRequestContext[Any, Any],
        levels: LogLevels,
        channel: Any = None,
    ) -> None:
        self.ctx = ctx
        self.levels = levels
        self.channel = channel  # a 2026-07-28 input round (rounds.Channel)
        self._tail: asyncio.Future[None] | None = None

    # --- notifications, in order ---------------------------------------------

    def _send(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._tail = asyncio.ensure_future(self._after(self._tail, coro))

    @staticmethod
    async def _after(
        previous: asyncio.Future[None] | None, coro: Coroutine[Any, Any, Any]
    ) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        try:
            await coro
        except Exception as exc:  # noqa: BLE001 - a gone client is no failure
            _log.debug("notification not delivered: %s", error_message(exc))

    async def drain(self) -> None:
        """Wait (briefly) until what was said has been sent."""
        tail = self._tail
        if tail is not None and not tail.done():
            await asyncio.wait({tail}, timeout=_DRAIN_S)

    def progress(self, tool: ToolContext, report: Progress) -> None:
        session = self.ctx.session
        self._send(session.report_progress(report.done, report.total, report.message))

    def log(self, tool: ToolContext, line: LogLine) -> None:
        if not self.levels.allows(self.ctx, line.level):
            return
        session = self.ctx.session
        send = _plain(type(session).send_log_message)
        self._send(
            send(
                session,
                line.level,
                line.text,
                logger=line.logger or tool.name,
                related_request_id=self.ctx.request_id,
            )
        )

    # --- questions and samples -----------------------------------------------

    async def ask(self, tool: ToolContext, question: Question) -> Answer:
        from dsh_nb.mcp.elicit import can_elicit

        if self.channel is not None:
            response = await self.channel.ask_form(question.message, question.schema)
            return _answer(response)
        if not can_elicit(self.ctx):
            return Answer("decline")
        result = await self.ctx.session.elicit_form(
            question.message,
            question.schema,
            related_request_id=self.ctx.request_id,
        )
        return _answer(result)

    async def sample(self, tool: ToolContext, request: SampleRequest) -> str:
        from mcp import types

        session = self.ctx.session
        capabilities = (
            session.client_params.capabilities if session.client_params else None
        )
        if capabilities is None or capabilities.sampling is None:
            raise SamplingUnavailable(
                f'tool "{tool.name}" asked the model, but the MCP client declared '
                "no sampling capability"
            )
        if not session.can_send_request or self.ctx.request_id is None:
            raise SamplingUnavailable(
                f'tool "{tool.name}" asked the model, but this request cannot '
                "reach the MCP client (a stateless server has no way back)"
            )
        create = _plain(type(session).create_message)
        result = await create(
            session,
            [
                types.SamplingMessage(
                    role="user",
                    content=types.TextContent(type="text", text=request.prompt),
                )
            ],
            max_tokens=request.max_tokens or _DEFAULT_MAX_TOKENS,
            system_prompt=request.system,
            related_request_id=self.ctx.request_id,
        )
        content = result.content
        blocks = content if isinstance(content, list) else [content]
        return "".join(getattr(b, "text", "") for b in blocks)


def _answer(response: object) -> Answer:
    action = getattr(response, "action", None)
    content = getattr(response, "content", None)
    if isinstance(response, dict):
        action, content = response.get("action"), response.get("content")
    if action == "accept":
        return Answer("accept", dict(content) if isinstance(content, dict) else {})
    if action in ("decline", "cancel"):
        return Answer(action)
    return Answer("decline")
