"""Approvals for an ``Ask``: buttons, a stdin line, or the headless outcome.

The pipeline decides *whether* to ask; this module only answers, through
the channel :func:`~dsh_nb.notebook.frontend.choose_channel` picks for the
request: Allow once / Reject buttons where the frontend delivers a click
while the cell runs, the kernel's stdin where it takes input instead (VS
Code, Colab, the classic Notebook: see ``stdin.py``), else the configured
headless outcome. Both prompts are the same ``PendingAnswer`` underneath,
so the card and the journal cannot tell how the person answered. ``install``
registers one answerer on the kernel registry's ``ApprovalService``, which
writes the audit pair (``approval/asked`` then ``approval/decided``) for
every request, whatever happens here.

Waiting is one ``await`` on an ``asyncio.Future`` of the kernel's own loop:
on ipykernel >= 7.4 a cell that awaits a call still receives the click,
because widget messages are dispatched while an async cell runs. A click may
arrive on another thread (JupyterLab subshells), so the future is settled on
its loop with ``call_soon_threadsafe``. A pending prompt ends as
``cancelled`` on the approval timeout, the call's abort signal, a kernel
interrupt, or when its cell runs again.

An interrupt while an approval is pending is consumed: the approval settles
``cancelled`` and the cell finishes with that denial, so the audit pair is
always written. The next interrupt reaches the kernel as usual. Each prompt
shown is also announced to ``notices`` (``approvalcomm``: a JupyterLab
notification that answers the same prompt).
"""

from __future__ import annotations

import asyncio
import html
import logging
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Final, Protocol

from dsh_nb.cards.arguments import arguments_html
from dsh_nb.cards.question import approval_question
from dsh_nb.notebook.answer import PendingAnswer
from dsh_nb.notebook.frontend import (
    RequestOrigin,
    choose_channel,
    editor_without_widget_sign,
    request_origin,
)
from dsh_nb.notebook.prompt import (
    ALLOW_LABEL,
    REJECT_LABEL,
    SESSION_LABEL,
    ApprovalPrompt,
)
from dsh_nb.notebook.waiting import PendingAsk, interruptible
from dsh_nb.tools.jsonvalue import to_plain
from dsh_nb.tools.pipeline.approval import (
    OUTCOMES,
    ApprovalDecision,
    ApprovalOutcome,
    ApprovalRequest,
)

if TYPE_CHECKING:
    import ipywidgets as widgets

    from dsh_nb.notebook.stdin import KernelStdin, StdinTarget
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.registry import ToolRegistry

__all__ = [
    "ALLOW_LABEL",
    "REJECT_LABEL",
    "SESSION_LABEL",
    "ApprovalConfig",
    "ApprovalHost",
    "ApprovalNotices",
    "ApprovalPrompt",
    "LiveCallView",
    "install",
]

_log = logging.getLogger(__name__)

NO_WIDGETS_HINT: Final = (
    "dsh_nb: this request neither shows widgets nor allows input, so approval "
    "prompts answer DshConfig.headless_outcome at once. If this editor can "
    'show widgets, run  %config DshConfig.frontend = "interactive"  to be '
    'asked; set it to "headless" to keep this behaviour without this note.'
)


class ApprovalConfig(Protocol):
    """The settings the answerer reads on every request."""

    @property
    def headless_outcome(self) -> str: ...
    @property
    def frontend(self) -> str: ...
    @property
    def approval_timeout(self) -> float | None: ...


class LiveCallView(Protocol):
    """The part of a live call card the answerer drives."""

    session_rule: bool  # "Allow for this session" added a rule for the tool

    def set_status(self, status: str) -> None: ...
    def show_prompt(self, widget: widgets.Widget) -> None: ...
    def clear_prompt(self, outcome: str) -> None: ...


class ApprovalNotices(Protocol):
    """Announce a pending prompt elsewhere (a toast); never raises."""

    def announce(self, prompt: ApprovalPrompt, agent: str) -> Callable[[], None]: ...


class ApprovalHost(Protocol):
    """What ``install`` needs from the kernel state."""

    @property
    def registry(self) -> ToolRegistry: ...
    @property
    def config(self) -> ApprovalConfig: ...
    @property
    def live_calls(self) -> Mapping[str, LiveCallView]: ...
    @property
    def pending_approvals(self) -> MutableMapping[str, PendingAnswer]: ...
    def allow_for_session(
        self, tool_name: str, agent: Agent, call_id: str | None
    ) -> None: ...


def _noop() -> None:
    return None


