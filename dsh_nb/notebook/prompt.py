"""``ApprovalPrompt``: Allow once / Allow for this session / Reject.

A thin view made of stock ipywidgets, over one future. It shows what the
call will do (``details``, escaped HTML built by the caller) above the
buttons. *Allow for this session* answers ``allowed-once`` like *Allow
once*, and marks the answer (``for_session``) so the caller can add the
allow rule. The first answer wins, whether it comes from a click in the
browser, ``button.click()`` or ``approve()`` / ``allow_for_session()`` /
``reject()`` in code; afterwards every button is disabled and unhooked. A
click can arrive on another thread (JupyterLab may deliver widget messages
on a subshell), so every settle runs on the prompt's event loop through
``call_soon_threadsafe``. A callback that raises settles the prompt as
``cancelled`` and says why in the prompt: it never reaches the kernel.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any, Final

from dsh_nb.cards.escape import esc, visible
from dsh_nb.notebook.frontend import RequestOrigin
from dsh_nb.tools.pipeline.approval import ApprovalOutcome

__all__ = [
    "ALLOW_LABEL",
    "REJECT_LABEL",
    "SESSION_LABEL",
    "AnswerCallback",
    "ApprovalPrompt",
]

ALLOW_LABEL: Final = "Allow once"
SESSION_LABEL: Final = "Allow for this session"
REJECT_LABEL: Final = "Reject"
_SUMMARIES: Final = {
    "allowed-once": "allowed once",
    "rejected": "rejected",
    "cancelled": "cancelled",
    "unavailable": "unavailable",
}
_NO_TEX: Final = "mathjax_ignore tex2jax_ignore"
_log = logging.getLogger(__name__)

AnswerCallback = Callable[[ApprovalOutcome], object]


class ApprovalPrompt:
    """Allow once / Reject buttons over one future; the first answer wins.

    Parameters
    ----------
    tool_name
        The tool asking to run; shown escaped.
    reason
        Why the policy asks, if it said; shown escaped.
    call_id
        The call this prompt answers for.
    origin
        The kernel request that asked (used to spot a re-run cell).
    details
        What the call will do, as HTML the caller has escaped; shown
        between the question and the buttons.
    """

    def __init__(
        self,
        tool_name: str,
        *,
        reason: str | None = None,
        call_id: str | None = None,
        origin: RequestOrigin | None = None,
        details: str = "",
    ) -> None:
        self.tool_name = tool_name
        self.for_session = False
        self.reason = reason
        self.call_id = call_id
        self.origin = origin
        self.outcome: ApprovalOutcome | None = None
        self.note: str = ""
        self._callbacks: list[AnswerCallback] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._future: asyncio.Future[ApprovalOutcome] | None = None
        try:
            self._bind(asyncio.get_running_loop())
        except RuntimeError:
            pass
        # esc() shows bidi overrides and controls as [U+202E], as the card
        # does: a tool name cannot reorder what the person approves.
        asked = f"<b>Approve tool call?</b> <code>{esc(tool_name)}</code>"
        if reason:
            asked += f": {esc(reason)}"
        import ipywidgets as widgets  # on first prompt: keeps %load_ext fast

        # The class keeps MathJax off tool text ("$x$" in a reason).
        self.header = widgets.HTML(
            value=f'<div class="{_NO_TEX}">{asked}{details}</div>'
        )
        tool_name = visible(tool_name)
        self.allow_button = widgets.Button(
            description=ALLOW_LABEL,
            button_style="success",
            tooltip=f"Run {tool_name} this once",
        )
        self.session_button = widgets.Button(
            description=SESSION_LABEL,
            button_style="info",
            tooltip=f"Run {tool_name} now, and from now on in this session",
            layout=widgets.Layout(width="auto"),
        )
        self.reject_button = widgets.Button(
            description=REJECT_LABEL,
            button_style="danger",
            tooltip=f"Do not run {tool_name}",
        )
        self.message = widgets.HTML(value="")
        self._row = widgets.HBox(
            [self.allow_button, self.session_button, self.reject_button]
        )
        self.widget = widgets.VBox([self.header, self._row, self.message])
        self.allow_button.on_click(self._on_allow)
        self.session_button.on_click(self._on_session)
        self.reject_button.on_click(self._on_reject)

    def __repr__(self) -> str:
        state = self.outcome or "pending"
        return f"<ApprovalPrompt {self.tool_name!r} {state}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    @property
    def done(self) -> bool:
        """Whether the prompt has an outcome."""
        return self.outcome is not None

    def on_answer(self, fn: AnswerCallback) -> Callable[[], None]:
        """Run ``fn(outcome)`` before a person's answer settles; return undo.

        If ``fn`` raises, the prompt settles as ``cancelled`` and shows why.
        """
        self._callbacks.append(fn)
        return lambda: self._callbacks.remove(fn) if fn in self._callbacks else None

    def approve(self) -> None:
        """Answer ``allowed-once`` from code, as the button would."""
        self._answer("allowed-once")

    def allow_for_session(self) -> None:
        """Answer *Allow for this session* from code, as the button would."""
        self._post(self._decide, "allowed-once", True)

    def reject(self) -> None:
        """Answer ``rejected`` from code, as the button would."""
        self._answer("rejected")

    def cancel(self, note: str = "cancelled") -> None:
        """Settle as ``cancelled`` with ``note`` shown; safe from any thread."""
        self._post(self._settle, "cancelled", note)

    async def wait(self, timeout: float | None = None) -> ApprovalOutcome:
        """Wait for the outcome; ``cancelled`` after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._loop is None:
                self._bind(loop)
            elif self._loop is not loop:
                raise RuntimeError(
                    f"{self!r} belongs to another event loop; await it there"
                )
            if self.outcome is not None:
                return self.outcome
            if self._future is None:
                self._future = loop.create_future()
            future = self._future
        timer = None
        if timeout is not None:
            timer = loop.call_later(
                timeout, self.cancel, f"no answer within {timeout:g} s"
            )
        try:
            return await asyncio.shield(future)
        finally:
            if timer is not None:
                timer.cancel()

    def close(self) -> None:
        """Close every widget model (views disappear); settle if pending.

        Layout and style models too: an open box that points at a closed
        child breaks the state a reconnecting frontend asks for.
        """
        if self.outcome is None:
            self._settle("cancelled", "the prompt was closed")
        parts = (
            self.widget,
            self._row,
            self.header,
            self.allow_button,
            self.session_button,
            self.reject_button,
            self.message,
        )
        for part in parts:
            style = getattr(part, "style", None)
            layout = part.layout
            part.close()
            layout.close()
            if style is not None:
                style.close()

    def summary(self) -> str:
        """One line for people: what was asked and how it ended."""
        state = _SUMMARIES.get(self.outcome or "", "waiting for an answer")
        line = f'Approval for tool "{self.tool_name}": {state}'
        return f"{line} ({self.note})" if self.note else line

    def _bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._loop_thread = threading.get_ident()

    def _on_allow(self, _button: object) -> None:
        self._answer("allowed-once")

    def _on_session(self, _button: object) -> None:
        self.allow_for_session()

    def _on_reject(self, _button: object) -> None:
        self._answer("rejected")

    def _answer(self, outcome: ApprovalOutcome) -> None:
        self._post(self._decide, outcome)

    def _post(self, fn: Callable[..., None], *args: object) -> None:
        loop = self._loop
        if loop is None or threading.get_ident() == self._loop_thread:
            fn(*args)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(fn, *args)

    def _decide(self, outcome: ApprovalOutcome, for_session: bool = False) -> None:
        if self.outcome is not None:
            return
        for fn in tuple(self._callbacks):
            try:
                fn(outcome)
            except Exception as exc:  # noqa: BLE001 - a widget callback never kills the kernel
                _log.debug("approval callback %r failed", fn, exc_info=True)
                note = f"answer callback {fn!r} raised {type(exc).__name__}: {exc}"
                self._settle("cancelled", note)
                return
        self.for_session = for_session
        self._settle(outcome, "for this session" if for_session else "")

    def _settle(self, outcome: ApprovalOutcome, note: str) -> None:
        with self._lock:
            if self.outcome is not None:
                return
            self.outcome = outcome
            self.note = note
            future = self._future
        for button, handler in (
            (self.allow_button, self._on_allow),
            (self.session_button, self._on_session),
            (self.reject_button, self._on_reject),
        ):
            button.on_click(handler, remove=True)
            button.disabled = True
        self.message.value = f'<i class="{_NO_TEX}">{esc(self.summary())}</i>'
        if future is not None and not future.done():
            future.set_result(outcome)
