"""Approvals for 2026-07-28 clients: the multi-round-trip ``tools/call``.

A 2026-07-28 server cannot send a client a request of its own; it answers
the call with ``input_required`` (an elicitation to fill in and an opaque
``requestState``), and the client calls again with the answer and the
state. Our pipeline call, though, is one coroutine awaiting its approval.
So the call keeps running here between the rounds: the first request
starts it; when its answerer asks, the request returns the question and
the call waits; the retry that carries the state hands the answer over and
waits again, for the result or the next question.

The state is a random 192-bit key of a call held in this process, usable
once and only by the agent (client) that made the call. A call whose
client never comes back is cancelled after ``ROUND_TIMEOUT_S``; its
approval settles ``cancelled`` (journaled as always). A retry that reaches
another process (stateless replicas) finds nothing and gets an error
result, never a second run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from mcp import types
    from mcp.server.context import ServerRequestContext

    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.pipeline.approval import ApprovalOutcome

__all__ = ["MAX_HELD", "MAX_HELD_PER_CLIENT", "ROUND_TIMEOUT_S", "Channel", "Rounds"]

_log = logging.getLogger(__name__)

ROUND_TIMEOUT_S: Final = 600.0
_APPROVAL: Final = "approval"
_EMPTY_FORM: Final[dict[str, Any]] = {"type": "object", "properties": {}}
#: Calls that may wait for an input round, per client and in all: a client
#: that asks without answering gets denials past these, not more memory.
MAX_HELD_PER_CLIENT: Final = 16
MAX_HELD: Final = 256
_ACTIONS: Final = {
    "accept": "allowed-once",
    "decline": "rejected",
    "cancel": "cancelled",
}


class Channel:
    """Questions from one call (its approval, its ``ToolContext.ask``) to the
    handler, answers back.

    A question is a key of the round's ``inputRequests`` (``approval`` or
    ``question``), a message and a form's schema; its answer is the
    client's raw ``ElicitResult``.
    """

    def __init__(self) -> None:
        self._questions: asyncio.Queue[
            tuple[str, str, dict[str, Any], asyncio.Future[object]]
        ] = asyncio.Queue()
        self._waiting: asyncio.Future[object] | None = None
        self.key = _APPROVAL

    async def ask(self, message: str) -> ApprovalOutcome:
        """Put an approval to the client; wait for its outcome."""
        response = await self.ask_form(message, _EMPTY_FORM, key=_APPROVAL)
        return outcome_of(response)  # type: ignore[return-value]

    async def ask_form(
        self, message: str, schema: dict[str, Any], *, key: str = "question"
    ) -> object:
        """Put a form to the client; wait for its raw answer."""
        answer: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        await self._questions.put((key, message, schema, answer))
        return await answer

    async def question(self) -> tuple[str, str, dict[str, Any]]:
        """The next question (the handler returns it to the client)."""
        key, message, schema, self._waiting = await self._questions.get()
        self.key = key
        return key, message, schema

    def answer(self, response: object) -> None:
        """Settle the question last returned with the client's answer."""
        waiting, self._waiting = self._waiting, None
        if waiting is not None and not waiting.done():
            waiting.set_result(response)


@dataclasses.dataclass(eq=False)
class _Held:
    name: str
    agent: Agent
    call: asyncio.Future[types.CallToolResult]
    channel: Channel
    expiry: asyncio.TimerHandle | None = None


def _retrieve(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()


def outcome_of(response: object) -> str:
    """An ``ElicitResult`` (or its dict) as an approval outcome."""
    action = getattr(response, "action", None)
    if action is None and isinstance(response, dict):
        action = response.get("action")
    return _ACTIONS.get(str(action), "unavailable")


class Rounds:
    """The calls of one server that wait for an input round."""

    def __init__(self, timeout_s: float = ROUND_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._held: dict[str, _Held] = {}

    @property
    def waiting(self) -> int:
        """How many calls wait for a client's answer."""
        return len(self._held)

    async def call(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        agent: Agent,
        start: Callable[[Channel], Awaitable[types.CallToolResult]],
    ) -> types.CallToolResult | types.InputRequiredResult:
        """One round: start or resume the call, until a result or a question."""
        from mcp import types

        if params.request_state is None:
            channel = Channel()
            held = _Held(
                params.name, agent, asyncio.ensure_future(start(channel)), channel
            )
        else:
            found = self._take(params.request_state, agent, params.name)
            if found is None:
                return types.CallToolResult(
                    content=[
                        types.TextContent(
                            type="text",
                            text="Error: this approval round is unknown or expired "
                            "(answered already, timed out, or sent to another "
                            "server); call the tool again",
                        )
                    ],
                    is_error=True,
                )
            held = found
            answers = params.input_responses or {}
            held.channel.answer(answers.get(held.channel.key))
        while True:
            asking = asyncio.ensure_future(held.channel.question())
            racing: set[asyncio.Future[Any]] = {held.call, asking}
            try:
                await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
            except BaseException:
                # The client went away mid-round: the call ends with it.
                asking.cancel()
                held.call.cancel()
                raise
            if held.call.done():
                asking.cancel()
                return held.call.result()
            if self._room_for(agent):
                return self._hold(held, *asking.result())
            # Too many calls wait already: no answer, so an approval is
            # denied (unavailable) and a question declined; nothing is held.
            held.channel.answer(None)

    def _room_for(self, agent: Agent) -> bool:
        """Whether one more call of ``agent`` may wait for an input round."""
        if len(self._held) >= MAX_HELD:
            _log.warning("%d calls wait for an input round; one more denied", MAX_HELD)
            return False
        mine = sum(1 for held in self._held.values() if held.agent is agent)
        if mine >= MAX_HELD_PER_CLIENT:
            _log.warning(
                "%d calls of client %r wait for an input round; one more denied",
                mine,
                agent.name,
            )
            return False
        return True

    def _take(self, state: str, agent: Agent, name: str) -> _Held | None:
        held = self._held.get(state)
        if held is None or held.agent is not agent or held.name != name:
            return None
        del self._held[state]
        if held.expiry is not None:
            held.expiry.cancel()
        return held

    def _hold(
        self, held: _Held, key: str, message: str, schema: dict[str, Any]
    ) -> types.InputRequiredResult:
        from mcp import types

        state = secrets.token_urlsafe(24)
        self._held[state] = held
        loop = asyncio.get_running_loop()
        held.expiry = loop.call_later(self.timeout_s, self._expire, state)
        return types.InputRequiredResult(
            input_requests={
                key: types.ElicitRequest(
                    params=types.ElicitRequestFormParams(
                        message=message,
                        requested_schema=schema,
                    )
                )
            },
            request_state=state,
        )

    def _expire(self, state: str) -> None:
        held = self._held.pop(state, None)
        if held is not None:
            # Nobody awaits the call any more: it ends as a denial, journaled.
            held.call.add_done_callback(_retrieve)
            held.channel.answer({"action": "cancel"})

    def close(self) -> None:
        """Cancel every held call (the server is stopping)."""
        for state in list(self._held):
            self._expire(state)