def _stands(answer: object) -> bool:
    """An answer from an answerer after ours that stands: any outcome but
    ``unavailable``, which is also what the chain says when nobody answered."""
    outcome = answer.outcome if type(answer) is ApprovalDecision else answer
    return isinstance(outcome, str) and outcome in OUTCOMES and outcome != "unavailable"


def _headless(outcome: object) -> ApprovalOutcome:
    if isinstance(outcome, str) and outcome.lower() in OUTCOMES:
        return outcome.lower()  # type: ignore[return-value]
    return "unavailable"


def _timeout_seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 < value < float("inf") else None


def _is_stale(
    prompt: PendingAnswer, tool_name: str, origin: RequestOrigin | None
) -> bool:
    """A prompt from an earlier run of the same cell, asking the same tool."""
    old = prompt.origin
    if old is None or origin is None or prompt.tool_name != tool_name:
        return False
    if old.msg_id == origin.msg_id or origin.msg_type != "execute_request":
        return False
    return (
        old.cell_id is None or origin.cell_id is None or old.cell_id == origin.cell_id
    )


class _Answerer:
    """The one answerer ``install`` registers; prompts when someone is there.

    Answerers registered after it (a scripted answerer in a teaching
    notebook) answer first; it only takes what they pass on with ``next()``.
    """

    def __init__(
        self,
        state: ApprovalHost,
        origin: Callable[[], RequestOrigin | None],
        notices: ApprovalNotices | None = None,
        stdin: KernelStdin | None = None,
    ) -> None:
        self.state = state
        self.origin = origin
        self.notices = notices
        self.stdin = stdin
        self.hinted = False  # NO_WIDGETS_HINT is shown once per kernel

    async def __call__(
        self, request: ApprovalRequest, next_: Callable[[], Awaitable[object]]
    ) -> object:
        config = self.state.config
        pending = PendingAsk(
            asyncio.get_running_loop(), _timeout_seconds(config.approval_timeout)
        )
        signal = request.signal
        unwatch = (
            signal.add_callback(
                lambda _reason: pending.stop_threadsafe("the call was aborted", "abort")
            )
            if signal is not None
            else _noop
        )
        try:
            with interruptible(pending):
                inner = await pending.run(next_())
                if _stands(inner):
                    return inner
                if pending.stopped is not None:
                    return pending.stopped
                target = self.stdin.target() if self.stdin is not None else None
                channel = choose_channel(config.frontend, stdin=target is not None)
                if channel == "stdin" and target is not None:
                    return await self.ask_stdin(request, pending, target)
                if channel == "headless":
                    self.hint_once(config.frontend)
                    return _headless(config.headless_outcome)
                return await self.ask(request, pending)
        finally:
            pending.close()
            unwatch()

    def hint_once(self, mode: object) -> None:
        """Tell a VS Code user why nothing was asked, and how to change it."""
        if self.hinted or str(mode).lower() != "auto":
            return
        if editor_without_widget_sign():
            self.hinted = True
            print(NO_WIDGETS_HINT, file=sys.stderr)

    async def ask(
        self, request: ApprovalRequest, pending: PendingAsk
    ) -> ApprovalOutcome | ApprovalDecision:
        """Show buttons for ``request`` and await a click or a cancel."""
        origin = self._supersede(request)
        prompt = ApprovalPrompt(
            request.tool_name,
            reason=request.reason,
            call_id=request.call_id,
            origin=origin,
            details=self._details(request),
        )
        try:
            return await self._await(request, pending, prompt, announce=True)
        finally:
            prompt.close()

    async def ask_stdin(
        self, request: ApprovalRequest, pending: PendingAsk, target: StdinTarget
    ) -> ApprovalOutcome | ApprovalDecision:
        """Ask ``request`` on the kernel's stdin; settle as a click would."""
        from dsh_nb.notebook.stdinprompt import StdinApproval, ask_on_stdin

        stdin = self.stdin
        assert stdin is not None
        live = self.state.live_calls.get(request.call_id or "")
        question = approval_question(
            request.tool_name,
            reason=request.reason,
            arguments=to_plain(getattr(live, "arguments", None)),
        )
        prompt = StdinApproval(
            question,
            request.tool_name,
            reason=request.reason,
            call_id=request.call_id,
            origin=self._supersede(request),
        )

        async def converse() -> None:
            if not prompt.done:
                prompt.settle_with(await ask_on_stdin(question, stdin, target))

        # The turn is taken inside, so a prompt answered in code meanwhile
        # (pending_approvals()) never shows its input box at all.
        talk = asyncio.ensure_future(converse())
        try:
            return await self._await(request, pending, prompt, announce=False)
        finally:
            talk.cancel()
            prompt.close()

    def _supersede(self, request: ApprovalRequest) -> RequestOrigin | None:
        """Cancel prompts of an earlier run of this cell; return the origin."""
        origin = self.origin()
        prompts = self.state.pending_approvals
        for stale in [
            p for p in prompts.values() if _is_stale(p, request.tool_name, origin)
        ]:
            stale.cancel("superseded: the cell ran again")
        return origin

    async def _await(
        self,
        request: ApprovalRequest,
        pending: PendingAsk,
        prompt: PendingAnswer,
        *,
        announce: bool,
    ) -> ApprovalOutcome | ApprovalDecision:
        """Show ``prompt`` with the call, await its answer, then tidy up."""
        prompts = self.state.pending_approvals
        key = request.call_id or f"approval-{uuid.uuid4().hex}"
        previous = prompts.get(key)
        if previous is not None:
            previous.cancel("superseded by a new request for the same call")
        prompts[key] = prompt
        unguard = pending.guard(prompt.cancel)
        hide = self._show(request, prompt)
        notices = self.notices if announce else None
        settled = _noop
        if notices is not None and isinstance(prompt, ApprovalPrompt):
            settled = notices.announce(prompt, request.agent.name)
        try:
            outcome = await prompt.wait()
            if outcome == "allowed-once" and prompt.for_session:
                self.state.allow_for_session(
                    request.tool_name, request.agent, request.call_id
                )
                live = self.state.live_calls.get(request.call_id or "")
                if live is not None:
                    live.session_rule = True
            if outcome == "cancelled" and pending.stopped is not None:
                return pending.stopped  # a timeout, an abort or an interrupt
            return outcome
        finally:
            unguard()
            if not prompt.done:
                prompt.cancel("the call was cancelled")
            if prompts.get(key) is prompt:
                del prompts[key]
            try:
                hide()
            except Exception:  # noqa: BLE001 - the outcome stands even if the card fails
                _log.warning("could not replace the approval prompt", exc_info=True)
            settled()

    def _details(self, request: ApprovalRequest) -> str:
        """What the call will do: its card above, or its arguments here."""
        live = self.state.live_calls.get(request.call_id or "")
        tool = self.state.registry.get(request.tool_name, request.agent)
        if tool is not None and tool.present_call is not None and live is not None:
            return "<div><i>The card above shows what this call will do.</i></div>"
        if live is None:
            return ""
        return arguments_html(to_plain(getattr(live, "arguments", None)))

    def _show(self, request: ApprovalRequest, prompt: Any) -> Callable[[], None]:
        live = None
        if request.call_id is not None:
            live = self.state.live_calls.get(request.call_id)
        if live is not None:
            try:
                live.set_status("awaiting-approval")
                live.show_prompt(prompt.widget)
            except Exception:  # noqa: BLE001 - a card failure must not lose the ask
                _log.warning(
                    "live card %r could not show the prompt", live, exc_info=True
                )
            else:
                return lambda: live.clear_prompt(prompt.outcome or "cancelled")
        return _display_alone(prompt)


