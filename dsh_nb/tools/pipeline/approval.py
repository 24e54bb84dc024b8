"""The approval seam: how an ``Ask`` decision reaches a person.

The service fails closed. Answerers (a notebook button, a CLI prompt, a test
script) form a waterfall; with none, or with one that raises or returns
nonsense, the outcome is ``unavailable`` and the call is denied. Every request
leaves an audit pair, ``approval/asked`` then ``approval/decided``, on the
agent's session log, so what was asked and what was answered is never lost.

The service also says *how* it decided (an :class:`ApprovalDecision`): by an
answerer, by the ``never`` policy, by an answerer's time limit, by the call's
abort, with no answerer, or by an answerer's failure. The pipeline words its
denial from that record; it never works out again which rule applied.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from dsh_nb.tools._disposer import Disposer
from dsh_nb.tools.errors import ApprovalError
from dsh_nb.tools.pipeline.waterfall import ListenerList, passthrough, run_waterfall
from dsh_nb.tools.values.outcome import ApprovalOutcome

if TYPE_CHECKING:
    from dsh_nb.tools.audit.session import Agent, SessionLog
    from dsh_nb.tools.values.refs import SignalRef

__all__ = [
    "DECIDERS",
    "OUTCOMES",
    "POLICIES",
    "ApprovalDecision",
    "ApprovalOutcome",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalService",
    "DecidedBy",
    "consult",
    "effective_policy",
    "set_approval_policy",
]

ApprovalPolicy = Literal["ask", "never"]
OUTCOMES: Final = frozenset({"allowed-once", "rejected", "cancelled", "unavailable"})
POLICIES: Final = ("ask", "never")
DecidedBy = Literal["answerer", "policy", "timeout", "abort", "no-answerer", "failure"]
DECIDERS: Final[tuple[DecidedBy, ...]] = get_args(DecidedBy)
# What an answerer may say of its own answer; the others are the service's.
_CLAIMABLE: Final = frozenset({"answerer", "timeout", "abort"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalDecision:
    """An ask's outcome and how it was reached, as the service recorded it.

    Attributes
    ----------
    outcome
        ``allowed-once``, ``rejected``, ``cancelled`` or ``unavailable``:
        the outcome the audit event ``approval/decided`` carries.
    decided_by
        ``answerer`` (an answerer gave it: a person, a script, a client),
        ``policy`` (the ``never`` policy; nobody was asked), ``timeout``
        (an answerer's time limit ran out), ``abort`` (the call's abort
        signal fired first), ``no-answerer`` (the request reached the end of
        the answerers unanswered) or ``failure`` (an answerer raised or
        returned something that is not an outcome).

    An answerer may return one of these instead of a bare outcome, to say
    that its ``cancelled`` was a timeout or an abort; it may claim only
    ``answerer``, ``timeout`` or ``abort``.
    """

    outcome: ApprovalOutcome
    decided_by: DecidedBy = "answerer"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """One pending question: may ``agent`` run ``tool_name`` this once?"""

    agent: Agent
    tool_name: str
    call_id: str | None = None
    reason: str | None = None
    signal: SignalRef | None = None


async def consult(service: object, request: ApprovalRequest) -> object:
    """Ask a mounted service, by ``decide`` only where the service has it.

    The contract's service has ``request(req)`` returning an outcome, and a
    service written to it must keep working. ``decide`` (which also says how
    the ask was decided) is used when the service defines it at least as
    specifically as ``request``: a subclass that overrides only ``request``
    means its ``request``. What comes back is vetted by the caller; an
    outcome from ``request`` becomes a decision by an answerer.
    """
    decides = _defined_at(service, "decide")
    if decides != float("inf") and decides <= _defined_at(service, "request"):
        return await service.decide(request)  # type: ignore[attr-defined]
    answer = service.request(request)  # type: ignore[attr-defined]
    if hasattr(answer, "__await__"):
        answer = await answer
    if type(answer) is str and answer in OUTCOMES:
        return ApprovalDecision(outcome=answer)  # type: ignore[arg-type]
    return answer


def _defined_at(service: object, name: str) -> float:
    """How specific ``service``'s ``name`` is: 0 on the instance, the MRO
    index on a class, infinity when it has none."""
    if name in getattr(service, "__dict__", ()):
        return 0
    for depth, klass in enumerate(type(service).__mro__, start=1):
        if name in vars(klass):
            return depth
    return float("inf")


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
    # A service written to the contract may have no default of its own.
    default = getattr(service, "default_policy", "ask")
    return default if default in POLICIES else "ask"  # type: ignore[return-value]


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
        return (await self.decide(request)).outcome

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        """Ask, audit and return the outcome with how it was reached."""
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
            decision = await self._decide(request)
        except (asyncio.CancelledError, KeyboardInterrupt):
            # The caller is going away; the audit pair must still close.
            session.append(
                "approval/decided", {"id": request_id, "outcome": "cancelled"}
            )
            raise
        session.append(
            "approval/decided", {"id": request_id, "outcome": decision.outcome}
        )
        return decision

    async def _decide(self, request: ApprovalRequest) -> ApprovalDecision:
        signal = request.signal
        if signal is not None and signal.aborted:
            return ApprovalDecision(outcome="cancelled", decided_by="abort")
        if effective_policy(self, request.agent.session) == "never":
            return ApprovalDecision(outcome="rejected", decided_by="policy")
        answerers = self._answerers.for_scope(request.agent)
        return await _race(_answer(answerers, request), signal)


async def _answer(
    answerers: tuple[Callable[..., Any], ...], request: ApprovalRequest
) -> ApprovalDecision:
    """Run the answerers; anything they raise (even SystemExit) fails closed.

    A BaseException left in a task would be re-raised out of the event
    loop itself and take the kernel down. Sync answerers run when the chain
    is built, so building it happens in here too, inside the sub-task.
    """
    ended = False

    async def end_of_chain() -> object:
        nonlocal ended
        ended = True
        return "unavailable"

    try:
        answer = await run_waterfall(answerers, (request,), end_of_chain, passthrough)
    except asyncio.CancelledError:
        raise
    except KeyboardInterrupt:
        # An answerer that was interrupted: in this sub-task the interrupt
        # would leave the event loop and end the kernel; the ask is cancelled.
        return ApprovalDecision(outcome="cancelled")
    except BaseException:  # noqa: BLE001 - a broken answerer never escapes
        return ApprovalDecision(outcome="unavailable", decided_by="failure")
    return _vetted(answer, ended)


def _vetted(answer: object, ended: bool) -> ApprovalDecision:
    """What the answerers' ``answer`` decides; nonsense fails closed.

    Exact ``str`` only: a subclass could hash or compare in hostile ways
    and would not be lossless JSON in the audit event.
    """
    if type(answer) is str and answer in OUTCOMES:
        if ended and answer == "unavailable":
            # The chain's own default came back: nobody answered.
            return ApprovalDecision(outcome="unavailable", decided_by="no-answerer")
        return ApprovalDecision(outcome=answer)  # type: ignore[arg-type]
    if (
        type(answer) is ApprovalDecision
        and type(answer.outcome) is str
        and answer.outcome in OUTCOMES
        and type(answer.decided_by) is str
        and answer.decided_by in _CLAIMABLE
    ):
        return answer
    return ApprovalDecision(outcome="unavailable", decided_by="failure")


async def _race(
    answer: Awaitable[ApprovalDecision], signal: SignalRef | None
) -> ApprovalDecision:
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
        either: set[asyncio.Future[Any]] = {task, aborted}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if undo is not None:
            undo()
        if not task.done():
            task.cancel()
    if aborted.done():
        task.add_done_callback(_discard)
        return ApprovalDecision(outcome="cancelled", decided_by="abort")
    if task.cancelled():
        return ApprovalDecision(outcome="cancelled")
    if task.exception() is not None:
        return ApprovalDecision(outcome="unavailable", decided_by="failure")
    return task.result()


def _discard(task: asyncio.Future[Any]) -> None:
    # A late answer or failure after a cancel is dropped silently (contract).
    if not task.cancelled():
        task.exception()
