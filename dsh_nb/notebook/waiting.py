"""Waiting for a person: a timeout, the call's abort and the stop button.

An approval (buttons or a stdin line) and a tool's question wait the same
way: one :class:`PendingAsk` collects every way to cut the wait short,
and :func:`interruptible` lets the kernel's stop button reach it.

While an ask is pending, a SIGINT cancels it instead of the cell: the ask
settles ``cancelled`` and the cell finishes with that denial, so the audit
pair is always written. The next interrupt reaches the kernel as usual.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Final

from dsh_nb.tools.pipeline.approval import ApprovalDecision, DecidedBy
from dsh_nb.tools.running.sigint import PassOn, SigintHandler

__all__ = ["PendingAsk", "interruptible"]


def _noop() -> None:
    return None


class PendingAsk:
    """One approval being decided, and every way to cut it short.

    The timeout, the call's abort signal and a kernel interrupt all call
    :meth:`stop`, which cancels whatever is being awaited at that moment:
    an answerer registered after ours, then the prompt. ``stopped`` then
    says how the ask ended, for the service to record.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float | None):
        self.loop = loop
        self._thread = threading.get_ident()
        self.note: str | None = None
        self.stopped: ApprovalDecision | None = None
        self._targets: list[Callable[[str], object]] = []
        self._timer = None
        if timeout is not None:
            self._timer = loop.call_later(
                timeout, self.stop, f"no answer within {timeout:g} s", "timeout"
            )

    def stop(self, note: str, by: DecidedBy = "answerer") -> None:
        """Cancel what is awaited now and anything awaited later (loop only)."""
        if self.note is not None:
            return
        self.note = note
        self.stopped = ApprovalDecision(outcome="cancelled", decided_by=by)
        for target in tuple(self._targets):
            target(note)

    def stop_threadsafe(self, note: str, by: DecidedBy = "answerer") -> None:
        """:meth:`stop` from any thread: at once on the loop's, else posted."""
        if threading.get_ident() == self._thread:
            self.stop(note, by)
        elif not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.stop, note, by)

    def guard(self, target: Callable[[str], object]) -> Callable[[], None]:
        """Have :meth:`stop` call ``target(note)``; return the undo."""
        if self.note is not None:
            target(self.note)
            return _noop
        self._targets.append(target)
        return lambda: self._targets.remove(target)

    async def run(self, awaitable: Awaitable[object]) -> object:
        """Await ``awaitable`` unless stopped first (then ``stopped``)."""
        task = asyncio.ensure_future(awaitable)
        unguard = self.guard(lambda _note: task.cancel())
        try:
            await asyncio.wait({task})
        finally:
            unguard()
            if not task.done():
                task.cancel()
        if task.cancelled():
            return self.stopped or "cancelled"
        return task.result()

    def close(self) -> None:
        """Disarm the timer."""
        if self._timer is not None:
            self._timer.cancel()


_PENDING: Final[dict[PendingAsk, None]] = {}
"""The approvals waiting now, in every installed answerer (SIGINT is
process-wide)."""


def _interrupt_pending(_pass_on: PassOn) -> None:
    """While approvals are pending, a SIGINT cancels them instead of the cell.

    ipykernel's own handler for async cells only wakes the loop on the next
    message, so an awaiting cell ignores the stop button. This posts the
    cancel with ``call_soon_threadsafe`` (which wakes the loop), after
    stepping aside so that a second interrupt reaches the kernel.
    """
    _INTERRUPTS.step_aside()
    # A signal handler runs between any two bytecodes: never stop inline.
    for each in list(_PENDING):
        if not each.loop.is_closed():
            each.loop.call_soon_threadsafe(each.stop, "the kernel was interrupted")


_INTERRUPTS: Final = SigintHandler(_interrupt_pending)


@contextmanager
def interruptible(pending: PendingAsk) -> Iterator[None]:
    """Let a kernel interrupt stop ``pending`` while inside."""
    with _INTERRUPTS:
        _PENDING[pending] = None
        try:
            yield
        finally:
            del _PENDING[pending]
