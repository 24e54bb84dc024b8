"""``PendingAnswer``: one approval waiting for a person, on any channel.

The state under every approval prompt, whatever draws it: a future on the
kernel's loop, and the rule that the first answer wins. Buttons
(:class:`~dsh_nb.notebook.prompt.ApprovalPrompt`) and a stdin prompt
(:class:`~dsh_nb.notebook.stdinprompt.StdinApproval`) both settle it
through the same ``approve()`` / ``allow_for_session()`` / ``reject()`` /
``cancel()``, so the card, the journal and ``pending_approvals()`` see the
same thing whichever way the person answered. An answer may come from
another thread (JupyterLab may deliver widget messages on a subshell), so
every settle runs on the prompt's loop through ``call_soon_threadsafe``.
A callback that raises settles ``cancelled`` and says why: it never
reaches the kernel.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Final

from dsh_nb.notebook.frontend import RequestOrigin
from dsh_nb.tools.pipeline.approval import ApprovalOutcome

__all__ = ["AnswerCallback", "PendingAnswer"]

_SUMMARIES: Final = {
    "allowed-once": "allowed once",
    "rejected": "rejected",
    "cancelled": "cancelled",
    "unavailable": "unavailable",
}
_log = logging.getLogger(__name__)

AnswerCallback = Callable[[ApprovalOutcome], object]


class PendingAnswer:
    """An approval's outcome, settled once by whoever answers first.

    Parameters
    ----------
    tool_name
        The tool asking to run.
    reason
        Why the policy asks, if it said.
    call_id
        The call this prompt answers for.
    origin
        The kernel request that asked (used to spot a re-run cell).
    """

    def __init__(
        self,
        tool_name: str,
        *,
        reason: str | None = None,
        call_id: str | None = None,
        origin: RequestOrigin | None = None,
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

    def __repr__(self) -> str:
        state = self.outcome or "pending"
        return f"<{type(self).__name__} {self.tool_name!r} {state}>"

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
        """Answer ``allowed-once``, as *Allow once* would."""
        self._post(self._decide, "allowed-once")

    def allow_for_session(self) -> None:
        """Answer *Allow for this session*."""
        self._post(self._decide, "allowed-once", True)

    def reject(self) -> None:
        """Answer ``rejected``, as *Reject* would."""
        self._post(self._decide, "rejected")

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
        """Settle as ``cancelled`` if still pending."""
        if self.outcome is None:
            self._settle("cancelled", "the prompt was closed")

    def summary(self) -> str:
        """One line for people: what was asked and how it ended."""
        state = _SUMMARIES.get(self.outcome or "", "waiting for an answer")
        line = f'Approval for tool "{self.tool_name}": {state}'
        return f"{line} ({self.note})" if self.note else line

    def _settled(self) -> None:
        """Hook: draw the outcome (a view disables its buttons here)."""

    def _bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._loop_thread = threading.get_ident()

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
            except Exception as exc:  # noqa: BLE001 - a callback never kills the kernel
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
        try:
            self._settled()
        finally:
            if future is not None and not future.done():
                future.set_result(outcome)
