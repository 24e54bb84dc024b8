"""A SIGINT handler that is put back as it was found.

Three parts of the notebook turn Kernel > Interrupt into something
gentler than a ``KeyboardInterrupt`` while they wait: a chat cancels its
task, a pending approval settles ``cancelled``, a running call is
cancelled where it is stuck. Each installs a handler for as long as it
waits and must leave the kernel's own handler in place afterwards, even
when the waits end out of order or ipykernel swaps handlers around a
request. :class:`SigintHandler` is that bookkeeping, written once.

The handler chains: it is given the handler it replaced, to call or not
(``pass_on``). Python runs signal handlers in the main thread only, so off
the main thread entering one does nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["PassOn", "SigintHandler"]

PassOn = Callable[[], None]
"""Hand the signal to the handler that was in place before (may raise)."""


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _deliver(handler: Any, signum: int, frame: FrameType | None) -> None:
    """Do what ``handler``, as ``signal.getsignal`` reported it, would do."""
    if callable(handler):
        handler(signum, frame)
    elif handler != signal.SIG_IGN:
        # SIG_DFL, or None (a handler not set from Python): Python's own
        # default for SIGINT is to raise KeyboardInterrupt.
        raise KeyboardInterrupt


class SigintHandler:
    """A SIGINT handler installed while any ``with`` block of it is open.

    Parameters
    ----------
    handle
        ``handle(pass_on)`` runs on each interrupt while installed, in the
        main thread between two bytecodes of whatever runs there: it
        should only post work to an event loop (or raise). Calling
        ``pass_on()`` gives the signal to the handler this one replaced;
        not calling it consumes the interrupt.

    Blocks nest and may end in any order; the handler that was in place at
    the first entry comes back when the last block ends, unless someone
    else has replaced this one meanwhile (then theirs stays). If this one
    comes back after its blocks ended (ipykernel restores the handlers it
    saved around a request), the next interrupt puts the older handler
    back and passes the signal on to it.
    """

    def __init__(self, handle: Callable[[PassOn], None]) -> None:
        self._handle = handle
        self._depth = 0
        self._replaced: Any = None
        self._handler = self._on_sigint  # one bound method: identity checks

    def __enter__(self) -> SigintHandler:
        self._depth += 1
        self.install()
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.step_aside()

    @property
    def depth(self) -> int:
        """How many ``with`` blocks of this handler are open."""
        return self._depth

    @property
    def installed(self) -> bool:
        """Whether this is the process's SIGINT handler now."""
        return signal.getsignal(signal.SIGINT) is self._handler

    def install(self) -> None:
        """Make this the SIGINT handler, remembering the one it replaces."""
        if not _on_main_thread() or self.installed:
            return
        replaced = signal.getsignal(signal.SIGINT)
        try:
            signal.signal(signal.SIGINT, self._handler)
        except (ValueError, OSError):  # pragma: no cover - no signals here
            return
        self._replaced = replaced

    def step_aside(self) -> None:
        """Put back the handler this one replaced, if this one is in place.

        Inside a block, this lets the next interrupt go past: a handler
        that consumes one interrupt calls it first thing.
        """
        if _on_main_thread() and self.installed:
            replaced = self._replaced
            signal.signal(
                signal.SIGINT,
                signal.default_int_handler if replaced is None else replaced,
            )

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        replaced = self._replaced

        def pass_on() -> None:
            _deliver(replaced, signum, frame)

        if self._depth == 0:
            self.step_aside()
            pass_on()
            return
        self._handle(pass_on)
