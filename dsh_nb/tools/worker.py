"""Sync tool bodies in worker threads, so the event loop stays free.

Like Starlette's ``run_in_threadpool``: the body runs in a thread with a
copy of the caller's context variables (in a kernel, the cell's output
routing, so its prints land in its own cell). While it runs, the loop
serves approvals, other calls and servers. A call whose signal aborts (a
timeout, a cancel) stops waiting at once; the thread cannot be stopped
from outside, so it runs on and its late return is dropped.

Everything about threads is in this module: the registry only asks
:meth:`WorkerThreads.run` for the body's future and :func:`settle` for
its value.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.tools.threadstop import ask_to_stop

if TYPE_CHECKING:
    from dsh_nb.tools.abort import AbortSignal

__all__ = [
    "ASYNC_MARK",
    "Abandoned",
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


class WorkerThreads:
    """A small pool that runs sync tool bodies off the event loop.

    Parameters
    ----------
    max_workers
        Threads at most; bodies beyond that queue. ``None`` lets the pool
        pick (as :class:`~concurrent.futures.ThreadPoolExecutor` does).
    """

    def __init__(self, max_workers: int | None = None) -> None:
        self._max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None

    def run(self, fn: Callable[..., Any], *args: object) -> asyncio.Future[Any]:
        """Start ``fn(*args)`` in a worker thread, in a copy of this context."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=self._max_workers, thread_name_prefix="dsh-tool"
            )
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        body = _Body(fn)
        future = loop.run_in_executor(self._pool, context.run, body, *args)
        _bodies[future] = body
        return future

    def shutdown(self) -> None:
        """Stop taking bodies; running ones finish in the background."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


class _Body:
    """One body in a worker thread: which thread runs it, and whether it ended.

    The lock makes :meth:`stop` and the body's end exclusive, so the
    exception is never set on a pool thread that moved on to another body.
    """

    __slots__ = ("done", "fn", "ident", "lock")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.lock = threading.Lock()
        self.ident: int | None = None
        self.done = False

    def __call__(self, *args: object) -> Any:
        with self.lock:
            self.ident = threading.get_ident()
        try:
            return self.fn(*args)
        finally:
            try:
                with self.lock:
                    self.done = True
            except KeyboardInterrupt:  # a stop that raced the body's end
                self.done = True

    def stop(self) -> bool:
        """Ask the thread to raise ``KeyboardInterrupt``; False if it ended."""
        with self.lock:
            if self.done or self.ident is None:
                return False
            return ask_to_stop(self.ident)


_bodies: weakref.WeakKeyDictionary[asyncio.Future[Any], _Body] = (
    weakref.WeakKeyDictionary()
)
_STOP_GRACE_S: Final = 0.5


async def _interrupted(future: asyncio.Future[Any]) -> None:
    """The caller is cancelled (an interrupt): ask the body's thread to stop.

    A Python loop stops within the grace period; a body blocked in C may
    not, and then runs on (its late return is dropped, like an abandoned
    body's): :func:`still_running` says so.
    """
    body = _bodies.get(future)
    if future.done() or body is None:
        return
    future.add_done_callback(_drop_late)
    if body.stop():
        await asyncio.wait({future}, timeout=_STOP_GRACE_S)


def still_running(future: asyncio.Future[Any]) -> bool:
    """Whether the body behind ``future`` is still running in its thread."""
    body = _bodies.get(future)
    return body is not None and not body.done


async def settle(future: asyncio.Future[Any], signal: AbortSignal | None) -> Any:
    """The body's return value, or :class:`Abandoned` once ``signal`` aborts.

    A return that is itself awaitable (a sync function handing back a
    coroutine) is awaited here, on the loop.
    """
    try:
        if signal is not None:
            loop = asyncio.get_running_loop()
            aborted: asyncio.Future[None] = loop.create_future()

            def on_abort(_reason: object) -> None:
                if not aborted.done():
                    aborted.set_result(None)

            undo = signal.add_callback(on_abort)
            try:
                if signal.aborted:
                    on_abort(None)
                await asyncio.wait(
                    {future, aborted}, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                undo()
            if not future.done():
                future.add_done_callback(_drop_late)
                raise Abandoned(signal.reason)
        # Shielded: a cancelled caller must not cancel the future before the
        # body's thread was asked to stop (below).
        out = await asyncio.shield(future)
    except asyncio.CancelledError as exc:
        await _interrupted(future)
        if still_running(future):
            exc.dsh_body_running = True  # type: ignore[attr-defined]
        raise
    if hasattr(out, "__await__"):
        out = await out
    return out


def body_running(exc: BaseException) -> bool:
    """Whether a cancelled call left its body running in a worker thread."""
    return bool(getattr(exc, "dsh_body_running", False))


def _drop_late(future: asyncio.Future[Any]) -> None:
    # A body that ends after its call gave up on it: its value is dropped,
    # its failure only logged.
    if not future.cancelled() and future.exception() is not None:
        _log.info("a tool body failed after its call stopped waiting for it")
