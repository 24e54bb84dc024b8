"""Sync tool bodies in worker threads (issue 10 item 7), with real threads.

Bodies coordinate with the test through ``threading.Event``; a wait has a
generous bound only so that a bug fails the test instead of hanging it.
Nothing here asserts how long anything took.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from dsh_nb.tools import ToolExecutionInput, ToolRegistry, tool
from dsh_nb.tools.running.abort import AbortController, AbortSignal
from dsh_nb.tools.running.timeout import TOOL_TIMEOUT, TimeoutPolicy
from dsh_nb.tools.running.worker import (
    Abandoned,
    WorkerThreads,
    body_running,
    settle,
    still_running,
)

BOUND_S = 10.0  # only so a bug fails instead of hanging
CELL: contextvars.ContextVar[str] = contextvars.ContextVar("cell", default="none")


@pytest.fixture
def threads() -> Any:
    pool = WorkerThreads()
    yield pool
    pool.shutdown()


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


def blocked(release: threading.Event, started: threading.Event) -> Callable[..., Any]:
    def body(value: object = "late") -> object:
        started.set()
        assert release.wait(BOUND_S)
        return value

    return body


async def test_the_body_runs_in_a_thread_with_a_copy_of_the_context(
    threads: WorkerThreads,
) -> None:
    CELL.set("cell 7")

    def body(x: int) -> tuple[str, str, int]:
        seen = CELL.get()
        CELL.set("changed in the body")
        return threading.current_thread().name, seen, x * 2

    name, seen, doubled = await settle(threads.run(body, 21), None)
    assert name.startswith("dsh-tool") and name != threading.current_thread().name
    assert (seen, doubled) == ("cell 7", 42)
    assert CELL.get() == "cell 7"  # a copy: the body's set stays in the body


async def test_the_loop_stays_free_while_a_body_runs(threads: WorkerThreads) -> None:
    from_loop = threading.Event()

    def body() -> str:
        # Only a task on the loop sets the event: a blocked loop deadlocks.
        return "served" if from_loop.wait(BOUND_S) else "loop was blocked"

    job = threads.run(body)
    await asyncio.sleep(0)
    asyncio.get_running_loop().call_soon(from_loop.set)
    assert await settle(job, None) == "served"


async def test_a_body_failure_is_raised_to_the_caller(threads: WorkerThreads) -> None:
    def body() -> None:
        raise ValueError("bad input 3")

    with pytest.raises(ValueError, match="bad input 3"):
        await settle(threads.run(body), None)


async def test_a_body_raising_stop_iteration_still_settles(
    threads: WorkerThreads,
) -> None:
    def body() -> None:
        raise StopIteration("out of items")

    ended = settle(threads.run(body), None)
    with pytest.raises(RuntimeError, match="StopIteration: out of items"):
        await asyncio.wait_for(ended, BOUND_S)


async def test_an_abort_settles_at_once_and_drops_the_late_return(
    threads: WorkerThreads, caplog: pytest.LogCaptureFixture
) -> None:
    release, started = threading.Event(), threading.Event()
    controller = AbortController()
    job = threads.run(blocked(release, started))
    waiting = asyncio.ensure_future(settle(job, controller.signal))
    await until(started.is_set)
    assert not waiting.done()
    controller.abort("TOOL_TIMEOUT after 200ms")
    with pytest.raises(Abandoned, match=r"may still be running.*TOOL_TIMEOUT"):
        await waiting
    assert still_running(job)
    caplog.set_level(logging.INFO, logger="dsh_nb.tools")
    release.set()
    await until(lambda: not still_running(job))
    await asyncio.sleep(0.05)  # let the late delivery reach the loop
    assert not [r for r in caplog.records if r.name == "dsh_nb.tools"]


async def test_a_late_failure_is_only_logged(
    threads: WorkerThreads, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="dsh_nb.tools")
    release, started = threading.Event(), threading.Event()

    def body() -> None:
        started.set()
        assert release.wait(BOUND_S)
        raise RuntimeError("failed after the call gave up")

    controller = AbortController()
    job = threads.run(body)
    waiting = asyncio.ensure_future(settle(job, controller.signal))
    await until(started.is_set)
    controller.abort()
    with pytest.raises(Abandoned):
        await waiting
    release.set()
    await until(
        lambda: any("failed after its call" in r.getMessage() for r in caplog.records)
    )


async def test_an_already_aborted_signal_does_not_start_the_body(
    threads: WorkerThreads,
) -> None:
    ran = threading.Event()
    controller = AbortController()
    controller.abort("gone")
    with pytest.raises(Exception, match=r"did not run \(gone\)") as caught:
        await settle(threads.run(ran.set), controller.signal)
    assert not isinstance(caught.value, Abandoned)  # nothing runs on
    # Bodies start in order: once a later one ran, the first was skipped.
    assert await settle(threads.run(lambda: "later"), None) == "later"
    assert not ran.is_set()


async def test_a_queued_body_whose_call_gives_up_never_starts() -> None:
    pool = WorkerThreads(max_workers=1)
    release, started, ran = threading.Event(), threading.Event(), threading.Event()
    try:
        first = pool.run(blocked(release, started), "first")
        await until(started.is_set)
        controller = AbortController()
        queued = pool.run(ran.set)
        waiting = asyncio.ensure_future(settle(queued, controller.signal))
        await asyncio.sleep(0)
        controller.abort("TOOL_TIMEOUT after 50ms")
        with pytest.raises(Exception, match="did not run"):
            await waiting
        assert not still_running(queued)
        release.set()
        assert await settle(first, None) == "first"
        assert await settle(pool.run(lambda: "third"), None) == "third"
        assert not ran.is_set()
    finally:
        release.set()
        pool.shutdown()


async def test_an_abort_from_another_thread_settles_on_the_loop(
    threads: WorkerThreads,
) -> None:
    release, started = threading.Event(), threading.Event()
    controller = AbortController()
    job = threads.run(blocked(release, started))
    waiting = asyncio.ensure_future(settle(job, controller.signal))
    await until(started.is_set)
    aborter = threading.Thread(target=controller.abort, args=("from a thread",))
    aborter.start()
    try:
        with pytest.raises(Abandoned, match="from a thread"):
            await waiting
    finally:
        aborter.join()
        release.set()


async def test_a_signal_that_never_aborts_leaves_the_result(
    threads: WorkerThreads,
) -> None:
    controller = AbortController()
    for n in range(3):  # the signal's callback is undone after each call
        assert await settle(threads.run(lambda x: x + 1, n), controller.signal) == n + 1
    controller.abort()  # no call is listening any more: nothing happens


async def test_an_awaitable_return_is_awaited_on_the_loop(
    threads: WorkerThreads,
) -> None:
    loop_thread = threading.get_ident()

    async def on_the_loop() -> str:
        await asyncio.sleep(0)
        return "loop" if threading.get_ident() == loop_thread else "thread"

    def body() -> Any:
        return on_the_loop()

    assert await settle(threads.run(body), None) == "loop"


async def test_cancelling_stops_a_python_loop_in_the_body(
    threads: WorkerThreads,
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

    job = threads.run(spin)
    waiting = asyncio.ensure_future(settle(job, None))
    await until(started.is_set)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError) as caught:
        await waiting
    assert seen == ["stopped"]
    assert not body_running(caught.value) and not still_running(job)
    # The thread survived its KeyboardInterrupt and serves the next body.
    assert await settle(threads.run(lambda: "next"), None) == "next"


async def test_a_body_blocked_in_c_is_said_to_run_on(
    threads: WorkerThreads, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="dsh_nb.tools")
    release, started = threading.Event(), threading.Event()
    job = threads.run(blocked(release, started))
    waiting = asyncio.ensure_future(settle(job, None))
    await until(started.is_set)
    waiting.cancel()
    try:
        with pytest.raises(asyncio.CancelledError) as caught:
            await waiting
        assert body_running(caught.value) and still_running(job)
    finally:
        release.set()
    await until(lambda: not still_running(job))
    assert await settle(threads.run(lambda: "next"), None) == "next"
    # The stop it was asked fired once the wait returned: not a failure.
    assert not [r for r in caplog.records if r.name == "dsh_nb.tools"]


async def test_cancelling_a_queued_call_drops_its_body() -> None:
    pool = WorkerThreads(max_workers=1)
    release, started, ran = threading.Event(), threading.Event(), threading.Event()
    try:
        first = pool.run(blocked(release, started), "first")
        await until(started.is_set)
        queued = pool.run(ran.set)
        waiting = asyncio.ensure_future(settle(queued, None))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError) as caught:
            await waiting
        assert not body_running(caught.value) and not still_running(queued)
        release.set()
        assert await settle(first, None) == "first"
        assert await settle(pool.run(lambda: "third"), None) == "third"
        assert not ran.is_set()
    finally:
        release.set()
        pool.shutdown()


async def test_a_body_that_ended_before_the_abort_keeps_its_value(
    threads: WorkerThreads,
) -> None:
    job = threads.run(lambda: "in time")
    # Block the loop (its delivery cannot run) until the thread is done.
    for _ in range(int(BOUND_S / 0.001)):
        if not still_running(job):
            break
        time.sleep(0.001)
    assert not still_running(job)
    assert await settle(job, AbortSignal.aborted_with("too late")) == "in time"


async def test_bodies_beyond_max_workers_queue() -> None:
    pool = WorkerThreads(max_workers=1)
    try:
        release, started = threading.Event(), threading.Event()
        names: list[str] = []

        def second() -> str:
            names.append(threading.current_thread().name)
            return "second"

        first = pool.run(blocked(release, started), "first")
        queued = pool.run(second)
        await until(started.is_set)
        await asyncio.sleep(0.05)
        assert names == []  # one thread, busy with the first body
        release.set()
        assert await settle(first, None) == "first"
        assert await settle(queued, None) == "second"
        assert names[0].startswith("dsh-tool")
    finally:
        pool.shutdown()


async def test_no_more_than_max_workers_bodies_run_at_once() -> None:
    pool = WorkerThreads(max_workers=3)
    release = threading.Event()
    lock = threading.Lock()
    running: list[str] = []
    names: set[str] = set()

    def body(i: int) -> int:
        with lock:
            running.append(threading.current_thread().name)
            names.add(threading.current_thread().name)
        assert release.wait(BOUND_S)
        return i

    try:
        jobs = [pool.run(body, i) for i in range(8)]
        await until(lambda: len(running) == 3)
        await asyncio.sleep(0.05)
        assert len(running) == 3  # the other five wait for a thread
        release.set()
        assert [await settle(job, None) for job in jobs] == list(range(8))
        assert len(running) == 8 and len(names) == 3
    finally:
        release.set()
        pool.shutdown()


async def test_a_thread_that_cannot_start_fails_the_call_not_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = WorkerThreads(max_workers=1)

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    try:
        with monkeypatch.context() as patched:
            patched.setattr(threading.Thread, "start", refuse)
            with pytest.raises(RuntimeError, match="can't start"):
                pool.run(lambda: "lost")
        # Nothing was queued and no thread counted: the next body gets one.
        ran = settle(pool.run(lambda: "ran"), None)
        assert await asyncio.wait_for(ran, BOUND_S) == "ran"
    finally:
        pool.shutdown()


def test_max_workers_must_be_a_positive_int() -> None:
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="max_workers"):
            WorkerThreads(max_workers=bad)  # type: ignore[arg-type]


async def test_sequential_calls_reuse_one_thread(threads: WorkerThreads) -> None:
    names = {
        await settle(threads.run(lambda: threading.current_thread().name), None)
        for _ in range(20)
    }
    assert len(names) == 1


def pool_threads(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


async def test_shutdown_lets_a_running_body_finish_and_leaks_no_thread() -> None:
    before = set(pool_threads("dsh-tool"))
    pool = WorkerThreads(max_workers=1)
    release, started = threading.Event(), threading.Event()
    running = pool.run(blocked(release, started), "finished")
    queued = pool.run(lambda: "never")
    await until(started.is_set)
    pool.shutdown()
    with pytest.raises(asyncio.CancelledError):
        await settle(queued, None)  # a queued body never starts
    release.set()
    assert await settle(running, None) == "finished"
    await until(lambda: set(pool_threads("dsh-tool")) <= before)
    # The pool takes bodies again after a shutdown, on fresh threads.
    assert await settle(pool.run(lambda: "again"), None) == "again"
    pool.shutdown()
    await until(lambda: set(pool_threads("dsh-tool")) <= before)


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
        registry.threads.shutdown()


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
        registry.threads.shutdown()


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
        registry.threads.shutdown()
