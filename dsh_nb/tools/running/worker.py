"""Sync tool bodies in worker threads, so the event loop stays free.

Like Starlette's ``run_in_threadpool``: the body runs in a thread with a
copy of the caller's context variables (in a kernel, the cell's output
routing, so its prints land in its own cell). While it runs, the loop
serves approvals, other calls and servers. A call whose signal aborts (a
timeout) stops waiting at once; the body runs on and its late return is
dropped. A cancelled call (an interrupt) asks the thread to stop, with a
grace period. A body still queued when its call gives up never starts.
The registry only asks :meth:`WorkerThreads.run` for a :class:`Body` and
:func:`settle` for its value.

The pool is written here, not taken from ``loop.run_in_executor``: most
of a thread hop's CPU is threads put to sleep and woken (futex calls,
context switches), and ``ThreadPoolExecutor`` adds lock traffic per body
(its ``concurrent.futures.Future`` and its ``Condition``, the idle
semaphore, the chaining to the loop's future), as did this module's
``asyncio.wait``, ``asyncio.shield`` and ``WeakKeyDictionary``. Here a
body is one ``SimpleQueue.put``, two rarely contended locks, and one
``call_soon_threadsafe`` settling the only future the loop awaits.
Measured by the ``hop`` rows of ``benchmarks/pipeline.py`` (a trivial
body, process CPU per round trip, median of 8 runs on the shared 2-core
VM, 2026-12-01): this pool 62 µs (49-149); ``asyncio.to_thread`` 104,
``loop.run_in_executor`` 105, Starlette's ``run_in_threadpool`` 136,
anyio's ``to_thread.run_sync`` 153; this module on ``run_in_executor``
before, 118 µs (112-219).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import itertools
import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.tools.running.threadstop import ask_to_stop, withdraw_stop

if TYPE_CHECKING:
    from dsh_nb.tools.running.abort import AbortSignal

__all__ = [
    "ASYNC_MARK",
    "Abandoned",
    "Body",
    "WorkerThreads",
    "body_running",
    "is_async",
    "mark_async",
    "settle",
    "still_running",
]

_log = logging.getLogger("dsh_nb.tools")

ASYNC_MARK: Final = "__dsh_async__"
"""Set on a definition's ``execute`` wrapper: whether the author's body is async."""


def mark_async(run: Callable[..., Any], body: object) -> None:
    """Note on ``run`` whether the body it wraps is a coroutine function."""
    try:
        setattr(run, ASYNC_MARK, _coroutine_function(body))
    except (AttributeError, TypeError):  # a callable that takes no attributes
        pass


def _coroutine_function(fn: object) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an async __call__ counts
    )


def is_async(execute: object) -> bool:
    """Whether a definition's ``execute`` runs on the loop (async)."""
    marked = getattr(execute, ASYNC_MARK, None)
    if isinstance(marked, bool):
        return marked
    return _coroutine_function(execute)


class Abandoned(Exception):
    """The call stopped waiting for a body that is still running."""

    def __init__(self, reason: object) -> None:
        super().__init__(
            "stopped waiting for the tool: it may still be running in a worker "
            f"thread ({reason})"
        )


class _NotStarted(Exception):
    """The call stopped waiting before its body started; it never will."""

    def __init__(self, reason: object) -> None:
        super().__init__(
            "stopped waiting for the tool before it started in a worker "
            f"thread; it did not run ({reason})"
        )


# A body's progress, changed only under its lock.
_QUEUED: Final = 0
_RUNNING: Final = 1
_DONE: Final = 2
_DROPPED: Final = 3  # given up while queued: it never starts
_STOP_GRACE_S: Final = 0.5


