"""Sync tool bodies in worker threads (issue 10 item 7), with real threads.

Bodies coordinate with the test through ``threading.Event``; a wait has a
generous bound only so that a bug fails the test instead of hanging it.
Nothing here asserts how long anything took.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from dsh_nb.tools import ToolExecutionInput, ToolRegistry, tool
from dsh_nb.tools.running.abort import AbortController
from dsh_nb.tools.running.daemonthreads import DaemonThreads
from dsh_nb.tools.running.timeout import TOOL_TIMEOUT, TimeoutPolicy
from dsh_nb.tools.running.worker import (
    Abandoned,
    body_running,
    run_sync,
    worker_threads,
)

BOUND_S = 10.0  # only so a bug fails instead of hanging
CELL: contextvars.ContextVar[str] = contextvars.ContextVar("cell", default="none")


@pytest.fixture
def threads() -> Iterator[DaemonThreads]:
    pool = worker_threads()
    yield pool
    pool.shutdown(wait=False, cancel_futures=True)


@pytest.fixture
def one_thread() -> Iterator[DaemonThreads]:
    pool = worker_threads(max_workers=1)
    yield pool
    pool.shutdown(wait=False, cancel_futures=True)


async def until(predicate: Callable[[], bool]) -> None:
    """Let the loop run until ``predicate()`` holds (bounded).

    It yields once first, so a task made just before has started.
    """
    await asyncio.sleep(0)
    for _ in range(int(BOUND_S / 0.005)):
        if predicate():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition never held")


class Blocked:
    """A body that waits for the test; says when it started and ended."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.ended = threading.Event()

    def __call__(self, value: object = "late") -> object:
        self.started.set()
        try:
            assert self.release.wait(BOUND_S)
            return value
        finally:
            self.ended.set()


