"""Sync tool bodies in worker threads, so the event loop stays free.

Like Starlette's ``run_in_threadpool``: :func:`run_sync` hands the body
to an executor (what ``loop.run_in_executor`` does, keeping the
executor's future; :class:`~dsh_nb.tools.running.daemonthreads.DaemonThreads`
by default) with a copy
of the caller's context variables (in a kernel, the cell's output
routing, so its prints land in its own cell). While it runs, the loop
serves approvals, other calls and servers.

A call whose signal aborts (a timeout) stops waiting at once with
:class:`Abandoned`; the body runs on and its late return is dropped, a
late failure only logged. A cancelled call (an interrupt) asks the
body's thread to stop (:mod:`dsh_nb.tools.running.threadstop`) and waits
a grace period. A body still queued when its call gives up never starts.

A body that never returns keeps its thread, a daemon thread: it holds up
neither the loop, nor the other calls, nor the process's exit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.tools.running.daemonthreads import DaemonThreads
from dsh_nb.tools.running.threadstop import ask_to_stop, withdraw_stop

if TYPE_CHECKING:
    from dsh_nb.tools.values.refs import SignalRef

__all__ = [
    "ASYNC_MARK",
    "Abandoned",
    "body_running",
    "is_async",
    "mark_async",
    "run_sync",
    "worker_threads",
]

_log = logging.getLogger("dsh_nb.tools")

ASYNC_MARK: Final = "__dsh_async__"
"""Set on a definition's ``execute`` wrapper: whether the author's body is async."""

_STOP_GRACE_S: Final = 0.5


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


def worker_threads(max_workers: int | None = None) -> DaemonThreads:
    """The executor a registry runs its sync bodies on (threads ``dsh-tool``).

    Stop it with ``shutdown(wait=False, cancel_futures=True)``: queued
    bodies never start, running ones finish on their own.
    """
    return DaemonThreads(max_workers, thread_name_prefix="dsh-tool")


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


class _Body:
    """One sync body: its progress, shared by its thread and its call.

    The lock makes a stop, an abandon and the body's end exclusive, so a
    stop is never raised in a thread that moved on, and a body that ended
    first keeps its value.
    """

    __slots__ = ("gave_up", "ident", "lock", "loop", "running", "state", "stop_asked")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.lock = threading.Lock()
        self.state = _QUEUED
        self.ident = 0
        self.stop_asked = False
        self.gave_up: Exception | None = None  # what the call raises instead
        self.running: asyncio.Future[Any] | None = None

    def run(
        self, context: contextvars.Context, fn: Callable[..., Any], args: Any
    ) -> Any:
        """In the worker thread: the body's value, unless its call gave up."""
        with self.lock:
            if self.state != _QUEUED:
                return None  # dropped while queued
            self.state = _RUNNING
            self.ident = threading.get_ident()
        try:
            try:
                return context.run(fn, *args)
            except StopIteration as exc:
                # A future refuses StopIteration (the call would never
                # settle); asyncio turns one out of a coroutine into this too.
                raise RuntimeError(
                    f"the tool body raised StopIteration: {exc}"
                ) from exc
            except BaseException as exc:
                self._end()
                # Its call gave up on it (an abort, an interrupt): nobody
                # else hears of this failure, unless it is the stop asked.
                gone = self.gave_up is not None or self.stop_asked
                if gone and not (
                    self.stop_asked and isinstance(exc, KeyboardInterrupt)
                ):
                    _log.info(
                        "a tool body failed after its call stopped waiting for it",
                        exc_info=exc,
                    )
                raise
            finally:
                self._end()
        except KeyboardInterrupt:  # a stop that raced the body's end
            with self.lock:
                self.state = _DONE
            raise

    def _end(self) -> None:
        with self.lock:
            if self.state == _DONE:
                return
            self.state = _DONE
        if self.stop_asked:
            withdraw_stop(self.ident)

    def abandon(self, reason: object) -> None:
        """The call's signal aborted: stop waiting (from any thread)."""
        loop = self.loop
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is not loop:
            try:
                loop.call_soon_threadsafe(self.abandon, reason)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass
            return
        running = self.running
        if running is None or running.done():
            return
        with self.lock:
            state = self.state
            if state == _QUEUED:
                self.state = _DROPPED
                self.gave_up = _NotStarted(reason)
            elif state == _RUNNING:
                self.gave_up = Abandoned(reason)
        if state in (_QUEUED, _RUNNING):  # an ended body's value is on its way
            running.cancel()

    def stop(self) -> bool:
        """Ask a running body's thread to stop (once); drop a queued one."""
        with self.lock:
            if self.state == _QUEUED:
                self.state = _DROPPED
                return False
            if self.state != _RUNNING or self.stop_asked:
                return False
            self.stop_asked = ask_to_stop(self.ident)
            return self.stop_asked


async def run_sync(
    executor: concurrent.futures.Executor,
    signal: SignalRef | None,
    fn: Callable[..., Any],
    *args: object,
) -> Any:
    """``fn(*args)`` in a worker thread; :class:`Abandoned` once ``signal`` aborts.

    A return that is itself awaitable (a sync function handing back a
    coroutine) is awaited here, on the loop. A cancelled call raises
    ``CancelledError`` once the body stopped or the grace period ran out;
    :func:`body_running` then says whether the body runs on.
    """
    if signal is not None and signal.aborted:
        raise _NotStarted(signal.reason)
    loop = asyncio.get_running_loop()
    body = _Body(loop)
    job = executor.submit(body.run, contextvars.copy_context(), fn, args)
    running = body.running = asyncio.wrap_future(job, loop=loop)
    undo = signal.add_callback(body.abandon) if signal is not None else None
    try:
        # Not ``await running``: a GeneratorExit the body raised would be
        # thrown into the task, which closes every frame above this one
        # instead of raising there; read from the future, it is a failure.
        try:
            await asyncio.wait({running})
        except asyncio.CancelledError:
            running.cancel()
            raise
        out = running.result()
    except asyncio.CancelledError as exc:
        if body.gave_up is not None:
            raise body.gave_up from None
        if body.stop():
            ended = asyncio.wrap_future(job, loop=loop)
            ended.add_done_callback(_consume)  # its failure is the stop asked
            await asyncio.wait({ended}, timeout=_STOP_GRACE_S)
        if body.state <= _RUNNING:
            exc.dsh_body_running = True  # type: ignore[attr-defined]
        raise
    finally:
        if undo is not None:
            undo()
    if hasattr(out, "__await__"):
        out = await out
    return out


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def body_running(exc: BaseException) -> bool:
    """Whether a cancelled call left its body running in a worker thread."""
    return bool(getattr(exc, "dsh_body_running", False))