class WorkerThreads:
    """A small pool that runs sync tool bodies off the event loop.

    Threads start when a body finds none idle, up to ``max_workers``;
    bodies beyond that queue. They are daemon threads: a body blocked in
    C must not keep the interpreter (the kernel) from exiting.

    Parameters
    ----------
    max_workers
        Threads at most. ``None`` takes ``min(32, os.cpu_count() + 4)``,
        as :class:`~concurrent.futures.ThreadPoolExecutor` does.
    """

    def __init__(self, max_workers: int | None = None) -> None:
        if max_workers is None:
            max_workers = min(32, (os.cpu_count() or 1) + 4)
        if isinstance(max_workers, bool) or not (
            isinstance(max_workers, int) and max_workers > 0
        ):
            raise ValueError(
                f"WorkerThreads(max_workers=...) must be a positive int, "
                f"got {max_workers!r}"
            )
        self._max_workers = max_workers
        self._lock = threading.Lock()
        self._crew: _Crew | None = None
        self._names = itertools.count()

    def run(self, fn: Callable[..., Any], *args: object) -> Body:
        """Start ``fn(*args)`` in a worker thread, in a copy of this context."""
        body = Body(fn, args, asyncio.get_running_loop())
        with self._lock:
            crew = self._crew
            if crew is None:
                crew = self._crew = _Crew(self._lock)
            if crew.idle:
                crew.idle -= 1
            elif crew.threads < self._max_workers:
                # If the thread cannot start, the call fails here, before
                # its body is queued where no thread would take it.
                threading.Thread(
                    target=crew.serve,
                    name=f"dsh-tool_{next(self._names)}",
                    daemon=True,
                ).start()
                crew.threads += 1
            crew.jobs.put(body)
        return body

    def shutdown(self) -> None:
        """Stop taking bodies; running ones finish in the background.

        Queued bodies never start: their calls end as cancelled. Each
        thread exits once its body ends. A later :meth:`run` starts afresh.
        """
        with self._lock:
            crew, self._crew = self._crew, None
        if crew is not None:
            crew.close()


class _Crew:
    """The threads of one pool generation and their queue (until shutdown)."""

    __slots__ = ("idle", "jobs", "lock", "threads")

    def __init__(self, lock: threading.Lock) -> None:
        self.jobs: queue.SimpleQueue[Body | None] = queue.SimpleQueue()
        self.lock = lock  # the pool's: guards the two counts
        self.threads = 0
        # Like ThreadPoolExecutor's idle semaphore: a token per body a thread
        # finished; a new body takes one instead of starting a thread.
        self.idle = 0

    def serve(self) -> None:
        """A worker thread's life: run bodies until the crew closes."""
        ident = threading.get_ident()
        take = self.jobs.get
        while (body := take()) is not None:
            try:
                body.run_here(ident, self)
            except BaseException:  # noqa: BLE001 - the thread must live on
                _log.exception("a dsh_nb worker thread failed between bodies")
            body = None  # not kept alive by an idle thread

    def free(self) -> None:
        """This thread is about to take its next body: one more idle token."""
        with self.lock:
            self.idle += 1

    def close(self) -> None:
        while True:
            try:
                body = self.jobs.get_nowait()
            except queue.Empty:
                break
            if body is not None:
                body.drop()
        for _ in range(self.threads):
            self.jobs.put(None)


