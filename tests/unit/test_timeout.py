"""TimeoutPolicy against the real ToolRegistry (contract §5.2-§5.4)."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import define_tool
from dsh_nb.tools.errors import ToolErrorInfo
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.running.abort import (
    AbortController,
    AbortSignal,
    TimeoutReason,
    deadline,
    timeout_of,
)
from dsh_nb.tools.running.timeout import (
    TOOL_TIMEOUT,
    TimeoutPolicy,
    tool_timeout_result,
)
from dsh_nb.tools.values.execution import (
    Accept,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
)

EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
Body = Callable[[Any, ToolExecution], Awaitable[Any]]


def timeout_json(call_id: str, ms: str) -> dict[str, Any]:
    return {
        "callId": call_id,
        "content": [{"type": "text", "text": f"Error: tool call timed out after {ms}"}],
        "isError": True,
        "error": {"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT"},
    }


def text_json(call_id: str, text: str) -> dict[str, Any]:
    return {
        "callId": call_id,
        "content": [{"type": "text", "text": text}],
        "isError": False,
    }


def add_tool(
    registry: ToolRegistry,
    body: Body,
    *,
    name: str = "t",
    timeout_ms: float | None = None,
    scope: Agent | None = None,
) -> Callable[[], None]:
    definition = define_tool(
        name=name,
        description=f"{name} for timeout tests",
        parameters=EMPTY,
        execute=body,
        timeout_ms=timeout_ms,
    )
    return registry.register(definition, scope=scope)


async def run(
    registry: ToolRegistry,
    *,
    name: str = "t",
    call_id: str = "c1",
    agent: Agent | None = None,
    signal: AbortSignal | None = None,
) -> ToolExecutionResult:
    return await registry.execute(
        ToolExecutionInput(
            call_id=call_id, name=name, arguments={}, agent=agent, signal=signal
        )
    )


class Seen:
    """What a tool body observed about its execution."""

    def __init__(self) -> None:
        self.signal: AbortSignal | None = None
        self.reason: object = None
        self.settled = False


def cooperative(seen: Seen) -> Body:
    async def body(_args: Any, execution: ToolExecution) -> str:
        seen.signal = execution.signal
        assert execution.signal is not None
        seen.reason = await execution.signal.wait(2)
        seen.settled = True
        return "stopped cooperatively"

    return body


def ignoring(seen: Seen, seconds: float, text: str = "finished anyway") -> Body:
    async def body(_args: Any, execution: ToolExecution) -> str:
        seen.signal = execution.signal
        await asyncio.sleep(seconds)
        seen.settled = True
        return text

    return body


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    TimeoutPolicy().install(registry)
    return registry


# -- the timeout result --------------------------------------------------------


def test_tool_timeout_result_exact_shape() -> None:
    result = tool_timeout_result("c9", 100)
    assert result.to_json() == timeout_json("c9", "100ms")
    assert result.error == ToolErrorInfo("ToolTimeoutError", "TOOL_TIMEOUT")
    assert result.is_error is True
    assert TOOL_TIMEOUT == "TOOL_TIMEOUT"


@pytest.mark.parametrize(("ms", "text"), [(100.0, "100ms"), (0.5, "0.5ms")])
def test_tool_timeout_result_number_formatting(ms: float, text: str) -> None:
    assert tool_timeout_result("c1", ms).to_json() == timeout_json("c1", text)


# -- timer wins ----------------------------------------------------------------


async def test_cooperative_tool_sees_timeout_reason_and_result_is_replaced(
    registry: ToolRegistry,
) -> None:
    seen = Seen()
    add_tool(registry, cooperative(seen), timeout_ms=20)
    caller = AbortController()
    result = await run(registry, signal=caller.signal)
    assert result.to_json() == timeout_json("c1", "20ms")
    assert seen.signal is not None and seen.signal is not caller.signal
    reason = seen.reason
    assert isinstance(reason, TimeoutReason)
    assert (reason.code, reason.timeout_ms) == ("TOOL_TIMEOUT", 20)
    assert str(reason) == "TOOL_TIMEOUT after 20ms"
    assert timeout_of(seen.signal, TOOL_TIMEOUT) is reason
    assert caller.signal.aborted is False


async def test_timeout_without_a_caller_signal(registry: ToolRegistry) -> None:
    seen = Seen()
    add_tool(registry, cooperative(seen), timeout_ms=10)
    result = await run(registry)
    assert result.to_json() == timeout_json("c1", "10ms")
    assert isinstance(seen.reason, TimeoutReason)


async def test_ignoring_tool_runs_to_completion_then_reports_timeout(
    registry: ToolRegistry,
) -> None:
    seen = Seen()
    add_tool(registry, ignoring(seen, 0.06), timeout_ms=10)
    started = time.monotonic()
    result = await run(registry)
    elapsed = time.monotonic() - started
    assert seen.settled is True
    assert elapsed >= 0.055
    assert result.to_json() == timeout_json("c1", "10ms")
    assert seen.signal is not None and seen.signal.aborted


async def test_call_does_not_complete_before_the_tool_settles(
    registry: ToolRegistry,
) -> None:
    seen = Seen()
    add_tool(registry, ignoring(seen, 0.05), timeout_ms=10)
    task = asyncio.ensure_future(run(registry))
    await asyncio.sleep(0.025)
    assert not task.done()
    assert seen.signal is not None and seen.signal.aborted
    assert seen.settled is False
    result = await task
    assert seen.settled is True
    assert result.to_json() == timeout_json("c1", "10ms")


async def test_tool_error_after_the_deadline_is_replaced_too(
    registry: ToolRegistry,
) -> None:
    async def body(_args: Any, execution: ToolExecution) -> str:
        assert execution.signal is not None
        await execution.signal.wait(2)
        execution.signal.throw_if_aborted()
        return "unreachable"

    add_tool(registry, body, timeout_ms=10)
    assert (await run(registry)).to_json() == timeout_json("c1", "10ms")


async def test_timer_first_then_caller_abort_is_still_a_timeout(
    registry: ToolRegistry,
) -> None:
    caller = AbortController()
    seen = Seen()

    async def body(_args: Any, execution: ToolExecution) -> str:
        assert execution.signal is not None
        seen.reason = await execution.signal.wait(2)
        caller.abort("caller gave up later")
        await asyncio.sleep(0.005)
        seen.signal = execution.signal
        return "stopped cooperatively"

    add_tool(registry, body, timeout_ms=10)
    result = await run(registry, signal=caller.signal)
    assert result.to_json() == timeout_json("c1", "10ms")
    assert isinstance(seen.reason, TimeoutReason)
    assert seen.signal is not None and seen.signal.reason is seen.reason


async def test_half_millisecond_budget_formats_without_rounding(
    registry: ToolRegistry,
) -> None:
    seen = Seen()
    add_tool(registry, ignoring(seen, 0.02), timeout_ms=0.5)
    assert (await run(registry)).to_json() == timeout_json("c1", "0.5ms")


# -- caller wins / no timeout --------------------------------------------------


async def test_caller_abort_first_passes_tool_result_through(
    registry: ToolRegistry,
) -> None:
    seen = Seen()
    add_tool(registry, cooperative(seen), timeout_ms=500)
    caller = AbortController()
    reason = RuntimeError("user pressed stop")
    asyncio.get_running_loop().call_later(0.01, caller.abort, reason)
    result = await run(registry, signal=caller.signal)
    assert result.to_json() == text_json("c1", "stopped cooperatively")
    assert seen.reason is reason
    assert seen.signal is not caller.signal


async def test_pre_aborted_caller_is_never_a_timeout(registry: ToolRegistry) -> None:
    caller = AbortController()
    caller.abort("already stopped")
    seen = Seen()
    add_tool(registry, ignoring(seen, 0.04, "ran regardless"), timeout_ms=10)
    result = await run(registry, signal=caller.signal)
    assert result.to_json() == text_json("c1", "ran regardless")
    assert seen.signal is not None
    assert seen.signal.aborted and seen.signal.reason == "already stopped"


async def test_fast_tool_result_passes_through_and_timer_is_disposed(
    registry: ToolRegistry,
) -> None:
    seen = Seen()
    add_tool(registry, ignoring(seen, 0, "quick"), timeout_ms=20)
    result = await run(registry)
    assert result.to_json() == text_json("c1", "quick")
    assert seen.signal is not None
    await asyncio.sleep(0.04)
    assert seen.signal.aborted is False


async def test_foreign_outer_deadline_reads_as_a_caller_cancel(
    registry: ToolRegistry,
) -> None:
    async def outer(
        execution: ToolExecution, call_next: Callable[[], Awaitable[Any]]
    ) -> Any:
        caller = execution.signal
        derived, dispose = deadline(caller, 10, "OUTER_TIMEOUT")
        execution.signal = derived
        try:
            return await call_next()
        finally:
            execution.signal = caller
            dispose()

    registry.on_execute(outer, prepend=True)
    seen = Seen()
    add_tool(registry, cooperative(seen), timeout_ms=500)
    result = await run(registry, signal=AbortController().signal)
    assert result.to_json() == text_json("c1", "stopped cooperatively")
    assert timeout_of(seen.reason, "OUTER_TIMEOUT") is not None
    assert timeout_of(seen.reason, TOOL_TIMEOUT) is None


async def test_outer_deadline_with_the_same_code_is_not_reported_as_ours(
    registry: ToolRegistry,
) -> None:
    # An outer TOOL_TIMEOUT deadline that fires first is the caller's cancel
    # to this policy: it must not report its own (larger) budget.
    seen_by_outer: list[dict[str, Any]] = []

    async def outer(
        execution: ToolExecution, call_next: Callable[[], Awaitable[Any]]
    ) -> Any:
        caller = execution.signal
        derived, dispose = deadline(caller, 10, TOOL_TIMEOUT)
        execution.signal = derived
        try:
            result = await call_next()
            seen_by_outer.append(result.to_json())
            return result
        finally:
            execution.signal = caller
            dispose()

    registry.on_execute(outer, prepend=True)
    seen = Seen()
    add_tool(registry, cooperative(seen), timeout_ms=500)
    result = await run(registry)
    assert seen_by_outer == [text_json("c1", "stopped cooperatively")]
    assert result.to_json() == text_json("c1", "stopped cooperatively")
    reason = timeout_of(seen.reason, TOOL_TIMEOUT)
    assert reason is not None and reason.timeout_ms == 10


# -- no budget -----------------------------------------------------------------


async def test_no_budget_tool_sees_the_callers_own_signal(
    registry: ToolRegistry,
) -> None:
    seen = Seen()
    add_tool(registry, ignoring(seen, 0.03, "slow but unbudgeted"))
    caller = AbortController()
    result = await run(registry, signal=caller.signal)
    assert result.to_json() == text_json("c1", "slow but unbudgeted")
    assert seen.signal is caller.signal


async def test_no_budget_and_no_caller_signal_means_no_signal(
    registry: ToolRegistry,
) -> None:
    seen = Seen()
    seen.signal = AbortSignal.never()
    add_tool(registry, ignoring(seen, 0))
    await run(registry)
    assert seen.signal is None


async def test_unknown_tool_is_left_to_dispatch(registry: ToolRegistry) -> None:
    result = await run(registry, name="missing")
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": 'Error: unknown tool "missing"'}],
        "isError": True,
        "error": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
    }


# -- signal restoration --------------------------------------------------------


@pytest.mark.parametrize("with_caller", [True, False])
@pytest.mark.parametrize("body_kind", ["fast", "timeout"])
async def test_post_execute_and_observers_see_the_callers_signal_again(
    registry: ToolRegistry, with_caller: bool, body_kind: str
) -> None:
    seen = Seen()
    body = ignoring(seen, 0) if body_kind == "fast" else cooperative(seen)
    add_tool(registry, body, timeout_ms=10)
    caller = AbortController().signal if with_caller else None
    post_signals: list[AbortSignal | None] = []
    observed: list[AbortSignal | None] = []

    def post(
        execution: ToolExecution, _result: Any, call_next: Callable[[], Any]
    ) -> Any:
        post_signals.append(execution.signal)
        return call_next()

    registry.on_post_execute(post)
    registry.on_result(lambda execution, _result: observed.append(execution.signal))
    await run(registry, signal=caller)
    assert seen.signal is not None and seen.signal is not caller
    assert len(post_signals) == 1 and post_signals[0] is caller
    assert len(observed) == 1 and observed[0] is caller


async def test_signal_is_restored_when_an_inner_wrapper_raises(
    registry: ToolRegistry,
) -> None:
    inner_saw: list[AbortSignal | None] = []

    def broken(execution: ToolExecution, _next: Callable[[], Any]) -> Any:
        inner_saw.append(execution.signal)
        raise RuntimeError("wrapper broke")

    registry.on_execute(broken)
    add_tool(registry, ignoring(Seen(), 0), timeout_ms=50)
    caller = AbortController().signal
    observed: list[AbortSignal | None] = []
    registry.on_result(lambda execution, _result: observed.append(execution.signal))
    result = await run(registry, signal=caller)
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: wrapper broke"}],
        "isError": True,
    }
    assert inner_saw[0] is not None and inner_saw[0] is not caller
    assert observed == [caller]


# -- the timeout result downstream ---------------------------------------------


async def test_timeout_result_flows_through_post_execute_and_observers(
    registry: ToolRegistry,
) -> None:
    add_tool(registry, cooperative(Seen()), timeout_ms=10)
    post_seen: list[dict[str, Any]] = []
    observed: list[dict[str, Any]] = []

    def post(_execution: ToolExecution, result: Any, _next: Callable[[], Any]) -> Any:
        post_seen.append(result.to_json())
        return Accept(content=[{"type": "text", "text": "Error: too slow, retry"}])

    registry.on_post_execute(post)
    registry.on_result(lambda _execution, result: observed.append(result.to_json()))
    result = await run(registry)
    assert post_seen == [timeout_json("c1", "10ms")]
    expected = timeout_json("c1", "10ms")
    expected["content"] = [{"type": "text", "text": "Error: too slow, retry"}]
    assert result.to_json() == expected
    assert observed == [expected]


# -- installation --------------------------------------------------------------


async def test_dispose_removes_the_wrapper() -> None:
    registry = ToolRegistry()
    dispose = TimeoutPolicy().install(registry)
    seen = Seen()
    add_tool(registry, ignoring(seen, 0.03, "no longer timed"), timeout_ms=10)
    assert (await run(registry)).to_json() == timeout_json("c1", "10ms")
    dispose()
    dispose()
    caller = AbortController().signal
    result = await run(registry, call_id="c2", signal=caller)
    assert result.to_json() == text_json("c2", "no longer timed")
    assert seen.signal is caller


async def test_bare_registry_has_no_timeout_policy() -> None:
    registry = ToolRegistry()
    add_tool(registry, ignoring(Seen(), 0.03, "untimed"), timeout_ms=10)
    assert (await run(registry)).to_json() == text_json("c1", "untimed")


async def test_scoped_install_only_covers_that_agent() -> None:
    registry = ToolRegistry()
    agent = Agent("a")
    TimeoutPolicy().install(registry, scope=agent)
    add_tool(registry, ignoring(Seen(), 0.03, "done"), timeout_ms=10)
    assert (await run(registry, agent=agent)).to_json() == timeout_json("c1", "10ms")
    assert (await run(registry, call_id="c2")).to_json() == text_json("c2", "done")
    other = Agent("a")
    assert (await run(registry, call_id="c3", agent=other)).to_json() == text_json(
        "c3", "done"
    )


async def test_default_budget_applies_only_to_tools_declaring_none() -> None:
    registry = ToolRegistry()
    TimeoutPolicy(default_timeout_ms=10).install(registry)
    add_tool(registry, ignoring(Seen(), 0.03), name="undeclared")
    add_tool(registry, ignoring(Seen(), 0.03, "own budget"), name="own", timeout_ms=500)
    undeclared = await run(registry, name="undeclared")
    assert undeclared.to_json() == timeout_json("c1", "10ms")
    own = await run(registry, name="own", call_id="c2")
    assert own.to_json() == text_json("c2", "own budget")


@pytest.mark.parametrize("bad", [0, -1, math.inf, math.nan, True, "10"])
def test_default_budget_must_be_positive_finite(bad: object) -> None:
    with pytest.raises(ValueError, match="default_timeout_ms"):
        TimeoutPolicy(default_timeout_ms=bad)  # type: ignore[arg-type]


# -- scoped shadows --------------------------------------------------------------


async def test_scoped_shadow_budget_applies_to_its_calls(
    registry: ToolRegistry,
) -> None:
    agent = Agent("scoped")
    add_tool(registry, ignoring(Seen(), 0.03, "global"), timeout_ms=500)
    add_tool(registry, ignoring(Seen(), 0.03, "shadow"), timeout_ms=10, scope=agent)
    shadowed = await run(registry, agent=agent)
    assert shadowed.to_json() == timeout_json("c1", "10ms")
    unscoped = await run(registry, call_id="c2")
    assert unscoped.to_json() == text_json("c2", "global")


async def test_global_twin_budget_never_leaks_onto_a_shadow(
    registry: ToolRegistry,
) -> None:
    agent = Agent("scoped")
    add_tool(registry, ignoring(Seen(), 0.03, "global"), timeout_ms=10)
    shadow_seen = Seen()
    add_tool(registry, ignoring(shadow_seen, 0.03, "shadow"), scope=agent)
    caller = AbortController().signal
    shadowed = await run(registry, agent=agent, signal=caller)
    assert shadowed.to_json() == text_json("c1", "shadow")
    assert shadow_seen.signal is caller
    unscoped = await run(registry, call_id="c2")
    assert unscoped.to_json() == timeout_json("c2", "10ms")
