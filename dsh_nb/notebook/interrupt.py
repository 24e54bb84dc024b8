"""Kernel -> Interrupt ends a running call, even one that never yields.

While an async cell runs, ipykernel 7.4 replaces the SIGINT handler with
one that only *schedules* the cell's cancellation on the event loop
(``IPythonKernel._cancel_on_sigint``). A call whose body spins on the loop
thread (a sync tool, an async tool in a CPU loop, ``input()``, a presenter
that loops) never lets that callback run, so the interrupt did nothing.

While calls run, :func:`watch` chains a handler in front of the kernel's
(a :class:`~dsh_nb.tools.running.sigint.SigintHandler`).
Python runs signal handlers in the main thread between two bytecodes of
whatever runs there. If that is code of a call (the step of a call's own
task, or a presenter of a call), the handler raises
``asyncio.CancelledError`` right there; otherwise it only passes the
signal on.

Why this is safe:

- It raises only inside code of a call: the step of a task this module
  registered (the call's pipeline, listeners and tool body), or a
  presenter run under :func:`presenting`. Never inside ipykernel, zmq, the
  event loop's own Python code or another cell: the task check reads
  ``asyncio.current_task()``, which is set only while a task is stepped.
- ``CancelledError`` is what asyncio cancellation raises at an ``await``;
  the pipeline, the approval seam and ``LiveCall`` already handle it
  (deadline timers disposed, ``tool/cancelled`` journaled, the audit pair
  closed as ``cancelled``, the turn closed). The task ends *cancelled*,
  which asyncio keeps inside the loop; a ``KeyboardInterrupt`` raised in a
  task would leave the loop and end the kernel.
- It is the kernel's own translation: ipykernel turns SIGINT during an
  async cell into ``CancelledError`` too; this only delivers it where the
  loop is stuck. The kernel's handler still runs, so the cell is
  cancelled as before.
- The kernel's handler is put back when the last call ends, and only if
  ours is still the one installed (the kernel restores its own at cell
  end).

A body that catches ``BaseException`` and carries on cannot be stopped in
process; each further interrupt raises again.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dsh_nb.tools.running.sigint import PassOn, SigintHandler

__all__ = ["adopt", "presenting", "running_calls", "watch"]

_tasks: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()
_state: dict[str, Any] = {
    "presenting": 0,
    "loop": None,
    "wake": None,
}


def _in_call() -> bool:
    if _state["presenting"]:
        return True
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop in this thread
        return False
    return task is not None and task in _tasks


def _cancel_calls() -> None:
    """Cancel every call still running (on the loop, from the handler)."""
    for task in list(_tasks):
        if not task.done():
            task.cancel("interrupted (Kernel -> Interrupt)")


def _on_sigint(pass_on: PassOn) -> None:
    inside = _in_call()
    try:
        # The kernel's handler schedules the cell's cancellation.
        pass_on()
    except KeyboardInterrupt:
        # The default handler's KeyboardInterrupt must not reach a task:
        # raise CancelledError instead, below.
        if not inside:
            raise
    if inside:
        raise asyncio.CancelledError("interrupted (Kernel -> Interrupt)")
    # The loop is free (waiting for a worker thread, a prompt, a timer):
    # cancel the calls on it directly; the kernel's own callback goes
    # through another loop and may land late.
    loop = _state["loop"]
    if loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(_cancel_calls)


_HANDLER = SigintHandler(_on_sigint)


def _drain(sock: socket.socket) -> None:
    try:
        while sock.recv(64):
            pass
    except (BlockingIOError, InterruptedError, OSError):
        pass


def _wake_on_signal() -> None:
    """Make a signal wake the event loop's ``select``.

    The OS may deliver SIGINT to any thread, e.g. a worker thread running
    a sync body; Python then runs the handler only when the main thread
    next executes bytecode, and a loop asleep in ``select`` may not wake for
    a long time (ipykernel sets no wakeup fd). A socket whose read end the
    loop watches, as ``signal.set_wakeup_fd``, wakes it at once.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    try:
        old_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        loop.add_reader(reader.fileno(), _drain, reader)
    except (ValueError, OSError, NotImplementedError, RuntimeError):
        reader.close()
        writer.close()
        return
    _state.update(loop=loop, wake=(reader, writer, old_fd))


def _unwake() -> None:
    wake = _state["wake"]
    loop = _state["loop"]
    _state.update(loop=None, wake=None)
    if wake is not None:
        reader, writer, old_fd = wake
        try:
            signal.set_wakeup_fd(old_fd)
        except (ValueError, OSError):
            pass
        if loop is not None and not loop.is_closed():
            loop.remove_reader(reader.fileno())
        reader.close()
        writer.close()


@contextmanager
def watch() -> Iterator[None]:
    """Chain the interrupt handler in front of the kernel's while inside."""
    with _HANDLER:
        if _HANDLER.depth == 1:
            _wake_on_signal()
        try:
            yield
        finally:
            if _HANDLER.depth == 1:
                _unwake()


def adopt(task: asyncio.Task[Any]) -> asyncio.Task[Any]:
    """Mark ``task`` as a call's own: an interrupt may raise inside it."""
    _tasks.add(task)
    return task


@contextmanager
def presenting() -> Iterator[None]:
    """Mark a presenter call (synchronous code of a call) as interruptible."""
    _state["presenting"] += 1
    try:
        yield
    finally:
        _state["presenting"] -= 1


def running_calls() -> int:
    """How many calls are inside :func:`watch` (for tests and diagnostics)."""
    return _HANDLER.depth
