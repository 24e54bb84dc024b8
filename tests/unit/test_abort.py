"""AbortController/AbortSignal, deadline, timeout_of and clamp_timeout (§5.1)."""

from __future__ import annotations

import asyncio
import gc
import logging
import math
import pickle
import threading
import time
from collections.abc import Callable

import pytest

from dsh_nb.tools.running.abort import (
    AbortController,
    AbortError,
    AbortSignal,
    TimeoutReason,
    clamp_timeout,
    deadline,
    timeout_of,
)

# -- controller and signal ---------------------------------------------------


def test_fresh_signal_is_pending() -> None:
    controller = AbortController()
    assert controller.signal.aborted is False
    assert controller.signal.reason is None
    controller.signal.throw_if_aborted()


def test_abort_without_reason_uses_default_abort_error() -> None:
    controller = AbortController()
    controller.abort()
    assert controller.signal.aborted is True
    reason = controller.signal.reason
    assert type(reason) is AbortError
    assert str(reason) == "This operation was aborted"


def test_abort_none_is_the_default_reason() -> None:
    controller = AbortController()
    controller.abort(None)
    assert isinstance(controller.signal.reason, AbortError)


def test_abort_keeps_an_arbitrary_reason_object() -> None:
    controller = AbortController()
    reason = {"why": "user pressed stop"}
    controller.abort(reason)
    assert controller.signal.reason is reason


def test_second_abort_keeps_the_first_reason() -> None:
    controller = AbortController()
    first = RuntimeError("first")
    controller.abort(first)
    controller.abort(RuntimeError("second"))
    controller.abort()
    assert controller.signal.reason is first


def test_signal_reason_and_aborted_are_read_only() -> None:
    signal = AbortController().signal
    with pytest.raises(AttributeError):
        signal.aborted = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        signal.reason = "x"  # type: ignore[misc]


def test_throw_if_aborted_raises_an_exception_reason_itself() -> None:
    controller = AbortController()
    reason = ValueError("stop")
    controller.abort(reason)
    with pytest.raises(ValueError) as info:
        controller.signal.throw_if_aborted()
    assert info.value is reason


def test_throw_if_aborted_wraps_a_non_exception_reason() -> None:
    controller = AbortController()
    controller.abort("plain string")
    with pytest.raises(AbortError) as info:
        controller.signal.throw_if_aborted()
    assert info.value.args == ("plain string",)


def test_repr_shows_state() -> None:
    controller = AbortController()
    assert repr(controller.signal) == "<AbortSignal pending>"
    controller.abort("x")
    assert repr(controller.signal) == "<AbortSignal aborted reason='x'>"


def test_aborted_with_and_never_helpers() -> None:
    reason = RuntimeError("r")
    assert AbortSignal.aborted_with(reason).reason is reason
    assert isinstance(AbortSignal.aborted_with().reason, AbortError)
    never = AbortSignal.never()
    assert never.aborted is False
    assert never is not AbortSignal.never()


# -- callbacks ---------------------------------------------------------------


def test_callbacks_run_once_in_registration_order_with_reason() -> None:
    controller = AbortController()
    seen: list[tuple[str, object]] = []
    controller.signal.add_callback(lambda r: seen.append(("a", r)))
    controller.signal.add_callback(lambda r: seen.append(("b", r)))
    controller.signal.add_callback(lambda r: seen.append(("c", r)))
    controller.abort("why")
    controller.abort("again")
    assert seen == [("a", "why"), ("b", "why"), ("c", "why")]


def test_callbacks_run_synchronously_inside_abort() -> None:
    controller = AbortController()
    seen: list[object] = []
    controller.signal.add_callback(seen.append)
    controller.abort("now")
    assert seen == ["now"]


def test_raising_callback_is_contained_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    controller = AbortController()
    seen: list[str] = []

    def broken(_reason: object) -> None:
        raise RuntimeError("callback broke")

    controller.signal.add_callback(lambda r: seen.append("before"))
    controller.signal.add_callback(broken)
    controller.signal.add_callback(lambda r: seen.append("after"))
    with caplog.at_level(logging.ERROR, logger="dsh_nb.tools.running.timeout"):
        controller.abort("x")
    assert controller.signal.aborted
    assert controller.signal.reason == "x"
    assert seen == ["before", "after"]
    assert any("callback broke" in (r.exc_text or "") for r in caplog.records)