def _display_alone(prompt: Any) -> Callable[[], None]:
    """Show the prompt on its own display handle; replace it when answered."""
    from IPython.display import display

    show: Callable[..., Any] = display
    handle = show(prompt.widget, display_id=True)
    if handle is None:
        return _noop

    def replace() -> None:
        line = prompt.summary()
        bundle = {
            "text/plain": line,
            "text/html": f"<div class='dsh-approval'>{html.escape(line)}</div>",
        }
        handle.update(bundle, raw=True)

    return replace


def install(
    state: ApprovalHost,
    *,
    origin: Callable[[], RequestOrigin | None] = request_origin,
    notices: ApprovalNotices | None = None,
    stdin: KernelStdin | None = None,
) -> Callable[[], None]:
    """Register the approval answerer on ``state.registry.approval``.

    ``origin`` names the kernel request that is asking (tests inject one);
    ``notices`` also announces each prompt (the JupyterLab notification);
    ``stdin`` asks where the frontend takes input but shows no widgets.
    Returns a dispose that removes the answerer and cancels pending prompts.
    """
    service = state.registry.approval
    if service is None:
        raise ValueError(
            f"{state.registry!r} has no ApprovalService; set "
            "registry.approval = ApprovalService() before installing approvals"
        )
    answerer = _Answerer(state, origin, notices, stdin)
    remove = service.on_request(answerer)

    def dispose() -> None:
        remove()
        for prompt in list(state.pending_approvals.values()):
            prompt.cancel("the dsh_nb extension was unloaded")

    return dispose
