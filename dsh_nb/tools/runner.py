"""``CallRunner``: the one way a door runs a call.

A door is whatever receives a call from outside: a cell (``%call``), a model
(``Chat``, ``dispatch``), an MCP client, an evaluation. Each used to carry
its own copy of the path below, and the copies drifted apart. Now every door
hands the runner a :class:`DoorCall` and gets a :class:`CallAnswer` back:

1. the call gets an internal id that no other call in flight has, whatever
   the wire id (a model may repeat ids, leave them out, or guess another
   door's); approvals and cards are keyed by it, the door answers with the
   wire id;
2. a call the door cannot run (its arguments never parsed, or it names a
   tool the door does not offer) is refused and journaled, before any
   policy sees it;
3. everything else runs through ``registry.run`` inside the agent's turn
   (opened here unless the caller holds one);
4. a :class:`CallView`, if the door or the runner supplies one, is told
   how the call began and ended; a view that raises is contained;
5. what the tool tells and asks while it runs (its ``ToolContext``) goes
   to the call's *hearers*: the view, the door's ``talk`` and the
   runner's (:meth:`CallRunner.talk_for`); see
   :mod:`dsh_nb.tools.context.toolcontext` for what a hearer may offer.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections.abc import Awaitable, Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from dsh_nb.tools.audit import journal
from dsh_nb.tools.context.binding import hearing
from dsh_nb.tools.errors import HarnessError, ToolNotFoundError, error_message
from dsh_nb.tools.jsonvalue import ABSENT, NotJsonError, snapshot_json
from dsh_nb.tools.pipeline.results import error_result, finalize
from dsh_nb.tools.values.execution import (
    ToolExecutionInput,
    ToolExecutionResult,
    text_result,
)
from dsh_nb.tools.values.outcome import ToolOutcome

if TYPE_CHECKING:
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.registry import ToolRegistry
    from dsh_nb.tools.running.abort import AbortSignal
    from dsh_nb.tools.values.execution import ToolExecutionToken
    from dsh_nb.tools.values.run import ToolRun

__all__ = [
    "REFUSED",
    "UNRUN",
    "VISIBLE",
    "CallAnswer",
    "CallRunner",
    "CallTicket",
    "CallView",
    "DoorCall",
    "answer_calls",
    "record_unrun",
    "run_together",
]

_log = logging.getLogger("dsh_nb.tools")

#: The outcome of a call whose arguments never parsed.
UNRUN: Final = ToolOutcome(status="error", stage="arguments")
#: The outcome of a call to a tool the door does not offer.
REFUSED: Final = ToolOutcome(status="error", stage="input")


def record_unrun(
    agent: Agent,
    *,
    call_id: str,
    name: str,
    arguments: object,
    result: ToolExecutionResult,
    outcome: ToolOutcome = UNRUN,
) -> ToolExecutionResult:
    """Journal a call that never reached the pipeline, and return its result.

    A model's call whose arguments did not parse is ``tool/call`` then
    ``tool/result`` with status ``error`` at stage ``arguments``; a call a
    door refused (a tool it does not offer) is stage ``input``.
    ``arguments`` is logged as given when it is lossless JSON (the raw
    text a model sent, say) and left out otherwise.
    """
    try:
        frozen: object = snapshot_json(arguments)
    except NotJsonError:
        frozen = ABSENT
    session = agent.session
    journal.record_call(session, call_id, name, frozen)
    final = finalize(result, call_id)
    journal.record_result(session, final, outcome)
    return final


@dataclass(frozen=True, slots=True, kw_only=True)
class DoorCall:
    """One call as a door received it.

    ``wire_id`` is the id the door answers with (a model's ``tool_call_id``,
    an MCP request); ``error`` is set when the arguments never parsed, and
    is then the text the caller gets.
    """

    name: str
    arguments: Any
    wire_id: str = ""
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CallTicket:
    """A call the runner has accepted: what a view is built from."""

    call_id: str
    call: DoorCall
    agent: Agent
    door: str

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def arguments(self) -> Any:
        return self.call.arguments


@dataclass(frozen=True, slots=True, kw_only=True)
class CallAnswer:
    """One call's result, the core's outcome, and both ids."""

    call_id: str
    wire_id: str
    result: ToolExecutionResult
    outcome: ToolOutcome


class CallView(Protocol):
    """What a door shows of one call (a card, a panel row, nothing).

    ``begin`` comes first, then exactly one of ``refused``, ``settled``
    (the pipeline's answer) or ``interrupted`` (the call was cancelled).
    """

    def begin(self, ticket: CallTicket) -> None: ...

    def refused(self, result: ToolExecutionResult, outcome: ToolOutcome) -> None: ...

    def settled(self, run: ToolRun) -> None: ...

    def interrupted(self, exc: BaseException) -> None: ...


ViewFactory = Callable[[CallTicket], "CallView | None"]


class _Visible:
    def __repr__(self) -> str:
        return "VISIBLE"


#: ``offered=VISIBLE``: the door offers what the agent can see (MCP).
VISIBLE: Final = _Visible()
Offer = Collection[str] | _Visible | None


class _InFlight:
    """The ids of calls now running, process-wide, so none is shared."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: set[str] = set()
        self._count = itertools.count(1)

    def claim(self, wire_id: str) -> str:
        with self._lock:
            call_id = wire_id
            while not call_id or call_id in self._ids:
                call_id = f"{wire_id or 'call'}#{next(self._count)}"
            self._ids.add(call_id)
            return call_id

    def release(self, call_id: str) -> None:
        with self._lock:
            self._ids.discard(call_id)

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._ids


IN_FLIGHT: Final = _InFlight()


def _safe(view: CallView | None, method: str, *args: Any) -> None:
    if view is None:
        return
    try:
        getattr(view, method)(*args)
    except Exception as exc:  # noqa: BLE001 - a view never breaks a call
        _log.warning("call view %s failed: %s", method, error_message(exc))


class CallRunner:
    """Runs calls for doors through one registry.

    Parameters
    ----------
    registry
        Where calls run.
    views
        Builds the view of a call no door supplied a view for (the
        notebook's runner draws a live card); None shows nothing.
    talk
        The hearer of every call's ``ToolContext`` after the view and the
        door's own (the notebook's asks its person and its model); None
        adds none.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        views: ViewFactory | None = None,
        talk: object | None = None,
    ) -> None:
        self.registry = registry
        self.views = views
        self.talk = talk

    def talk_for(self, ticket: CallTicket) -> object | None:
        """The runner's hearer of one call's context (``talk`` here)."""
        return self.talk

    def parent_of(self, ticket: CallTicket) -> ToolExecutionToken | None:
        """The ``parent`` token of a call; None here (the notebook nests)."""
        return None

    def abandon(
        self, calls: Iterable[DoorCall], *, agent: Agent, reason: str
    ) -> list[ToolExecutionResult]:
        """Journal calls a door announced that will never run; their results.

        A model's step that fails or is interrupted after announcing calls
        leaves them unrun: each is ``tool/call`` then ``tool/result``
        (``Error: not run: <reason>``, stage ``arguments``), whatever view
        draws them, so a script, an evaluation and a notebook record alike.
        """
        return [
            record_unrun(
                agent,
                call_id=call.wire_id,
                name=call.name,
                arguments=call.arguments,
                result=text_result(
                    call.wire_id, f"Error: not run: {reason}", is_error=True
                ),
            )
            for call in calls
        ]

    def refusal(
        self, call: DoorCall, agent: Agent, offered: Offer
    ) -> HarnessError | None:
        """Why a door cannot run ``call``, or None.

        What a door offers is what it allows: a model may call only the
        tools its request listed, an MCP client only the tools it can see.
        Anything else is an unknown tool before any policy is asked about
        it. A door that offers no list (a cell, ``dispatch``) leaves every
        name to the pipeline, in the contract's order of stages.
        """
        if offered is None:
            return None
        name = call.name
        if not isinstance(offered, _Visible) and name not in offered:
            return ToolNotFoundError(name)
        if self.registry.get(name, agent) is None:
            return ToolNotFoundError(name)
        return None

    async def run(
        self,
        call: DoorCall,
        *,
        agent: Agent,
        door: str = "code",
        signal: AbortSignal | None = None,
        parent: ToolExecutionToken | None = None,
        offered: Offer = None,
        view: CallView | None = None,
        talk: object | None = None,
    ) -> CallAnswer:
        """Run one call; never raises but for a cancellation or an interrupt.

        ``talk`` is the door's hearer of the call's ``ToolContext`` (an MCP
        request's progress and elicitation, say), heard before the runner's.
        """
        call_id = IN_FLIGHT.claim(call.wire_id)
        wire_id = call.wire_id or call_id
        try:
            ticket = CallTicket(call_id=call_id, call=call, agent=agent, door=door)
            if view is None and self.views is not None:
                try:
                    view = self.views(ticket)
                except Exception as exc:  # noqa: BLE001 - no view, the call runs
                    _log.warning("call view failed: %s", error_message(exc))
            _safe(view, "begin", ticket)
            outcome = UNRUN
            refused: ToolExecutionResult | None = None
            if call.error is not None:
                refused = text_result(call_id, call.error, is_error=True)
            else:
                problem = self.refusal(call, agent, offered)
                if problem is not None:
                    refused, outcome = error_result(call_id, problem), REFUSED
            if refused is not None:
                result = record_unrun(
                    agent,
                    call_id=call_id,
                    name=call.name,
                    arguments=call.arguments,
                    result=refused,
                    outcome=outcome,
                )
                _safe(view, "refused", result, outcome)
                return CallAnswer(
                    call_id=call_id, wire_id=wire_id, result=result, outcome=outcome
                )
            if parent is None:
                parent = self.parent_of(ticket)
            try:
                runners = self.talk_for(ticket)
            except Exception as exc:  # noqa: BLE001 - no talk, the call runs
                _log.warning("call talk failed: %s", error_message(exc))
                runners = None
            with journal.turn(agent), hearing((view, talk, runners)):
                try:
                    run = await self.registry.run(
                        ToolExecutionInput(
                            call_id=call_id,
                            name=call.name,
                            arguments=call.arguments,
                            agent=agent,
                            parent=parent,
                            signal=signal,
                        )
                    )
                except BaseException as exc:
                    _safe(view, "interrupted", exc)
                    raise
            _safe(view, "settled", run)
            return CallAnswer(
                call_id=call_id, wire_id=wire_id, result=run.result, outcome=run.outcome
            )
        finally:
            IN_FLIGHT.release(call_id)


async def answer_calls(
    runner: CallRunner,
    calls: Sequence[DoorCall],
    *,
    agent: Agent,
    door: str,
    offered: Offer = None,
    views: Sequence[CallView | None] | None = None,
    into: list[CallAnswer | None] | None = None,
) -> list[CallAnswer | None]:
    """Run one message's calls concurrently; answers come back in call order.

    ``dispatch`` and ``Chat`` both answer a model's message here. An entry
    is None only when the step was cancelled before that call settled; the
    cancellation is re-raised once every call has ended, and ``into`` (a
    list of ``len(calls)``) then holds what did settle.
    """
    answers: list[CallAnswer | None] = [None] * len(calls) if into is None else into

    async def one(index: int) -> None:
        answers[index] = await runner.run(
            calls[index],
            agent=agent,
            door=door,
            offered=offered,
            view=None if views is None else views[index],
        )

    if len(calls) == 1:
        await one(0)
    elif calls:
        await run_together(one(i) for i in range(len(calls)))
    return answers


async def run_together(coros: Iterable[Awaitable[None]]) -> None:
    """Await ``coros`` concurrently, and never leave one of them running.

    If one fails, or the caller is cancelled, the others are cancelled and
    awaited before the error is raised (``asyncio.gather`` alone would
    leave them running; ``asyncio.TaskGroup`` needs Python 3.11).
    """
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