def test_disposed_callback_does_not_run_and_dispose_is_idempotent() -> None:
    controller = AbortController()
    seen: list[str] = []
    dispose = controller.signal.add_callback(lambda r: seen.append("gone"))
    controller.signal.add_callback(lambda r: seen.append("kept"))
    dispose()
    dispose()
    controller.abort()
    assert seen == ["kept"]


def test_callback_disposed_by_an_earlier_callback_does_not_run() -> None:
    controller = AbortController()
    seen: list[str] = []
    disposers: list[Callable[[], None]] = []
    controller.signal.add_callback(lambda r: disposers[0]())
    disposers.append(controller.signal.add_callback(lambda r: seen.append("late")))
    controller.abort()
    assert seen == []


def test_callback_on_already_aborted_signal_runs_immediately() -> None:
    controller = AbortController()
    controller.abort("done")
    seen: list[object] = []
    dispose = controller.signal.add_callback(seen.append)
    assert seen == ["done"]
    dispose()
    assert seen == ["done"]


def test_callback_added_during_abort_runs_immediately() -> None:
    controller = AbortController()
    seen: list[str] = []
    controller.signal.add_callback(
        lambda r: controller.signal.add_callback(lambda r2: seen.append(f"inner {r2}"))
    )
    controller.abort("x")
    assert seen == ["inner x"]


def test_raising_callback_on_aborted_signal_is_contained(
    caplog: pytest.LogCaptureFixture,
) -> None:
    signal = AbortSignal.aborted_with("x")
    seen: list[object] = []

    def broken(reason: object) -> None:
        seen.append(reason)
        raise RuntimeError("nope")

    with caplog.at_level(logging.ERROR, logger="dsh_nb.tools.running.timeout"):
        dispose = signal.add_callback(broken)  # runs at once, and does not raise
    assert seen == ["x"]
    assert any("nope" in (r.exc_text or "") for r in caplog.records)
    dispose()  # a no-op on an aborted signal
    signal.add_callback(seen.append)
    assert seen == ["x", "x"]


def test_add_callback_rejects_non_callable() -> None:
    with pytest.raises(TypeError, match="needs a callable"):
        AbortController().signal.add_callback("not callable")  # type: ignore[arg-type]


# -- await / wait --------------------------------------------------------------


async def test_await_returns_reason_once_aborted() -> None:
    controller = AbortController()
    loop = asyncio.get_running_loop()
    loop.call_later(0.01, controller.abort, "later")
    assert await controller.signal == "later"


async def test_await_on_aborted_signal_returns_immediately() -> None:
    reason = RuntimeError("r")
    assert await AbortSignal.aborted_with(reason) is reason


