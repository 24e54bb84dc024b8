"""One card from one call: the one place a call's card is put together.

Five places used to draw "a call as a card" each their own way (the live
card, the replay, the evaluation report, both demos), and their wording
drifted apart (the report kept its own list of statuses). Now they all
come here:

- :func:`call_card` draws a call from its views and what the core said of
  it: the outcome (status, approval), the trace, the duration, what the
  body raised and what the tool said while it ran;
- :func:`entry_card` draws a journal's call (a
  :class:`~dsh_nb.cards.callbook.CallEntry`): the logged arguments and
  result go through the tools' own pure presenters, so a replay, a
  ``--follow`` and an evaluation report look as the live card did;
- :class:`CardView` is a runner's view
  (:class:`~dsh_nb.tools.runner.CallView`) that draws its call's card once
  the call ends, and hands it on (the demo prints it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.cards.bundle import ToolCard, render_card
from dsh_nb.cards.model import STATUSES, CardModel, TraceEntry, card_status
from dsh_nb.tools.definition import ToolResult
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.presentation import GenericResultView
from dsh_nb.tools.presenter import ToolPresenter

if TYPE_CHECKING:
    from dsh_nb.cards.callbook import CallEntry
    from dsh_nb.cards.model import CardLimits
    from dsh_nb.cards.talk import CardTalk
    from dsh_nb.tools.audit.failure import Failure
    from dsh_nb.tools.presentation import ToolCallView, ToolResultView
    from dsh_nb.tools.runner import CallTicket
    from dsh_nb.tools.values.execution import ToolExecutionResult
    from dsh_nb.tools.values.outcome import ToolOutcome
    from dsh_nb.tools.values.run import ToolRun

__all__ = [
    "STILL_RUNNING",
    "CardView",
    "call_card",
    "entry_card",
    "generic_presenter",
    "still_running",
]

STILL_RUNNING: Final = (
    "The tool's body may still be running in a worker thread; "
    "its late result will be dropped."
)


def still_running(view: Any) -> Any:
    """Add the "may still be running" line to a generic result view."""
    if isinstance(view, GenericResultView) and view.content is not None:
        note = {"type": "text", "text": STILL_RUNNING}
        return dataclasses.replace(view, content=[*view.content, note])
    return view


def call_card(
    tool: str,
    call: ToolCallView | None,
    result: ToolResultView | None = None,
    *,
    call_id: str | None = None,
    status: str | None = None,
    outcome: ToolOutcome | None = None,
    is_error: bool = False,
    approval: str | None = None,
    trace: Iterable[Any] = (),
    duration_ms: float | None = None,
    talk: CardTalk | None = None,
    failure: Failure | None = None,
    cwd: str | None = None,
    meta: Mapping[str, Any] | None = None,
    limits: CardLimits | None = None,
) -> ToolCard:
    """Draw one call as a card.

    Parameters
    ----------
    tool, call, result
        The tool's name, its call view and its result view (None while the
        call has not ended).
    call_id
        The call's id: in the JSON part and the display metadata, never
        drawn.
    status
        The card's status (a live card's ``pending``, ``running``...); by
        default the ``outcome``'s, in the cards' words, else ``pending``.
        A core status (``timeout``) is named as the cards name it.
    outcome
        The core's outcome of a finished call; its approval is shown
        unless ``approval`` says otherwise.
    trace
        The pipeline's trace records (``stage``, ``actor``, ``decision``,
        ``duration_ms``); their durations go to the metadata only.
    duration_ms
        How long the call took; metadata only, so parts stay stable.
    talk, failure
        What the tool said while it ran; what its body raised.
    cwd
        The session's working folder (file titles are made relative).
    meta
        More volatile values for the display metadata.
    limits
        Size limits; ``CardLimits()`` by default.
    """
    if status is None:
        status = "pending" if outcome is None else outcome.status
    if approval is None and outcome is not None:
        approval = outcome.approval
    volatile: dict[str, Any] = {} if call_id is None else {"callId": call_id}
    if duration_ms is not None:
        volatile["durationMs"] = round(duration_ms, 3)
    volatile.update(meta or {})
    model = CardModel(
        tool=tool,
        call_id=call_id,
        status=card_status(status),
        call=call,
        result=result,
        is_error=is_error,
        trace=TraceEntry.of_records(trace),
        cwd=cwd,
        approval=approval,
        meta=volatile,
        talk=talk,
        failure=failure,
    )
    return render_card(model, limits=limits)


class _NoTools:
    """No registry (a saved report): every card is the generic one."""

    def get(self, name: str, scope: object = None) -> None:
        return None


def generic_presenter() -> ToolPresenter:
    """A presenter that knows no tools: the contract's generic cards."""
    return ToolPresenter(_NoTools())


