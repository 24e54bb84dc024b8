"""The approval seam: how an ``Ask`` decision reaches a person.

The service fails closed. Answerers (a notebook button, a CLI prompt, a test
script) form a waterfall; with none, or with one that raises or returns
nonsense, the outcome is ``unavailable`` and the call is denied. Every request
leaves an audit pair, ``approval/asked`` then ``approval/decided``, on the
agent's session log, so what was asked and what was answered is never lost.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from dsh_nb.tools._disposer import Disposer
from dsh_nb.tools._waterfall import ListenerList, passthrough, run_waterfall
from dsh_nb.tools.errors import ApprovalError

if TYPE_CHECKING:
    from dsh_nb.tools.audit.session import Agent, SessionLog
    from dsh_nb.tools.running.abort import AbortSignal

__all__ = [
    "OUTCOMES",
    "POLICIES",
    "ApprovalOutcome",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalService",
    "effective_policy",
    "set_approval_policy",
]

ApprovalOutcome = Literal["allowed-once", "rejected", "cancelled", "unavailable"]
ApprovalPolicy = Literal["ask", "never"]
OUTCOMES: Final = frozenset({"allowed-once", "rejected", "cancelled", "unavailable"})
POLICIES: Final = ("ask", "never")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """One pending question: may ``agent`` run ``tool_name`` this once?"""

    agent: Agent
    tool_name: str
    call_id: str | None = None
    reason: str | None = None
    signal: AbortSignal | None = None


def _check_policy(policy: object) -> ApprovalPolicy:
    if policy not in POLICIES or not isinstance(policy, str):
        raise ValueError('approval policy must be one of "ask" or "never"')
    return policy


def set_approval_policy(session: SessionLog, policy: ApprovalPolicy) -> None:
    """Record a policy override on the session (the last one wins)."""
    session.append("approval/policy", {"policy": _check_policy(policy)})


def effective_policy(service: ApprovalService, session: SessionLog) -> ApprovalPolicy:
    """The session's last ``approval/policy``, else the service default."""
    event = session.last("approval/policy")
    if event is not None:
        policy = event["data"].get("policy")
        if policy in POLICIES:
            return policy  # type: ignore[no-any-return]
    return service.default_policy


async def _unavailable() -> Any:
    return "unavailable"


class ApprovalService:
    """Routes ``Ask`` decisions to registered answerers; fails closed."""

    def __init__(self, policy: ApprovalPolicy = "ask") -> None:
        self.default_policy: ApprovalPolicy = _check_policy(policy)
        self._answerers: ListenerList[Callable[..., Any]] = ListenerList()

    def on_request(
        self,
        answerer: Callable[..., Any],
        scope: object | None = None,
        prepend: bool = False,
    ) -> Disposer:
        """Add ``answerer(request, next)``; it returns an outcome or ``next()``."""
        return self._answerers.add(
            answerer, scope=scope, prepend=prepend, seam="approval/request"
        )

    def drop_scope(self, scope: object) -> None:
        """Remove every answerer registered on behalf of ``scope``."""
        self._answerers.drop_scope(scope)

    async def request(self, request: ApprovalRequest) -> ApprovalOutcome:
        """Ask, audit and return the outcome; never waits past an abort."""
        session = request.agent.session
        if not session.in_open_turn():
            raise ApprovalError(
                f'approval for tool "{request.tool_name}" was requested outside an '
                "open turn; start one with agent.session.start_turn()"
            )
        request_id = uuid.uuid4().hex
        asked: dict[str, Any] = {"id": request_id, "toolName": request.tool_name}
        if request.call_id is not None:
            asked["callId"] = request.call_id
        if request.reason is not None:
            asked["reason"] = request.reason
        session.append("approval/asked", asked)
        try:
            outcome = await self._decide(request)
        except (asyncio.CancelledError, KeyboardInterrupt):
            # The caller is going away; the audit pair must still close.
            session.append(
                "approval/decided", {"id": request_id, "outcome": "cancelled"}
            )
            raise
        session.append("approval/decided", {"id": request_id, "outcome": outcome})
        return outcome

    async def _decide(self, request: ApprovalRequest) -> ApprovalOutcome:
        signal = request.signal
        if signal is not None and signal.aborted:
            return "cancelled"
        if effective_policy(self, request.agent.session) == "never":
            return "rejected"
        answerers = self._answerers.for_scope(request.agent)

        def answer() -> Awaitable[object]:
            return run_waterfall(answerers, (request,), _unavailable, passthrough)

        outcome = await _race(_contained(answer), signal)
        # Exact str only: a subclass could hash or compare in hostile ways
        # and would not be lossless JSON in the audit event.
        if type(outcome) is str and outcome in OUTCOMES:
            return outcome  # type: ignore[return-value]
        return "unavailable"


async def _contained(answer: Callable[[], Awaitable[object]]) -> object:
    """Run the answerers; anything they raise (even SystemExit) fails closed.

    A BaseException left in a task would be re-raised out of the event
    loop itself and take the kernel down. Sync answerers run when the chain
    is built, so building it happens in here too, inside the sub-task.
    """
    try:
        return await answer()
    except asyncio.CancelledError:
        raise
    except KeyboardInterrupt:
        # An answerer that was interrupted: in this sub-task the interrupt
        # would leave the event loop and end the kernel; the ask is cancelled.
        return "cancelled"
    except BaseException:  # noqa: BLE001 - a broken answerer never escapes
        return "unavailable"


async def _race(answer: Any, signal: AbortSignal | None) -> object:
    """Await the answerers in a sub-task, unless ``signal`` aborts first.

    The sub-task keeps an answerer's own ``CancelledError`` (a closed prompt)
    apart from the caller being cancelled: the first is ``cancelled``, the
    second propagates.
    """
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(answer)
    aborted: asyncio.Future[None] = loop.create_future()

    def on_abort(_reason: object) -> None:
        if not aborted.done():
            aborted.set_result(None)

    undo = signal.add_callback(on_abort) if signal is not None else None
    try:
        if signal is not None and signal.aborted:
            on_abort(None)
        await asyncio.wait({task, aborted}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if undo is not None:
            undo()
        if not task.done():
            task.cancel()
    if aborted.done():
        task.add_done_callback(_discard)
        return "cancelled"
    if task.cancelled():
        return "cancelled"
    if task.exception() is not None:
        return "unavailable"
    return task.result()


def _discard(task: asyncio.Future[Any]) -> None:
    # A late answer or failure after a cancel is dropped silently (contract).
    if not task.cancelled():
        task.exception()