async def test_several_waiters_all_wake() -> None:
    controller = AbortController()
    tasks = [asyncio.ensure_future(controller.signal.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    controller.abort("go")
    assert await asyncio.gather(*tasks) == ["go", "go", "go"]


async def test_wait_timeout_returns_none_and_unsubscribes() -> None:
    signal = AbortController().signal
    assert await signal.wait(0.01) is None
    assert signal._callbacks == {}


async def test_wait_timeout_not_reached_returns_reason() -> None:
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.005, controller.abort, "fast")
    assert await controller.signal.wait(5) == "fast"


async def test_cancelled_waiter_unsubscribes() -> None:
    signal = AbortController().signal
    task = asyncio.ensure_future(signal.wait())
    await asyncio.sleep(0)
    assert len(signal._callbacks) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert signal._callbacks == {}


async def test_abort_from_another_thread_wakes_waiter() -> None:
    controller = AbortController()
    loop = asyncio.get_running_loop()
    thread = threading.Thread(
        target=lambda: loop.call_soon_threadsafe(controller.abort, "from thread")
    )
    waiter = asyncio.ensure_future(controller.signal.wait())
    await asyncio.sleep(0)
    thread.start()
    assert await asyncio.wait_for(waiter, 2) == "from thread"
    thread.join()


async def test_direct_abort_from_another_thread_still_wakes_waiter() -> None:
    controller = AbortController()
    waiter = asyncio.ensure_future(controller.signal.wait())
    await asyncio.sleep(0)
    thread = threading.Thread(target=controller.abort, args=("raw",))
    thread.start()
    thread.join()
    assert await asyncio.wait_for(waiter, 2) == "raw"


# -- any ---------------------------------------------------------------------


def test_any_aborts_with_first_reason() -> None:
    a, b = AbortController(), AbortController()
    fused = AbortSignal.any([a.signal, b.signal])
    assert not fused.aborted
    b.abort("b first")
    a.abort("a later")
    assert fused.aborted
    assert fused.reason == "b first"


def test_any_with_pre_aborted_source_takes_its_reason() -> None:
    a = AbortController()
    b = AbortController()
    b.abort("already")
    fused = AbortSignal.any([a.signal, b.signal])
    assert fused.aborted and fused.reason == "already"


def test_any_of_nothing_never_aborts() -> None:
    assert AbortSignal.any([]).aborted is False


def test_any_detaches_from_sources_after_abort() -> None:
    a, b = AbortController(), AbortController()
    fused = AbortSignal.any([a.signal, b.signal])
    assert len(b.signal._callbacks) == 1
    a.abort()
    assert fused.aborted
    assert b.signal._callbacks == {}


def test_collected_fused_signal_detaches_from_sources() -> None:
    source = AbortController()
    AbortSignal.any([source.signal])
    gc.collect()
    assert source.signal._callbacks == {}


def test_fused_signal_is_a_new_object() -> None:
    source = AbortController().signal
    assert AbortSignal.any([source]) is not source


# -- TimeoutReason -------------------------------------------------------------


def test_timeout_reason_message_and_fields() -> None:
    reason = TimeoutReason("TOOL_TIMEOUT", 100)
    assert str(reason) == "TOOL_TIMEOUT after 100ms"
    assert reason.code == "TOOL_TIMEOUT"
    assert reason.timeout_ms == 100
    assert reason.name == "TimeoutReason"
    assert isinstance(reason, Exception)


@pytest.mark.parametrize(
    ("ms", "text"), [(100.0, "100ms"), (0.5, "0.5ms"), (1500, "1500ms")]
)
def test_timeout_reason_number_formatting(ms: float, text: str) -> None:
    assert str(TimeoutReason("X", ms)) == f"X after {text}"


def test_timeout_reason_pickles() -> None:
    copy = pickle.loads(pickle.dumps(TimeoutReason("BASH_TIMEOUT", 5)))
    assert (copy.code, copy.timeout_ms, str(copy)) == (
        "BASH_TIMEOUT",
        5,
        "BASH_TIMEOUT after 5ms",
    )


# -- deadline ----------------------------------------------------------------


async def test_deadline_timer_fires_with_timeout_reason() -> None:
    # The clock starts before the timer does: a loaded machine may pause
    # between the two, and the timer may never fire before its 10 ms.
    started = time.monotonic()
    signal, dispose = deadline(None, 10, "TOOL_TIMEOUT")
    reason = await asyncio.wait_for(signal.wait(), 2)
    elapsed = time.monotonic() - started
    assert isinstance(reason, TimeoutReason)
    assert (reason.code, reason.timeout_ms) == ("TOOL_TIMEOUT", 10)
    assert elapsed >= 0.009
    dispose()
    assert signal.reason is reason


async def test_deadline_dispose_prevents_the_abort() -> None:
    signal, dispose = deadline(None, 10, "TOOL_TIMEOUT")
    dispose()
    dispose()
    await asyncio.sleep(0.03)
    assert signal.aborted is False


async def test_deadline_dispose_detaches_from_upstream() -> None:
    upstream = AbortController()
    signal, dispose = deadline(upstream.signal, 1000, "X")
    assert len(upstream.signal._callbacks) == 1
    dispose()
    assert upstream.signal._callbacks == {}
    upstream.abort("late")
    assert signal.aborted is False


@pytest.mark.parametrize("ms", [0, -5, math.inf, math.nan])
async def test_deadline_without_a_budget_returns_upstream_itself(ms: float) -> None:
    upstream = AbortController().signal
    signal, dispose = deadline(upstream, ms, "X")
    assert signal is upstream
    dispose()


@pytest.mark.parametrize("ms", [0, -1])
async def test_deadline_without_budget_or_upstream_never_aborts(ms: float) -> None:
    signal, dispose = deadline(None, ms, "X")
    await asyncio.sleep(0.02)
    assert signal.aborted is False
    dispose()


async def test_deadline_with_pre_aborted_upstream_is_aborted_at_once() -> None:
    upstream = AbortController()
    reason = RuntimeError("caller stop")
    upstream.abort(reason)
    signal, dispose = deadline(upstream.signal, 10, "X")
    assert signal is not upstream.signal
    assert signal.aborted and signal.reason is reason
    await asyncio.sleep(0.03)
    assert signal.reason is reason
    dispose()


async def test_deadline_upstream_first_keeps_upstream_reason() -> None:
    upstream = AbortController()
    signal, dispose = deadline(upstream.signal, 20, "X")
    upstream.abort("caller")
    assert signal.reason == "caller"
    await asyncio.sleep(0.05)
    assert signal.reason == "caller"
    assert timeout_of(signal) is None
    dispose()


async def test_deadline_timer_first_then_upstream_changes_nothing() -> None:
    upstream = AbortController()
    signal, dispose = deadline(upstream.signal, 10, "X")
    reason = await asyncio.wait_for(signal.wait(), 2)
    upstream.abort("caller later")
    assert signal.reason is reason
    assert timeout_of(signal, "X") is reason
    assert upstream.signal.reason == "caller later"
    dispose()


async def test_deadline_signal_differs_from_upstream_and_follows_it() -> None:
    upstream = AbortController()
    signal, dispose = deadline(upstream.signal, 1000, "X")
    assert signal is not upstream.signal
    assert not signal.aborted
    upstream.abort("go")
    assert signal.reason == "go"
    dispose()


def test_deadline_with_a_budget_needs_a_running_loop() -> None:
    with pytest.raises(RuntimeError):
        deadline(None, 10, "X")


# -- timeout_of --------------------------------------------------------------


def test_timeout_of_reads_signal_reason() -> None:
    reason = TimeoutReason("TOOL_TIMEOUT", 5)
    signal = AbortSignal.aborted_with(reason)
    assert timeout_of(signal) is reason
    assert timeout_of(signal, "TOOL_TIMEOUT") is reason
    assert timeout_of(signal, "BASH_TIMEOUT") is None


def test_timeout_of_other_carriers() -> None:
    reason = TimeoutReason("A", 1)

    class Carrier:
        def __init__(self, reason: object) -> None:
            self.reason = reason

    assert timeout_of(Carrier(reason), "A") is reason
    assert timeout_of(reason, "A") is reason
    assert timeout_of(reason, "B") is None
    assert timeout_of(Carrier("not a timeout")) is None
    assert timeout_of(None) is None
    assert timeout_of(AbortController().signal) is None
    assert timeout_of(AbortSignal.aborted_with("plain")) is None


def test_timeout_of_never_raises_on_hostile_carrier() -> None:
    class Hostile:
        @property
        def reason(self) -> object:
            raise RuntimeError("no")

    assert timeout_of(Hostile()) is None


# -- clamp_timeout -----------------------------------------------------------


def test_clamp_timeout_uses_default_when_absent() -> None:
    assert clamp_timeout(None, 1000, 5000) == 1000


def test_clamp_timeout_caps_the_default_too() -> None:
    assert clamp_timeout(None, 9000, 5000) == 5000


def test_clamp_timeout_takes_requested_under_max() -> None:
    assert clamp_timeout(250, 1000, 5000) == 250
    assert clamp_timeout(0.5, 1000, 5000) == 0.5


def test_clamp_timeout_caps_requested() -> None:
    assert clamp_timeout(60_000, 1000, 5000) == 5000


@pytest.mark.parametrize(
    "bad", [0, -1, -0.5, math.inf, -math.inf, math.nan, True, "100", [100]]
)
def test_clamp_timeout_rejects_bad_hints(bad: object) -> None:
    with pytest.raises(ValueError) as info:
        clamp_timeout(bad, 1000, 5000)  # type: ignore[arg-type]
    assert str(info.value) == "timeoutMs must be a positive finite number"


def test_clamp_timeout_names_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"^timeout must be a positive finite number$"):
        clamp_timeout(0, 1000, 5000, name="timeout")