def ours(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    return [r for r in records if r.name in ("dsh_nb.tools", "asyncio")]


async def test_the_body_runs_in_a_thread_with_a_copy_of_the_context(
    threads: DaemonThreads,
) -> None:
    CELL.set("cell 7")

    def body(x: int) -> tuple[str, str, int]:
        seen = CELL.get()
        CELL.set("changed in the body")
        return threading.current_thread().name, seen, x * 2

    name, seen, doubled = await run_sync(threads, None, body, 21)
    assert name.startswith("dsh-tool") and name != threading.current_thread().name
    assert (seen, doubled) == ("cell 7", 42)
    assert CELL.get() == "cell 7"  # a copy: the body's set stays in the body


async def test_the_loop_stays_free_while_a_body_runs(
    threads: DaemonThreads,
) -> None:
    from_loop = threading.Event()

    def body() -> str:
        # Only a task on the loop sets the event: a blocked loop deadlocks.
        return "served" if from_loop.wait(BOUND_S) else "loop was blocked"

    job = asyncio.ensure_future(run_sync(threads, None, body))
    await asyncio.sleep(0)
    asyncio.get_running_loop().call_soon(from_loop.set)
    assert await job == "served"


async def test_a_body_failure_is_raised_to_the_caller(
    threads: DaemonThreads,
) -> None:
    def body() -> None:
        raise ValueError("bad input 3")

    with pytest.raises(ValueError, match="bad input 3"):
        await run_sync(threads, None, body)


async def test_a_body_raising_stop_iteration_still_settles(
    threads: DaemonThreads,
) -> None:
    def body() -> None:
        raise StopIteration("out of items")

    with pytest.raises(RuntimeError, match="StopIteration: out of items"):
        await asyncio.wait_for(run_sync(threads, None, body), BOUND_S)


async def test_an_abort_settles_at_once_and_drops_the_late_return(
    threads: DaemonThreads, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    body = Blocked()
    controller = AbortController()
    waiting = asyncio.ensure_future(run_sync(threads, controller.signal, body))
    await until(body.started.is_set)
    assert not waiting.done()
    controller.abort("TOOL_TIMEOUT after 200ms")
    with pytest.raises(Abandoned, match=r"may still be running.*TOOL_TIMEOUT"):
        await waiting
    assert not body.ended.is_set()  # it runs on
    body.release.set()
    await until(body.ended.is_set)
    await asyncio.sleep(0.05)  # let the late delivery reach the loop
    assert not ours(caplog.records)


async def test_a_late_failure_is_only_logged(
    threads: DaemonThreads, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="dsh_nb.tools")
    release, started = threading.Event(), threading.Event()

    def body() -> None:
        started.set()
        assert release.wait(BOUND_S)
        raise RuntimeError("failed after the call gave up")

    controller = AbortController()
    waiting = asyncio.ensure_future(run_sync(threads, controller.signal, body))
    await until(started.is_set)
    controller.abort()
    with pytest.raises(Abandoned):
        await waiting
    release.set()
    await until(
        lambda: any("failed after its call" in r.getMessage() for r in caplog.records)
    )


async def test_an_already_aborted_signal_does_not_start_the_body(
    threads: DaemonThreads,
) -> None:
    ran = threading.Event()
    controller = AbortController()
    controller.abort("gone")
    with pytest.raises(Exception, match=r"did not run \(gone\)") as caught:
        await run_sync(threads, controller.signal, ran.set)
    assert not isinstance(caught.value, Abandoned)  # nothing runs on
    assert await run_sync(threads, None, lambda: "later") == "later"
    assert not ran.is_set()


async def test_a_queued_body_whose_call_gives_up_never_starts(
    one_thread: DaemonThreads,
) -> None:
    ran = threading.Event()
    first = Blocked()
    running = asyncio.ensure_future(run_sync(one_thread, None, first, "first"))
    await until(first.started.is_set)
    controller = AbortController()
    waiting = asyncio.ensure_future(run_sync(one_thread, controller.signal, ran.set))
    await asyncio.sleep(0)
    controller.abort("TOOL_TIMEOUT after 50ms")
    with pytest.raises(Exception, match="did not run"):
        await waiting
    first.release.set()
    assert await running == "first"
    assert await run_sync(one_thread, None, lambda: "third") == "third"
    assert not ran.is_set()


async def test_an_abort_from_another_thread_settles_on_the_loop(
    threads: DaemonThreads,
) -> None:
    body = Blocked()
    controller = AbortController()
    waiting = asyncio.ensure_future(run_sync(threads, controller.signal, body))
    await until(body.started.is_set)
    aborter = threading.Thread(target=controller.abort, args=("from a thread",))
    aborter.start()
    try:
        with pytest.raises(Abandoned, match="from a thread"):
            await waiting
    finally:
        aborter.join()
        body.release.set()


async def test_a_signal_that_never_aborts_leaves_the_result(
    threads: DaemonThreads,
) -> None:
    controller = AbortController()
    for n in range(3):  # the signal's callback is undone after each call
        assert await run_sync(threads, controller.signal, lambda x: x + 1, n) == n + 1
    controller.abort()  # no call is listening any more: nothing happens


async def test_an_awaitable_return_is_awaited_on_the_loop(
    threads: DaemonThreads,
) -> None:
    loop_thread = threading.get_ident()

    async def on_the_loop() -> str:
        await asyncio.sleep(0)
        return "loop" if threading.get_ident() == loop_thread else "thread"

    def body() -> Any:
        return on_the_loop()

    assert await run_sync(threads, None, body) == "loop"


async def test_cancelling_stops_a_python_loop_in_the_body(
    one_thread: DaemonThreads,
) -> None:
    started, seen = threading.Event(), []

    def spin() -> None:
        started.set()
        try:
            while True:
                pass
        except KeyboardInterrupt:
            seen.append("stopped")
            raise

    waiting = asyncio.ensure_future(run_sync(one_thread, None, spin))
    await until(started.is_set)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await waiting
    assert seen == ["stopped"]
    assert not body_running(caught.value)
    # The one thread survived its KeyboardInterrupt and serves the next body.
    assert await run_sync(one_thread, None, lambda: "next") == "next"


async def test_a_body_blocked_in_c_is_said_to_run_on(
    one_thread: DaemonThreads, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    body = Blocked()
    waiting = asyncio.ensure_future(run_sync(one_thread, None, body))
    await until(body.started.is_set)
    waiting.cancel()
    try:
        with pytest.raises(asyncio.CancelledError) as caught:
            await waiting
        assert body_running(caught.value) and not body.ended.is_set()
    finally:
        body.release.set()
    await until(body.ended.is_set)
    assert await run_sync(one_thread, None, lambda: "next") == "next"
    # The stop it was asked fired once the wait returned: not a failure.
    assert not ours(caplog.records)


async def test_cancelling_a_queued_call_drops_its_body(
    one_thread: DaemonThreads,
) -> None:
    ran = threading.Event()
    first = Blocked()
    running = asyncio.ensure_future(run_sync(one_thread, None, first, "first"))
    await until(first.started.is_set)
    waiting = asyncio.ensure_future(run_sync(one_thread, None, ran.set))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await waiting
    assert not body_running(caught.value)
    first.release.set()
    assert await running == "first"
    assert await run_sync(one_thread, None, lambda: "third") == "third"
    assert not ran.is_set()


async def test_a_body_that_ended_before_the_abort_keeps_its_value(
    threads: DaemonThreads,
) -> None:
    controller = AbortController()
    ended = threading.Event()

    def body() -> str:
        ended.set()
        return "in time"

    waiting = asyncio.ensure_future(run_sync(threads, controller.signal, body))
    await asyncio.sleep(0)  # submitted
    # Block the loop (its delivery cannot run) until the body returned.
    assert ended.wait(BOUND_S)
    time.sleep(0.05)
    controller.abort("too late")
    assert await waiting == "in time"


async def test_an_abandoned_body_does_not_hold_up_the_next_calls(
    one_thread: DaemonThreads,
) -> None:
    # One thread, held by a body nobody waits for: a later call queues
    # behind it, and is itself given up on time by its own signal.
    stuck = Blocked()
    controller = AbortController()
    waiting = asyncio.ensure_future(run_sync(one_thread, controller.signal, stuck))
    await until(stuck.started.is_set)
    controller.abort("TOOL_TIMEOUT after 50ms")
    with pytest.raises(Abandoned):
        await waiting
    later = AbortController()
    queued = asyncio.ensure_future(run_sync(one_thread, later.signal, lambda: "x"))
    await asyncio.sleep(0.02)
    later.abort("TOOL_TIMEOUT after 20ms")
    with pytest.raises(Exception, match="did not run"):
        await queued
    stuck.release.set()
    assert await run_sync(one_thread, None, lambda: "after") == "after"


async def test_shutdown_cancels_queued_calls_and_leaves_a_running_one(
    one_thread: DaemonThreads,
) -> None:
    first = Blocked()
    running = asyncio.ensure_future(run_sync(one_thread, None, first, "finished"))
    await until(first.started.is_set)
    queued = asyncio.ensure_future(run_sync(one_thread, None, lambda: "never"))
    await asyncio.sleep(0)
    one_thread.shutdown(wait=False, cancel_futures=True)
    with pytest.raises(asyncio.CancelledError):
        await queued  # a queued body never starts
    first.release.set()
    assert await running == "finished"


# -- through the registry, as the notebook runs it ----------------------------


async def test_a_timeout_settles_while_the_sync_body_runs_on() -> None:
    release, started = threading.Event(), threading.Event()

    @tool(timeout_ms=50)
    def nap() -> str:
        """Wait for the test, ignoring the signal."""
        started.set()
        release.wait(BOUND_S)
        return "rested"

    registry = ToolRegistry(sync_tools="thread")
    registry.register(nap)
    TimeoutPolicy().install(registry)
    try:
        run = await registry.run(
            ToolExecutionInput(call_id="c1", name="nap", arguments={})
        )
        assert started.is_set()
        assert run.result.error is not None and run.result.error.code == TOOL_TIMEOUT
        assert run.outcome.status == "timeout" and run.outcome.body_running
    finally:
        release.set()
        assert registry.threads is not None
        registry.threads.shutdown(wait=False, cancel_futures=True)


async def test_the_registry_runs_sync_bodies_off_the_loop_thread() -> None:
    loop_thread = threading.get_ident()

    @tool
    def where() -> str:
        """Say which thread runs the body."""
        return "loop" if threading.get_ident() == loop_thread else "worker"

    registry = ToolRegistry(sync_tools="thread")
    registry.register(where)
    try:
        for _ in range(3):
            result = await registry.execute(
                ToolExecutionInput(call_id="c1", name="where", arguments={})
            )
            assert result.text == "worker"
    finally:
        assert registry.threads is not None
        registry.threads.shutdown(wait=False, cancel_futures=True)


async def test_a_sync_tool_raising_stop_iteration_is_an_error_result() -> None:
    @tool
    def exhausted() -> str:
        """Raise what next() raises on an empty iterator."""
        return next(iter([]))

    registry = ToolRegistry(sync_tools="thread")
    registry.register(exhausted)
    try:
        call = ToolExecutionInput(call_id="c1", name="exhausted", arguments={})
        result = await asyncio.wait_for(registry.execute(call), BOUND_S)
        assert result.is_error and "StopIteration" in result.text
    finally:
        assert registry.threads is not None
        registry.threads.shutdown(wait=False, cancel_futures=True)


async def test_more_stuck_bodies_than_a_standard_pool_holds_starve_nothing() -> None:
    # ThreadPoolExecutor keeps min(32, cpu + 4) threads: that many stuck
    # bodies would leave every later sync call queued until its timeout.
    release = threading.Event()
    registry = ToolRegistry(sync_tools="thread")
    TimeoutPolicy().install(registry)

    @tool(timeout_ms=20)
    def stuck() -> str:
        """Waits."""
        release.wait(30)
        return "late"

    @tool(timeout_ms=5_000)
    def quick() -> str:
        """Answers."""
        return "quick"

    registry.register(stuck)
    registry.register(quick)
    try:
        for i in range(40):
            late = await registry.execute(
                ToolExecutionInput(call_id=f"s{i}", name="stuck", arguments={})
            )
            assert late.error is not None and late.error.code == TOOL_TIMEOUT
        answer = await registry.execute(
            ToolExecutionInput(call_id="q", name="quick", arguments={})
        )
        assert answer.content == [{"type": "text", "text": "quick"}]
    finally:
        release.set()


def test_a_stuck_body_does_not_hold_up_the_process_exit() -> None:
    script = (
        "import asyncio, threading\n"
        "from dsh_nb.tools import ToolExecutionInput, ToolRegistry, tool\n"
        "from dsh_nb.tools.running.timeout import TimeoutPolicy\n"
        "registry = ToolRegistry(sync_tools='thread')\n"
        "TimeoutPolicy().install(registry)\n"
        "@tool(timeout_ms=50)\n"
        "def stuck() -> str:\n"
        "    '''Never returns.'''\n"
        "    threading.Event().wait()\n"
        "    return 'never'\n"
        "registry.register(stuck)\n"
        "r = asyncio.run(registry.execute(ToolExecutionInput(call_id='c', name='stuck', arguments={})))\n"
        "print(r.error.code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == TOOL_TIMEOUT
