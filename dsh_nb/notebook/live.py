"""``LiveCall``: one tool call shown as a card that updates in place.

The card goes through one display handle created while the calling cell
runs, so every update lands in that cell, in JupyterLab and in headless
runners alike. Statuses move ``pending`` -> ``awaiting-approval`` ->
``running`` -> ``done`` | ``denied`` | ``error`` | ``timed-out`` |
``cancelled``. The card's data stays deterministic; the call id, timings
and trace durations go to the display metadata.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from dsh_nb.cards.callcard import call_card, still_running
from dsh_nb.cards.model import card_status, classify
from dsh_nb.notebook import interrupt, postmortem
from dsh_nb.notebook.talkcard import TalkingCard
from dsh_nb.tools.audit.resultsize import bound_result
from dsh_nb.tools.presentation import GenericResultView
from dsh_nb.tools.runner import UNRUN, DoorCall
from dsh_nb.tools.running import worker
from dsh_nb.tools.values.execution import ToolExecutionResult, text_result

if TYPE_CHECKING:
    from IPython.display import DisplayHandle

    from dsh_nb.cards import ToolCard
    from dsh_nb.notebook.host import KernelHost
    from dsh_nb.tools.audit.failure import Failure
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.pipeline.trace import TraceRecord
    from dsh_nb.tools.runner import CallTicket
    from dsh_nb.tools.running.abort import AbortSignal
    from dsh_nb.tools.values.outcome import ToolOutcome
    from dsh_nb.tools.values.run import ToolRun

__all__ = ["ApprovalPromptLike", "LiveCall", "card_status", "classify"]

_FINAL = frozenset({"done", "denied", "error", "timed-out", "cancelled"})


class ApprovalPromptLike(Protocol):
    """What ``LiveCall.approve``/``reject`` delegate to (the approval prompt)."""

    def approve(self) -> None: ...

    def reject(self) -> None: ...


NOT_STOPPED: Final = (
    "Interrupted. The tool's body could not be stopped and may still be "
    "running in a worker thread; nothing else is blocked, and its late "
    "result will be dropped."
)


def _update(handle: DisplayHandle, obj: object, **kwargs: Any) -> None:
    update: Callable[..., None] = handle.update
    update(obj, **kwargs)


def _shell_running() -> bool:
    import sys

    if "IPython" not in sys.modules:
        return False
    from IPython.core.interactiveshell import InteractiveShell

    return InteractiveShell.initialized()


class LiveCall(TalkingCard):
    """One call through the kernel registry, shown as a live card.

    Await it for the frozen :class:`ToolExecutionResult`; ``result`` is None
    until the call is over. Built by ``dsh_nb.call``, ``%call`` and
    ``dispatch``, not directly.
    """

    def __init__(
        self,
        state: KernelHost,
        name: str,
        arguments: Any,
        *,
        call_id: str,
        agent: Agent,
        signal: AbortSignal | None = None,
        door: str = "cell",
    ) -> None:
        self._state = state
        self.door = door
        self.signal = signal
        self.name = name
        self.arguments = arguments
        self.call_id = call_id
        self.agent = agent
        self._status = "pending"
        self._result: ToolExecutionResult | None = None
        self._trace: Sequence[TraceRecord] = ()
        self._approval: str | None = None
        self.outcome: ToolOutcome | None = None
        self.failure: Failure | None = None  # what the body raised, traceback and all
        with interrupt.watch(), interrupt.presenting():
            self._call_view = state.presenter.present_call(
                call_id, name, arguments, agent
            )
        self._result_view: Any = None
        self._handle: DisplayHandle | None = None
        self._flush_handle: asyncio.Handle | None = None
        self._prompt_handle: DisplayHandle | None = None
        self._prompt_slot: DisplayHandle | None = None
        self._prompt: ApprovalPromptLike | None = None
        self._prompt_widget: Any = None
        self._task: asyncio.Future[ToolExecutionResult] | None = None
        self._started = time.perf_counter()
        self._duration_ms: float | None = None

    # --- what a caller reads --------------------------------------------------

    @property
    def status(self) -> str:
        """The card's current status."""
        return self._status

    @property
    def result(self) -> ToolExecutionResult | None:
        """The frozen result once the call is over, else None."""
        return self._result

    @property
    def done(self) -> bool:
        """Whether the call reached a final status."""
        return self._status in _FINAL

    def card(self) -> ToolCard:
        """Render the card as it stands now."""
        config = self._state.config
        return call_card(
            self.name,
            self._call_view,
            self._result_view,
            call_id=self.call_id,
            status=self._status,
            is_error=bool(self._result is not None and self._result.is_error),
            approval=self._approval,
            trace=self._trace if config.trace else (),
            duration_ms=self._duration_ms,
            talk=self._talk,
            failure=self.failure,
            cwd=self.agent.cwd,
            limits=config.card_limits(),
        )

    def __repr__(self) -> str:
        return f"<LiveCall {self.name!r} {self.call_id!r} {self._status}>"

    session_rule = False  # "Allow for this session" added a rule: the card says so
    # --- display --------------------------------------------------------------

    def _ipython_display_(self) -> None:
        """As a cell's value: the card is shown already, so nothing more."""
        self.show()

    def show(self) -> LiveCall:
        """Display the card in the current cell (once); no-op outside IPython."""
        if self._handle is None and self._state.shell is not None and _shell_running():
            from IPython.display import display

            card = self.card()
            show: Callable[..., Any] = display
            # raw: the bundle is built already; skip IPython's formatters.
            self._handle = show(
                card.data, metadata=card.metadata, raw=True, display_id=True
            )
        return self

    def attach(
        self, handle: DisplayHandle | None, prompt_slot: DisplayHandle | None = None
    ) -> None:
        """Show the card through ``handle`` from now on (None: stop showing).

        The MCP panel moves cards between its slots as new calls arrive;
        ``prompt_slot``, the display right under the card's, shows the
        call's approval prompt while one is pending. A card dropped while
        it asks keeps its prompt, on its own, at the end of the cell.
        """
        self._handle, self._prompt_slot = handle, prompt_slot
        if handle is not None:
            self._refresh(now=True)
        widget = self._prompt_widget
        if prompt_slot is not None:
            blank = widget is None
            _update(prompt_slot, {"text/plain": ""} if blank else widget, raw=blank)
        elif handle is None and widget is not None and self._prompt_handle is None:
            self._display_prompt(widget)

    def _refresh(self, *, now: bool = False) -> None:
        """Update the card; intermediate states coalesce per loop turn.

        A status set and superseded within one turn of the event loop (a
        fast synchronous tool goes ``running`` then ``done`` without
        yielding) is never sent; a final status is sent at once.
        """
        if self._handle is None:
            return
        if not now:
            if self._flush_handle is not None:
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                self._flush_handle = loop.call_soon(self._flush)
                return
        self._flush()

    def _flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        self._drop_redraw()
        if self._handle is not None:
            from IPython.display import update_display

            card = self.card()
            update: Callable[..., None] = update_display
            update(
                card.data,
                metadata=card.metadata,
                raw=True,
                display_id=self._handle.display_id,
            )

    def set_status(self, status: str) -> None:
        """Move the card to ``status`` (the approval prompt uses this)."""
        from dsh_nb.cards.model import STATUSES

        if self._status in _FINAL:
            return
        if status not in STATUSES:
            from dsh_nb.cards import CardModel

            CardModel(tool=self.name, status=status)  # raises, with a hint
        self._status = status
        self._refresh()

    def show_prompt(self, prompt: Any) -> None:
        """Show the approval prompt right under the card, in the same cell.

        ``prompt`` (a widget) is displayed as it is. :meth:`approve` and
        :meth:`reject` answer the prompt registered for this call in
        ``state.pending_approvals``, or ``prompt`` itself when it has
        ``approve()`` and ``reject()``.
        """
        self._prompt = prompt if hasattr(prompt, "approve") else None
        self._prompt_widget = prompt
        if self._prompt_slot is not None:
            _update(self._prompt_slot, prompt)
        elif self._handle is not None:
            self._display_prompt(prompt)

    def _display_prompt(self, prompt: Any) -> None:
        from IPython.display import DisplayHandle

        if self._prompt_handle is None:
            make: Callable[[], DisplayHandle] = DisplayHandle
            self._prompt_handle = handle = make()
            show: Callable[..., None] = handle.display
            show(prompt)
        else:
            _update(self._prompt_handle, prompt)

    def clear_prompt(self, outcome: str | None = None) -> None:
        """Drop the prompt; the card shows ``outcome`` from now on."""
        self._prompt = self._prompt_widget = None
        if outcome is not None:
            self._approval = outcome
        if self._prompt_slot is not None:
            _update(self._prompt_slot, {"text/plain": ""}, raw=True)
        if self._prompt_handle is not None:
            # The card shows the outcome; a line under it would repeat it.
            _update(self._prompt_handle, {"text/plain": ""}, raw=True)
        self._refresh()

    def approve(self) -> None:
        """Answer the pending approval prompt with *Allow once*."""
        self._pending_prompt().approve()

    def reject(self) -> None:
        """Answer the pending approval prompt with *Reject*."""
        self._pending_prompt().reject()

    def _pending_prompt(self) -> ApprovalPromptLike:
        pending = self._state.pending_approvals.get(self.call_id)
        prompt = pending if pending is not None else self._prompt
        if prompt is None or getattr(prompt, "done", False):
            raise RuntimeError(
                f"call {self.call_id!r} of tool {self.name!r} has no pending approval "
                f"(status {self._status!r}); approve()/reject() only work while its "
                "card shows 'awaiting-approval'"
            )
        return prompt

    # --- running --------------------------------------------------------------

    def start(self) -> LiveCall:
        """Schedule the call on the running event loop, if there is one."""
        if self._task is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return self  # started by the first await instead
            self._task = interrupt.adopt(asyncio.ensure_future(self._run()))
        return self

    def __await__(self) -> Generator[Any, None, ToolExecutionResult]:
        if self._task is None:
            self._task = interrupt.adopt(asyncio.ensure_future(self._run()))
        return self._task.__await__()

    def _mark_running(self) -> None:
        self.set_status("running")

    def _record_trace(self, records: Sequence[TraceRecord]) -> None:
        self._trace = records

    async def _run(self) -> ToolExecutionResult:
        with interrupt.watch():
            try:
                answer = await self._state.runner.run(
                    DoorCall(
                        name=self.name, arguments=self.arguments, wire_id=self.call_id
                    ),
                    agent=self.agent,
                    door=self.door,
                    signal=self.signal,
                    view=self,
                )
            except (KeyboardInterrupt, GeneratorExit) as exc:
                # Raised by a tool or a listener: in a task it would leave
                # the event loop and end the kernel. The call is cancelled.
                raise asyncio.CancelledError(
                    f"call {self.call_id!r} was interrupted ({type(exc).__name__})"
                ) from exc
        return answer.result

    # --- the runner's view (tools.runner.CallView) ------------------------------

    def begin(self, ticket: CallTicket) -> None:
        """The runner took the call, under the id it keeps while it runs."""
        state = self._state
        if ticket.call_id != self.call_id:
            # Another call in flight had this id: approvals and the card
            # follow the runner's unique one.
            state.presenter.forget(self.call_id)
            self.call_id = ticket.call_id
            with interrupt.watch(), interrupt.presenting():
                self._call_view = state.presenter.present_call(
                    self.call_id, self.name, self.arguments, self.agent
                )
        state.live_calls[self.call_id] = self
        self._started = time.perf_counter()

    def refused(self, result: ToolExecutionResult, outcome: ToolOutcome) -> None:
        """The call never reached the pipeline; the card says why."""
        self._leave()
        self.outcome = outcome
        self._result_view = self._state.presenter.present_result(self.call_id, result)
        self._result = result
        self._finish("error")

    def interrupted(self, exc: BaseException) -> None:
        """An interrupt or a cancelled cell: no result (the core journals
        tool/cancelled), and the card says so."""
        self._state.presenter.forget(self.call_id)
        self._leave()
        if worker.body_running(exc):
            # Asked to stop, the body's thread did not (blocked in C): say
            # so plainly; the loop and other calls are not blocked.
            note = {"type": "text", "text": NOT_STOPPED}
            self._result_view = GenericResultView(content=[note])
        self._finish("cancelled")

    def settled(self, run: ToolRun) -> None:
        """The pipeline's answer: the card shows a bounded copy of it."""
        state = self._state
        result, outcome = run.result, run.outcome
        self.outcome = outcome
        if outcome.approval is not None:
            rule = " (a rule now allows it for this session)" * self.session_rule
            self._approval = outcome.approval + rule
        # The card keeps a bounded copy; the caller gets the result whole.
        shown, _ = bound_result(result, state.agent.session.max_result_bytes)
        with interrupt.presenting():
            view = state.presenter.present_result(self.call_id, shown)
        self._result_view = still_running(view) if outcome.body_running else view
        self._result = result
        self.failure = run.failure
        postmortem.remember(run.failure)
        self._leave()
        self._finish(classify(outcome))

    def _leave(self) -> None:
        state = self._state
        if state.live_calls.get(self.call_id) is self:
            del state.live_calls[self.call_id]

    def fail_before_pipeline(self, text: str) -> ToolExecutionResult:
        """Settle a call that will not run (the model's reply failed).

        Only drawn: the chat journals it through its runner, so a replay
        shows it.
        """
        result = text_result(self.call_id, text, is_error=True)
        self.refused(result, UNRUN)
        return result

    def _finish(self, status: str) -> None:
        self._duration_ms = (time.perf_counter() - self._started) * 1000.0
        self._prompt = None
        self._status = status
        self._refresh(now=True)
