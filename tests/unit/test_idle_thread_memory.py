"""An idle tool thread keeps nothing of the call it finished.

A call returning 100 MB in a kernel left the kernel 104 MB larger after
the cell let the result go: the worker thread, waiting for its next call,
still held the last return value in a local. The value here is an object
whose collection is watched through a weak reference.
"""

from __future__ import annotations

import gc
import time
import weakref

from dsh_nb.tools.running.daemonthreads import DaemonThreads


class Payload:
    """Stands for a big return value."""


def _gone(ref: weakref.ref[Payload]) -> bool:
    for _ in range(50):  # the thread drops it right after set_result
        gc.collect()
        if ref() is None:
            return True
        time.sleep(0.02)
    return False


def test_the_last_result_is_not_kept_by_the_idle_thread() -> None:
    pool = DaemonThreads(max_workers=1)
    try:
        future = pool.submit(Payload)
        ref = weakref.ref(future.result(timeout=10))
        del future
        assert _gone(ref)
        failed = pool.submit(lambda: 1 / 0)  # the thread is still there, idle
        assert isinstance(failed.exception(timeout=10), ZeroDivisionError)
    finally:
        pool.shutdown()
