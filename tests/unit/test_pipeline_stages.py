# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline, §4.1: the stage order, and the pipeline's totality.

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from pipelinekit import (
    RESULT_NOT_JSON,
    CountingInput,
    counting_values,
    error_json,
    inp,
    make_def,
    ok_json,
    only_text,
    text,
)

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    ToolExecutionResult,
)

# -- §4.1 stage order ---------------------------------------------------------


async def test_stage_order_on_success(registry: ToolRegistry) -> None:
    log: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        log.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))

    def pre(execution: Any, next: Any) -> Any:
        log.append("pre")
        return next()

    def guard(execution: Any) -> None:
        log.append("guard")

    async def wrap(execution: Any, next: Any) -> Any:
        log.append("wrap-in")
        result = await next()
        log.append("wrap-out")
        return result

    async def post(execution: Any, result: Any, next: Any) -> Any:
        log.append("post")
        return await next()

    registry.on_pre_execute(pre)
    registry.guard(guard)
    registry.on_execute(wrap)
    registry.on_post_execute(post)
    registry.on_result(lambda execution, result: log.append("result"))

    result = await registry.execute(inp())
    assert log == ["pre", "guard", "wrap-in", "tool", "wrap-out", "post", "result"]
    assert result.to_json() == ok_json()


async def test_success_result_fields(registry: ToolRegistry) -> None:
    registry.register(make_def())
    result = await registry.execute(inp())
    assert isinstance(result, ToolExecutionResult)
    assert result.call_id == "c1"
    assert result.content == [text("ok")]
    assert result.is_error is False
    assert result.error is None
    assert result.additional_context is None
    assert result.meta is ABSENT
    assert result.to_json() == ok_json()
    assert json.loads(json.dumps(result.to_json())) == ok_json()


async def test_execute_returns_the_same_object_observers_receive(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    seen: list[Any] = []
    registry.on_result(lambda execution, result: seen.append(result))
    result = await registry.execute(inp())
    assert len(seen) == 1
    assert seen[0] is result


async def test_listenerless_registry_runs_defaults(registry: ToolRegistry) -> None:
    registry.register(make_def())
    assert (await registry.execute(inp())).to_json() == ok_json()


# -- §4.1 totality -----------------------------------------------------------------


async def test_concurrent_calls_are_independent(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        await asyncio.sleep(0.001 * args["d"])
        return [text(f"{execution.call_id}:{args['d']}")]

    registry.register(make_def("echo", body))
    results = await asyncio.gather(
        *(registry.execute(inp(arguments={"d": d}, call_id=f"c{d}")) for d in (3, 1, 2))
    )
    assert [r.to_json() for r in results] == [
        ok_json("c3:3", "c3"),
        ok_json("c1:1", "c1"),
        ok_json("c2:2", "c2"),
    ]


async def test_post_cannot_repair_a_non_json_result_in_place(
    registry: ToolRegistry,
) -> None:
    """In-place mutation is not a transform channel (§4.10, Appendix A.5)."""

    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": {"x": float("nan")}}

    registry.register(make_def("echo", body))
    attempts: list[str] = []

    def post(e: Any, result: Any, n: Any) -> Any:
        mutations: tuple[Callable[[], object], ...] = (
            lambda: result.meta.__setitem__("x", 1),
            lambda: result.content[0].__setitem__("text", "patched"),
            lambda: result.content.append(text("extra")),
        )
        for mutate in mutations:
            try:
                mutate()
                attempts.append("mutated")
            except (TypeError, AttributeError):
                attempts.append("refused")
        return n()

    registry.on_post_execute(post)
    result = await registry.execute(inp())
    assert result.to_json() == error_json(RESULT_NOT_JSON)
    assert attempts == ["refused"] * 3


async def test_post_cannot_touch_the_tools_own_objects(registry: ToolRegistry) -> None:
    held = [text("ok")]

    async def body(args: Any, execution: Any) -> Any:
        return {"content": held, "meta": float("inf")}

    registry.register(make_def("echo", body))

    def post(e: Any, result: Any, n: Any) -> Any:
        try:
            result.content.append(text("leak"))
        except (TypeError, AttributeError):
            pass
        return n()

    registry.on_post_execute(post)
    await registry.execute(inp())
    assert held == [text("ok")]


async def test_hostile_call_id_getter_does_not_escape(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    class BadId(CountingInput):
        @property
        def call_id(self) -> Any:
            raise RuntimeError("no id")

    registry.register(make_def())
    source = BadId(**counting_values(agent, other, [{}]))
    result = await registry.execute(source)  # type: ignore[arg-type]
    assert result.is_error is True
    assert only_text(result) == "Error: no id"
    json.dumps(result.to_json())


@pytest.mark.parametrize("stage", ["pre", "execute", "post"])
@pytest.mark.parametrize("how", ["wait_for", "gather", "ensure_future"])
async def test_next_returns_an_awaitable_asyncio_accepts(
    registry: ToolRegistry, stage: str, how: str
) -> None:
    """Wrappers commonly hand next() to asyncio (timeouts, races)."""
    registry.register(make_def())

    async def drive(awaitable: Any) -> Any:
        if how == "wait_for":
            return await asyncio.wait_for(awaitable, 5)
        if how == "gather":
            (value,) = await asyncio.gather(awaitable)
            return value
        return await asyncio.ensure_future(awaitable)

    async def listener(*payload: Any) -> Any:
        return await drive(payload[-1]())

    {
        "pre": registry.on_pre_execute,
        "execute": registry.on_execute,
        "post": registry.on_post_execute,
    }[stage](listener)
    result = await registry.execute(inp())
    assert result.to_json() == ok_json()


async def test_sync_listeners_run_when_next_is_called_like_the_reference() -> None:
    # next() starts the inner chain at once (JS promises are eager too), so a
    # listener that calls next() and then decides itself still let the
    # inner listeners see the call; its own decision wins.
    from dsh_nb.tools import Allow, Deny, ToolRegistry, define_tool

    registry = ToolRegistry()
    registry.register(
        define_tool(name="t", description="", parameters={}, execute=lambda a: "ok")
    )
    seen: list[str] = []

    def outer(ex: Any, next_: Any) -> Any:
        next_()
        return Deny("outer says no")

    def inner(ex: Any, next_: Any) -> Any:
        seen.append("inner")
        return Allow()

    registry.on_pre_execute(outer)
    registry.on_pre_execute(inner)
    result = await registry.execute(inp())
    assert seen == ["inner"]
    assert result.text == "Error: outer says no"