class Body:
    """One sync body in the pool: its call, its loop's future, its progress.

    ``waiter`` is the one future the loop awaits: the thread settles it
    with the body's value, or an abort with :class:`Abandoned`, whichever
    comes first. The lock makes a stop and the body's end exclusive, so a
    stop is never raised in a thread that moved on to another body.
    """

    __slots__ = (
        "args",
        "context",
        "ended",
        "fn",
        "ident",
        "lock",
        "loop",
        "state",
        "stop_asked",
        "waiter",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple[object, ...],
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.fn = fn
        self.args = args
        self.context = contextvars.copy_context()
        self.loop = loop
        self.waiter: asyncio.Future[Any] = loop.create_future()
        self.lock = threading.Lock()
        self.state = _QUEUED
        self.ident = 0
        self.stop_asked = False
        self.ended: asyncio.Future[None] | None = None  # only while interrupted

    def run_here(self, ident: int, crew: _Crew) -> None:
        """Run the body in this worker thread and hand its end to the loop."""
        with self.lock:
            if self.state != _QUEUED:
                crew.free()
                return  # dropped while queued
            self.state = _RUNNING
            self.ident = ident
        ok = False
        value: Any = None
        try:
            try:
                value = self.context.run(self.fn, *self.args)
                ok = True
            except BaseException as exc:  # noqa: BLE001 - handed to the call
                value = exc
            with self.lock:
                self.state = _DONE
            if self.stop_asked:
                withdraw_stop(ident)
        except KeyboardInterrupt as exc:  # a stop that raced the body's end
            ok, value = False, exc
            with self.lock:
                self.state = _DONE
        crew.free()
        # Last: the loop wakes now, and finds the GIL free once this thread
        # waits for its next body.
        try:
            self.loop.call_soon_threadsafe(_deliver, self, ok, value)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass

    def abandon(self, reason: object) -> None:
        """Settle the call with :class:`Abandoned` (a signal's callback)."""
        loop = self.loop
        if asyncio._get_running_loop() is not loop:  # aborted from a thread
            if not loop.is_closed():
                loop.call_soon_threadsafe(self.abandon, reason)
            return
        if self.waiter.done():
            return
        with self.lock:
            state = self.state
            if state == _QUEUED:
                self.state = _DROPPED
        if state == _RUNNING:
            self.waiter.set_exception(Abandoned(reason))
        elif state != _DONE:  # a body that ended: its value is on its way
            self.waiter.set_exception(_NotStarted(reason))

    def stop(self) -> bool:
        """Ask a running body's thread to stop (once); drop a queued one.

        True when a stop was asked of a thread; False when the body
        ended, never started, or was asked already.
        """
        with self.lock:
            if self.state == _QUEUED:
                self.state = _DROPPED
                return False
            if self.state != _RUNNING or self.stop_asked:
                return False
            self.stop_asked = ask_to_stop(self.ident)
            return self.stop_asked

    def drop(self) -> None:
        """The pool closed before this body started: cancel its call."""
        with self.lock:
            if self.state != _QUEUED:
                return
            self.state = _DROPPED
        try:
            self.loop.call_soon_threadsafe(self.waiter.cancel)
        except RuntimeError:  # the loop is closed
            pass


def _deliver(body: Body, ok: bool, value: Any) -> None:
    # On the loop: the body ended in its thread.
    waiter = body.waiter
    if not waiter.done():
        if ok:
            waiter.set_result(value)
        elif isinstance(value, StopIteration):
            # A future refuses StopIteration (the call would never settle);
            # asyncio turns one out of a coroutine into RuntimeError too.
            error = RuntimeError(f"the tool body raised StopIteration: {value}")
            error.__cause__ = value
            waiter.set_exception(error)
        else:
            waiter.set_exception(value)
    elif not ok and not (body.stop_asked and isinstance(value, KeyboardInterrupt)):
        # A body that ends after its call gave up on it: its value is
        # dropped, its failure only logged.
        _log.info(
            "a tool body failed after its call stopped waiting for it",
            exc_info=value,
        )
    ended = body.ended
    if ended is not None and not ended.done():
        ended.set_result(None)


async def settle(body: Body, signal: AbortSignal | None) -> Any:
    """The body's return value, or :class:`Abandoned` once ``signal`` aborts.

    A return that is itself awaitable (a sync function handing back a
    coroutine) is awaited here, on the loop.
    """
    undo = None
    if signal is not None:
        # Runs at once on an aborted signal (AbortSignal's contract).
        undo = signal.add_callback(body.abandon)
    try:
        out = await body.waiter
    except asyncio.CancelledError as exc:
        await _interrupted(body)
        if still_running(body):
            exc.dsh_body_running = True  # type: ignore[attr-defined]
        raise
    finally:
        if undo is not None:
            undo()
    if hasattr(out, "__await__"):
        out = await out
    return out


async def _interrupted(body: Body) -> None:
    """The caller is cancelled (an interrupt): ask the body's thread to stop.

    A Python loop stops within the grace period; a body blocked in C may
    not, and then runs on (its late return is dropped, like an abandoned
    body's): :func:`still_running` says so. A body still queued never
    starts.
    """
    if body.stop():
        ended = body.ended = body.loop.create_future()
        await asyncio.wait({ended}, timeout=_STOP_GRACE_S)


def still_running(body: Body) -> bool:
    """Whether ``body`` is still running in its thread, or queued to."""
    return body.state <= _RUNNING


def body_running(exc: BaseException) -> bool:
    """Whether a cancelled call left its body running in a worker thread."""
    return bool(getattr(exc, "dsh_body_running", False))
