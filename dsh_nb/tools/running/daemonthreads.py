"""An executor whose threads never hold up the process, or each other.

The standard library's :class:`~concurrent.futures.ThreadPoolExecutor`
is what sync tool bodies want but for two facts about a body that never
returns (a timed-out ``time.sleep(1000)``, a hung socket):

- its threads are joined when the interpreter exits, so a script, an
  evaluation or ``python -m dsh_nb serve`` with one such body never
  exits, and a kernel restart waits for the kernel manager's kill;
- it keeps at most ``min(32, cpu + 4)`` threads, so that many stuck
  bodies leave every later sync call queued until it times out.

:class:`DaemonThreads` is the same executor (the standard
:class:`~concurrent.futures.Future`, a thread started when none is idle,
idle threads reused) with daemon threads and, unless asked for a bound,
no cap. The figures are in ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["DaemonThreads"]

_Work = tuple[concurrent.futures.Future[Any], Callable[..., Any], tuple[Any, ...]]


class DaemonThreads(concurrent.futures.Executor):
    """Run each submission on an idle daemon thread, or on a new one.

    Parameters
    ----------
    max_workers
        Threads at most; ``None`` starts one whenever all are busy, so a
        stuck body never keeps another waiting.
    thread_name_prefix
        Names the threads (``dsh-tool-0``, ...), as the standard pool does.
    """

    def __init__(
        self, max_workers: int | None = None, thread_name_prefix: str = "dsh-tool"
    ) -> None:
        if max_workers is not None and (
            isinstance(max_workers, bool)
            or not isinstance(max_workers, int)
            or max_workers < 1
        ):
            raise ValueError(f"max_workers must be a positive int, not {max_workers!r}")
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._work: queue.SimpleQueue[_Work | None] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads = 0
        self._closed = False

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        call = (lambda: fn(*args, **kwargs)) if kwargs else fn
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._work.put((future, call, () if kwargs else args))
            if self._idle.acquire(blocking=False):
                return future
            if self._max is None or self._threads < self._max:
                name = f"{self._prefix}-{self._threads}"
                self._threads += 1
                threading.Thread(target=self._serve, name=name, daemon=True).start()
        return future

    def _serve(self) -> None:
        while True:
            work = self._work.get()
            if work is None:
                return
            future, fn, args = work
            del work  # nothing of a finished call stays alive in an idle thread
            if future.set_running_or_notify_cancel():
                try:
                    value = fn(*args)
                except BaseException as exc:  # noqa: BLE001 - the caller's to see
                    future.set_exception(exc)
                else:
                    future.set_result(value)
                    # An idle thread waits in get() above with its locals
                    # alive: the last result (100 MB, say) must not be one.
                    del value
            del future, fn, args
            self._idle.release()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Start nothing more; idle threads end, busy ones after their body.

        ``wait`` is accepted for the executor's signature, but a daemon
        thread is never waited for: a body that never returns would block.
        """
        with self._lock:
            self._closed = True
            if cancel_futures:
                while True:
                    try:
                        work = self._work.get_nowait()
                    except queue.Empty:
                        break
                    if work is not None:
                        work[0].cancel()
            for _ in range(self._threads):
                self._work.put(None)
