"""The trace names who decided each stage (a teaching aid in the cards)."""

from __future__ import annotations

from typing import Any

from dsh_nb.tools import (
    Accept,
    Allow,
    Deny,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRegistry,
    TraceRecord,
    define_tool,
)


def make_registry() -> tuple[ToolRegistry, list[tuple[TraceRecord, ...]]]:
    registry = ToolRegistry()
    registry.register(
        define_tool(name="t", description="", parameters={}, execute=lambda a: "ok")
    )
    traces: list[tuple[TraceRecord, ...]] = []
    registry.on_trace(lambda ex, result, records: traces.append(records))
    return registry, traces


def rows(records: tuple[TraceRecord, ...]) -> list[tuple[str, str, str]]:
    return [(r.stage, r.actor.rsplit(".", 1)[-1], r.decision) for r in records]


async def call(registry: ToolRegistry) -> ToolExecutionResult:
    return await registry.execute(
        ToolExecutionInput(call_id="c1", name="t", arguments={})
    )


def passthrough(ex: Any, next_: Any) -> Any:
    return next_()


def deny_all(ex: Any, next_: Any) -> Any:
    return Deny("no")


def allow_all(ex: Any, next_: Any) -> Any:
    return Allow()


async def test_inner_short_circuit_is_credited_not_the_passthrough() -> None:
    registry, traces = make_registry()
    registry.on_pre_execute(passthrough)
    registry.on_pre_execute(deny_all)
    await call(registry)
    assert rows(traces[0])[0] == ("pre-execute", "deny_all", "deny: no")


async def test_an_outer_override_is_credited_to_the_outer_listener() -> None:
    registry, traces = make_registry()

    def override(ex: Any, next_: Any) -> Any:
        return Allow()

    registry.on_pre_execute(override)
    registry.on_pre_execute(deny_all)
    await call(registry)
    assert rows(traces[0])[0] == ("pre-execute", "override", "allow")


async def test_defaults_and_pass_through_wrappers_credit_the_base() -> None:
    registry, traces = make_registry()
    registry.on_pre_execute(passthrough)

    async def wrapper(ex: Any, next_: Any) -> Any:
        return await next_()

    registry.on_execute(wrapper)
    registry.on_post_execute(lambda ex, result, next_: next_())
    await call(registry)
    assert rows(traces[0]) == [
        ("pre-execute", "default", "allow"),
        ("execute", "t", "ok"),
        ("post-execute", "default", "accept"),
    ]


async def test_a_replacing_post_listener_is_named_with_what_it_replaced() -> None:
    registry, traces = make_registry()

    def rewrite(ex: Any, result: Any, next_: Any) -> Any:
        return Accept(content=[{"type": "text", "text": "x"}])

    registry.on_post_execute(rewrite)
    await call(registry)
    assert rows(traces[0])[-1] == (
        "post-execute",
        "rewrite",
        "accept (replaces content)",
    )


async def test_no_trace_observer_means_no_trace_work() -> None:
    registry = ToolRegistry()
    registry.register(
        define_tool(name="t", description="", parameters={}, execute=lambda a: "ok")
    )
    seen: list[Any] = []
    registry.on_result(lambda ex, result: seen.append(result))
    registry.on_pre_execute(allow_all)
    result = await call(registry)
    assert result.text == "ok" and seen == [result]


async def test_each_stage_lasts_from_its_start_to_its_end_on_the_clock(
    monkeypatch: Any,
) -> None:
    # A clock that moves only when a listener or the tool "works": each
    # stage's duration is exactly the work done in it, and the execute stage
    # starts after the guards (their time is in no stage).
    from dsh_nb.tools.pipeline import trace

    now = [100.0]

    def work(seconds: float) -> bool:
        now[0] += seconds
        return False

    monkeypatch.setattr(trace, "perf_counter", lambda: now[0])
    registry = ToolRegistry()
    registry.register(
        define_tool(
            name="t",
            description="",
            parameters={},
            execute=lambda a: work(0.020) or "ok",
        )
    )
    registry.on_pre_execute(lambda ex, next_: work(0.010) or next_())

    def slow_guard(ex: Any) -> str | None:
        work(0.030)
        return None

    registry.guard(slow_guard)
    registry.on_post_execute(lambda ex, result, next_: work(0.005) or next_())
    traces: list[Any] = []
    registry.on_trace(lambda ex, result, records: traces.append(records))
    await call(registry)
    (records,) = traces
    assert len(records) == 3
    assert [(r.stage, round(r.duration_ms, 6)) for r in records] == [
        ("pre-execute", 10.0),
        ("execute", 20.0),
        ("post-execute", 5.0),
    ]
