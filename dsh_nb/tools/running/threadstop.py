"""Ask a worker thread to stop: an exception raised in it asynchronously.

A sync tool body that runs in a worker thread cannot be cancelled the way a
task is. CPython can set a pending exception on another thread
(``PyThreadState_SetAsyncExc``), which that thread raises at its next
bytecode boundary. That stops a Python loop at once; a thread blocked in C
(``time.sleep``, a socket read, ``input()``) raises only when the call
returns, so the caller must say that the body may still be running.

``KeyboardInterrupt`` is raised, not a custom type: a body's ``except
Exception`` does not swallow it, and in a worker thread it ends only that
body (the pool records it on the body's future and serves the next one).
"""

from __future__ import annotations

import ctypes
import threading

__all__ = ["ask_to_stop", "current_ident", "withdraw_stop"]


def current_ident() -> int:
    """The calling thread's id, as :func:`ask_to_stop` takes it."""
    return threading.get_ident()


def ask_to_stop(ident: int, exc: type[BaseException] = KeyboardInterrupt) -> bool:
    """Have thread ``ident`` raise ``exc`` at its next bytecode; True if set.

    False when no such thread runs (it ended already). Never call it on
    the event loop's own thread: there, cancellation is the way.
    """
    if ident == threading.get_ident():
        raise RuntimeError("ask_to_stop() cannot target the calling thread")
    setter = ctypes.pythonapi.PyThreadState_SetAsyncExc
    count = setter(ctypes.c_ulong(ident), ctypes.py_object(exc))
    if count > 1:  # pragma: no cover - CPython guarantees 0 or 1 per ident
        setter(ctypes.c_ulong(ident), None)
        return False
    return bool(count == 1)


def withdraw_stop(ident: int) -> None:
    """Drop a stop asked of thread ``ident`` that it has not raised yet.

    A worker thread calls it on itself once its body ended: a stop that
    raced the body's end must not fire later in the pool's own code.
    """
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)
