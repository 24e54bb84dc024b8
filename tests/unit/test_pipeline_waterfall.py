# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline, §4.4: waterfall mechanics (order, short-circuits, scopes, snapshots).

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

from typing import Any

from pipelinekit import (
    error_json,
    inp,
    make_def,
    ok_json,
    text,
)

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    Accept,
    Allow,
    Block,
    Deny,
    ToolExecutionResult,
)

# -- §4.4 waterfall mechanics ---------------------------------------------------


async def test_pre_listeners_registration_order_and_prepend(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    log: list[str] = []

    def mk(label: str) -> Any:
        def listener(execution: Any, next: Any) -> Any:
            log.append(label)
            return next()

        return listener

    registry.on_pre_execute(mk("a"))
    registry.on_pre_execute(mk("b"))
    registry.on_pre_execute(mk("front"), prepend=True)
    registry.on_pre_execute(mk("c"))
    registry.on_pre_execute(mk("very-front"), prepend=True)
    await registry.execute(inp())
    assert log == ["very-front", "front", "a", "b", "c"]


async def test_execute_wrappers_nest_first_registered_outermost(
    registry: ToolRegistry,
) -> None:
    log: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        log.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))

    def mk(label: str) -> Any:
        async def wrapper(execution: Any, next: Any) -> Any:
            log.append(f"{label}>")
            result = await next()
            log.append(f"<{label}")
            return result

        return wrapper

    registry.on_execute(mk("a"))
    registry.on_execute(mk("b"))
    registry.on_execute(mk("p"), prepend=True)
    await registry.execute(inp())
    assert log == ["p>", "a>", "b>", "tool", "<b", "<a", "<p"]


async def test_post_listeners_order_and_prepend(registry: ToolRegistry) -> None:
    registry.register(make_def())
    log: list[str] = []

    def mk(label: str) -> Any:
        async def listener(execution: Any, result: Any, next: Any) -> Any:
            log.append(f"{label}>")
            decision = await next()
            log.append(f"<{label}")
            return decision

        return listener

    registry.on_post_execute(mk("a"))
    registry.on_post_execute(mk("p"), prepend=True)
    registry.on_post_execute(mk("b"))
    await registry.execute(inp())
    assert log == ["p>", "a>", "b>", "<b", "<a", "<p"]


async def test_result_observers_order_and_prepend(registry: ToolRegistry) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_result(lambda e, r: log.append("a"))
    registry.on_result(lambda e, r: log.append("b"))
    registry.on_result(lambda e, r: log.append("p"), prepend=True)
    await registry.execute(inp())
    assert log == ["p", "a", "b"]


async def test_pre_short_circuit_skips_inner_listeners(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_pre_execute(lambda e, n: (log.append("outer"), Allow())[1])
    registry.on_pre_execute(lambda e, n: (log.append("inner"), n())[1])
    result = await registry.execute(inp())
    assert log == ["outer"]
    assert result.to_json() == ok_json()


async def test_execute_short_circuit_skips_dispatch(registry: ToolRegistry) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id, content=[text("cached")], is_error=False
        )
    )
    registry.on_execute(lambda e, n: (ran.append("inner"), n())[1])
    result = await registry.execute(inp())
    assert ran == []
    assert result.to_json() == ok_json("cached")


async def test_execute_short_circuit_for_unknown_tool(registry: ToolRegistry) -> None:
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id, content=[text("virtual")], is_error=False
        )
    )
    result = await registry.execute(inp("nowhere"))
    assert result.to_json() == ok_json("virtual")