def entry_card(
    entry: CallEntry,
    presenter: ToolPresenter | None = None,
    *,
    cwd: str | None = None,
    meta: Mapping[str, Any] | None = None,
) -> ToolCard:
    """Draw a journal's call as the live card drew it, running nothing.

    The logged arguments and result (with its ``meta``) go through
    ``presenter`` (the tools' own, or the generic cards when None). A call
    with no result is ``pending``, or ``cancelled`` when the journal says
    so; a log older than the core's journal has no status, and shows
    ``isError`` alone. A status the cards do not know shows as ``error``.
    """
    if presenter is None:
        presenter = generic_presenter()
    call = presenter.present_call(entry.call_id, entry.name, entry.arguments)
    result = None
    is_error = False
    status = entry.status
    if entry.result is not None:
        content = entry.result.get("content")
        is_error = bool(entry.result.get("isError"))
        logged = ToolResult(
            content=list(content) if isinstance(content, list) else [],
            is_error=is_error,
            meta=entry.result.get("meta", ABSENT),
        )
        result = presenter.present_result(entry.call_id, logged)
        if entry.body_running:
            result = still_running(result)
        status = status or ("error" if is_error else "done")
    else:
        presenter.forget(entry.call_id)
        status = status or "pending"
    if card_status(status) not in STATUSES:
        status = "error"
    return call_card(
        entry.name,
        call,
        result,
        call_id=entry.call_id,
        status=status,
        is_error=is_error,
        approval=entry.approval,
        cwd=cwd,
        talk=entry.talk,
        meta={"replayed": True, **(meta or {})},
    )


class CardView:
    """A runner's view that draws its call's card once the call ends.

    ``show`` gets the :class:`ToolCard` (the demo prints its ``text/plain``
    part); ``card()`` draws the call as it stands at any time. It keeps
    the facts the runner reports and draws nothing while the call runs.
    """

    def __init__(
        self,
        presenter: ToolPresenter,
        show: Callable[[ToolCard], None],
        *,
        cwd: str | None = None,
        limits: CardLimits | None = None,
    ) -> None:
        self.presenter, self.show, self.cwd, self.limits = presenter, show, cwd, limits
        self.ticket: CallTicket | None = None
        self._call: ToolCallView | None = None
        self._result: ToolResultView | None = None
        self._error = False
        self._outcome: ToolOutcome | None = None
        self._status: str | None = None
        self._failure: Failure | None = None

    @property
    def name(self) -> str:
        return "" if self.ticket is None else self.ticket.name

    def card(self) -> ToolCard:
        """The call's card as it stands."""
        return call_card(
            self.name,
            self._call,
            self._result,
            call_id=None if self.ticket is None else self.ticket.call_id,
            status=self._status,
            outcome=self._outcome,
            is_error=self._error,
            failure=self._failure,
            cwd=self.cwd,
            limits=self.limits,
        )

    def begin(self, ticket: CallTicket) -> None:
        self.ticket = ticket
        self._call = self.presenter.present_call(
            ticket.call_id, ticket.name, ticket.arguments, ticket.agent
        )

    def refused(self, result: ToolExecutionResult, outcome: ToolOutcome) -> None:
        self._end(result, outcome)

    def settled(self, run: ToolRun) -> None:
        self._failure = run.failure
        self._end(run.result, run.outcome)

    def interrupted(self, exc: BaseException) -> None:
        if self.ticket is not None:
            self.presenter.forget(self.ticket.call_id)
        self._status = "cancelled"
        self.show(self.card())

    def _end(self, result: ToolExecutionResult, outcome: ToolOutcome) -> None:
        call_id = result.call_id if self.ticket is None else self.ticket.call_id
        self._result = self.presenter.present_result(call_id, result)
        self._outcome, self._error = outcome, result.is_error
        if outcome.body_running:
            self._result = still_running(self._result)
        self.show(self.card())
