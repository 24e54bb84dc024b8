"""The thread hop alone: a sync body to a worker thread and back, with peers.

Rows for ``benchmarks/pipeline.py``, timed in the same run as its worker
thread rows: the same ``add(1, 2)`` body through dsh_nb's ``run_sync``
on ``worker_threads()`` (what the registry's dispatch does, without the
pipeline around it), ``loop.run_in_executor`` on a
``ThreadPoolExecutor`` (no context copy), ``asyncio.to_thread`` (the
loop's default executor, the context copied), anyio's
``to_thread.run_sync`` (the context copied) and Starlette's
``run_in_threadpool`` (anyio's underneath). Process
CPU per round trip; every thread of the process counts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from _common import Case, add

from dsh_nb.tools.running.abort import AbortController
from dsh_nb.tools.running.worker import run_sync, worker_threads

OURS = "dsh_nb run_sync on worker_threads()"
TOOL = "hop"


def thread_hop_cases() -> tuple[
    list[Case], list[tuple[str, str, float | None, str]], Callable[[], None]
]:
    """The hop rows, the peers that are not installed, and a cleanup."""
    threads = worker_threads()
    pool = ThreadPoolExecutor()
    never = AbortController().signal  # as a call with a timeout passes one

    def ours() -> Any:
        return run_sync(threads, never, add, 1, 2)

    def executor() -> Any:
        return asyncio.get_running_loop().run_in_executor(pool, add, 1, 2)

    cases = [
        Case(OURS, TOOL, ours, True, "with an abort signal, as under a timeout"),
        Case("loop.run_in_executor", TOOL, executor, True, "no context copy"),
        Case(
            "asyncio.to_thread",
            TOOL,
            lambda: asyncio.to_thread(add, 1, 2),
            True,
            "default executor; copies the context",
        ),
    ]
    missing: list[tuple[str, str, float | None, str]] = []
    try:
        import anyio.to_thread
    except ImportError:
        missing.append(("anyio to_thread.run_sync", TOOL, None, "not installed"))
    else:
        cases.append(
            Case(
                "anyio to_thread.run_sync",
                TOOL,
                lambda: anyio.to_thread.run_sync(add, 1, 2),
                True,
                "copies the context; capacity limiter",
            )
        )
    try:
        from starlette.concurrency import run_in_threadpool
    except ImportError:
        missing.append(("starlette run_in_threadpool", TOOL, None, "not installed"))
    else:
        cases.append(
            Case(
                "starlette run_in_threadpool",
                TOOL,
                lambda: run_in_threadpool(add, 1, 2),
                True,
                "anyio's run_sync underneath",
            )
        )

    def cleanup() -> None:
        threads.shutdown(wait=False)
        pool.shutdown(wait=False)

    return cases, missing, cleanup