async def test_post_short_circuit_skips_inner_listeners(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_post_execute(lambda e, r, n: (log.append("outer"), Accept())[1])
    registry.on_post_execute(
        lambda e, r, n: (log.append("inner"), Block(feedback=[text("x")]))[1]
    )
    result = await registry.execute(inp())
    assert log == ["outer"]
    assert result.to_json() == ok_json()


async def test_scope_filtering_for_every_waterfall(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def())
    log: list[str] = []

    def pre(label: str) -> Any:
        return lambda e, n: (log.append(f"pre:{label}"), n())[1]

    def wrap(label: str) -> Any:
        return lambda e, n: (log.append(f"exec:{label}"), n())[1]

    def post(label: str) -> Any:
        return lambda e, r, n: (log.append(f"post:{label}"), n())[1]

    def obs(label: str) -> Any:
        return lambda e, r: log.append(f"result:{label}")

    for make, register in (
        (pre, registry.on_pre_execute),
        (wrap, registry.on_execute),
        (post, registry.on_post_execute),
        (obs, registry.on_result),
    ):
        register(make("g1"))
        register(make("alice"), scope=agent)
        register(make("bob"), scope=other)
        register(make("g2"))

    await registry.execute(inp(agent=agent))
    assert log == [
        f"{stage}:{label}"
        for stage in ("pre", "exec", "post", "result")
        for label in ("g1", "alice", "g2")
    ]
    log.clear()
    await registry.execute(inp())
    assert log == [
        f"{stage}:{label}"
        for stage in ("pre", "exec", "post", "result")
        for label in ("g1", "g2")
    ]
    log.clear()
    await registry.execute(inp(agent=Agent("alice")))
    assert "pre:alice" not in log
    assert "pre:bob" not in log


async def test_prepended_scoped_listener_goes_before_unscoped(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_pre_execute(lambda e, n: (log.append("g"), n())[1])
    registry.on_pre_execute(
        lambda e, n: (log.append("s"), n())[1], scope=agent, prepend=True
    )
    await registry.execute(inp(agent=agent))
    assert log == ["s", "g"]


async def test_sync_and_async_listeners_mix(registry: ToolRegistry) -> None:
    registry.register(make_def())
    log: list[str] = []

    def sync_pre(execution: Any, next: Any) -> Any:
        log.append("sync-pre")
        return next()

    async def async_pre(execution: Any, next: Any) -> Any:
        log.append("async-pre")
        decision = await next()
        log.append("async-pre-after")
        return decision

    def sync_wrap(execution: Any, next: Any) -> Any:
        log.append("sync-wrap")
        return next()

    def sync_post(execution: Any, result: Any, next: Any) -> Any:
        log.append("sync-post")
        return next()

    registry.on_pre_execute(sync_pre)
    registry.on_pre_execute(async_pre)
    registry.on_execute(sync_wrap)
    registry.on_post_execute(sync_post)
    result = await registry.execute(inp())
    assert result.to_json() == ok_json()
    assert log == ["sync-pre", "async-pre", "async-pre-after", "sync-wrap", "sync-post"]


async def test_sync_listener_may_return_plain_decision(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_pre_execute(lambda e, n: Deny("plain deny"))
    result = await registry.execute(inp())
    assert result.to_json() == error_json("Error: plain deny")


async def test_listener_disposer_removes_and_is_idempotent(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    log: list[str] = []
    dispose_pre = registry.on_pre_execute(lambda e, n: (log.append("pre"), n())[1])
    dispose_exec = registry.on_execute(lambda e, n: (log.append("exec"), n())[1])
    dispose_post = registry.on_post_execute(
        lambda e, r, n: (log.append("post"), n())[1]
    )
    dispose_result = registry.on_result(lambda e, r: log.append("result"))
    await registry.execute(inp())
    assert log == ["pre", "exec", "post", "result"]
    for dispose in (dispose_pre, dispose_exec, dispose_post, dispose_result):
        dispose()
        dispose()
    log.clear()
    await registry.execute(inp())
    assert log == []


async def test_listeners_are_snapshotted_at_call_start_same_stage(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    log: list[str] = []

    def late(execution: Any, next: Any) -> Any:
        log.append("late")
        return next()

    def victim(execution: Any, next: Any) -> Any:
        log.append("victim")
        return next()

    disposers: list[Any] = []

    def first(execution: Any, next: Any) -> Any:
        log.append("first")
        if not disposers:
            disposers.append(registry.on_pre_execute(late))
            victim_dispose()
        return next()

    registry.on_pre_execute(first)
    victim_dispose = registry.on_pre_execute(victim)
    await registry.execute(inp())
    assert log == ["first", "victim"]
    log.clear()
    await registry.execute(inp())
    assert log == ["first", "late"]


async def test_listeners_are_snapshotted_at_call_start_across_stages(
    registry: ToolRegistry,
) -> None:
    log: list[str] = []
    done: set[str] = set()

    async def body(args: Any, execution: Any) -> Any:
        if "body" not in done:
            done.add("body")
            registry.on_result(lambda e, r: log.append("late-result"))
            registry.on_post_execute(lambda e, r, n: (log.append("late-post"), n())[1])
        return [text("ok")]

    registry.register(make_def("echo", body))

    def pre(execution: Any, next: Any) -> Any:
        if "pre" not in done:
            done.add("pre")
            log.append("pre")
            registry.on_execute(lambda e, n: (log.append("late-exec"), n())[1])
        return next()

    registry.on_pre_execute(pre)
    await registry.execute(inp())
    assert log == ["pre"]
    await registry.execute(inp())
    assert log == ["pre", "late-exec", "late-post", "late-result"]
