# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline, §4.3: the execution object.

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pipelinekit import (
    FakeSignal,
    inp,
    make_def,
    ok_json,
    text,
)

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    ToolExecutionInput,
)

# -- §4.3 the execution object ---------------------------------------------------


async def test_token_is_shared_by_every_phase_and_fresh_per_call(
    registry: ToolRegistry,
) -> None:
    tokens: list[tuple[str, Any]] = []

    async def body(args: Any, execution: Any) -> Any:
        tokens.append(("tool", execution.token))
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.on_pre_execute(lambda e, n: (tokens.append(("pre", e.token)), n())[1])
    registry.guard(lambda e: tokens.append(("guard", e.token)))
    registry.on_execute(lambda e, n: (tokens.append(("exec", e.token)), n())[1])
    registry.on_post_execute(lambda e, r, n: (tokens.append(("post", e.token)), n())[1])
    registry.on_result(lambda e, r: tokens.append(("result", e.token)))

    await registry.execute(inp(call_id="c1"))
    first = list(tokens)
    tokens.clear()
    await registry.execute(inp(call_id="c1"))
    second = list(tokens)

    assert [phase for phase, _ in first] == [
        "pre",
        "guard",
        "exec",
        "tool",
        "post",
        "result",
    ]
    t1 = first[0][1]
    t2 = second[0][1]
    assert t1 is not None
    assert all(tok is t1 for _, tok in first)
    assert all(tok is t2 for _, tok in second)
    assert t1 is not t2
    assert t1 != t2


async def test_many_calls_get_unique_tokens(registry: ToolRegistry) -> None:
    registry.register(make_def())
    tokens: list[Any] = []
    registry.on_result(lambda e, r: tokens.append(e.token))
    await asyncio.gather(*(registry.execute(inp(call_id=f"c{i}")) for i in range(50)))
    assert len(tokens) == 50
    assert len({id(t) for t in tokens}) == 50


async def test_token_is_not_json_serializable(registry: ToolRegistry) -> None:
    registry.register(make_def())
    tokens: list[Any] = []
    registry.on_result(lambda e, r: tokens.append(e.token))
    await registry.execute(inp())
    with pytest.raises(TypeError):
        json.dumps(tokens[0])


async def test_parent_passes_through_unchanged(registry: ToolRegistry) -> None:
    seen: list[tuple[str, Any, Any]] = []

    async def inner(args: Any, execution: Any) -> Any:
        return [text("inner")]

    async def outer(args: Any, execution: Any) -> Any:
        res = await registry.execute(
            ToolExecutionInput(
                call_id=f"{execution.call_id}:code:1",
                name="inner",
                arguments={},
                parent=execution.token,
            )
        )
        return list(res.content)

    registry.register(make_def("inner", inner))
    registry.register(make_def("outer", outer))
    registry.on_pre_execute(
        lambda e, n: (seen.append(("pre", e.call_id, e.parent)), n())[1]
    )
    registry.on_result(lambda e, r: seen.append(("result", e.call_id, e.token)))
    registry.on_result(lambda e, r: seen.append(("parent", e.call_id, e.parent)))

    result = await registry.execute(inp("outer", call_id="c1"))
    assert result.to_json() == ok_json("inner")
    by = {(kind, cid): value for kind, cid, value in seen}
    outer_token = by[("result", "c1")]
    assert by[("pre", "c1")] is None
    assert by[("parent", "c1")] is None
    assert by[("pre", "c1:code:1")] is outer_token
    assert by[("parent", "c1:code:1")] is outer_token
    assert by[("result", "c1:code:1")] is not outer_token


async def test_absent_optional_fields_read_as_none(registry: ToolRegistry) -> None:
    registry.register(make_def())
    seen: list[Any] = []
    registry.on_pre_execute(lambda e, n: (seen.append(e), n())[1])
    await registry.execute(ToolExecutionInput(call_id="c1", name="echo", arguments={}))
    assert seen[0].agent is None
    assert seen[0].parent is None
    assert seen[0].signal is None


IDENTITY_FIELDS = ["token", "call_id", "name", "arguments", "agent", "parent"]


async def test_identity_fields_cannot_be_set_or_deleted(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def())
    outcome: dict[str, str] = {}

    def pre(execution: Any, next: Any) -> Any:
        for attr in [*IDENTITY_FIELDS, "extra"]:
            try:
                setattr(execution, attr, "forged")
                outcome[f"set {attr}"] = "allowed"
            except AttributeError:
                outcome[f"set {attr}"] = "blocked"
        for attr in IDENTITY_FIELDS:
            try:
                delattr(execution, attr)
                outcome[f"del {attr}"] = "allowed"
            except AttributeError:
                outcome[f"del {attr}"] = "blocked"
        return next()

    registry.on_pre_execute(pre)
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(e))
    result = await registry.execute(inp(arguments={"a": 1}, agent=agent))
    assert set(outcome.values()) == {"blocked"}, outcome
    assert result.to_json() == ok_json()
    execution = observed[0]
    assert execution.call_id == "c1"
    assert execution.name == "echo"
    assert execution.arguments == {"a": 1}
    assert execution.agent is agent


@pytest.mark.parametrize("stage", ["pre", "guard", "post"])
async def test_signal_cannot_be_set_outside_an_execute_wrapper(
    registry: ToolRegistry, stage: str
) -> None:
    registry.register(make_def())
    caller = FakeSignal("caller")
    outcome: list[str] = []

    def attempt(execution: Any) -> None:
        try:
            execution.signal = FakeSignal("forged")
            outcome.append("allowed")
        except AttributeError:
            outcome.append("blocked")
        try:
            del execution.signal
            outcome.append("allowed")
        except AttributeError:
            outcome.append("blocked")

    if stage == "pre":
        registry.on_pre_execute(lambda e, n: (attempt(e), n())[1])
    elif stage == "guard":
        registry.guard(lambda e: attempt(e))
    else:
        registry.on_post_execute(lambda e, r, n: (attempt(e), n())[1])
    seen: list[Any] = []
    registry.on_result(lambda e, r: seen.append(e.signal))
    result = await registry.execute(inp(signal=caller))
    assert outcome == ["blocked", "blocked"]
    assert result.to_json() == ok_json()
    assert seen == [caller]


async def test_wrapper_replaces_signal_for_dispatch_and_restores_it(
    registry: ToolRegistry,
) -> None:
    caller = FakeSignal("caller")
    derived = FakeSignal("derived")
    seen: dict[str, Any] = {}

    async def body(args: Any, execution: Any) -> Any:
        seen["tool"] = execution.signal
        return [text("ok")]

    registry.register(make_def("echo", body))

    async def outer(execution: Any, next: Any) -> Any:
        seen["outer-before"] = execution.signal
        execution.signal = derived
        try:
            return await next()
        finally:
            execution.signal = caller

    async def inner(execution: Any, next: Any) -> Any:
        seen["inner"] = execution.signal
        return await next()

    registry.on_execute(outer)
    registry.on_execute(inner)
    registry.on_post_execute(
        lambda e, r, n: (seen.__setitem__("post", e.signal), n())[1]
    )
    registry.on_result(lambda e, r: seen.__setitem__("result", e.signal))
    result = await registry.execute(inp(signal=caller))
    assert result.to_json() == ok_json()
    assert seen["outer-before"] is caller
    assert seen["inner"] is derived
    assert seen["tool"] is derived
    assert seen["post"] is caller
    assert seen["result"] is caller


async def test_wrapper_may_add_and_remove_signal(registry: ToolRegistry) -> None:
    derived = FakeSignal("derived")
    seen: dict[str, Any] = {}

    async def body(args: Any, execution: Any) -> Any:
        seen["tool"] = execution.signal
        return [text("ok")]

    registry.register(make_def("echo", body))

    async def wrap(execution: Any, next: Any) -> Any:
        seen["before"] = execution.signal
        execution.signal = derived
        try:
            return await next()
        finally:
            del execution.signal

    registry.on_execute(wrap)
    registry.on_post_execute(
        lambda e, r, n: (seen.__setitem__("post", e.signal), n())[1]
    )
    await registry.execute(inp())
    assert seen == {"before": None, "tool": derived, "post": None}


async def test_wrapper_may_remove_caller_signal(registry: ToolRegistry) -> None:
    seen: dict[str, Any] = {}

    async def body(args: Any, execution: Any) -> Any:
        seen["tool"] = execution.signal
        return [text("ok")]

    registry.register(make_def("echo", body))
    caller = FakeSignal("caller")

    async def wrap(execution: Any, next: Any) -> Any:
        del execution.signal
        try:
            return await next()
        finally:
            execution.signal = caller

    registry.on_execute(wrap)
    await registry.execute(inp(signal=caller))
    assert seen == {"tool": None}


async def test_execution_is_frozen_after_the_pipeline(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    outcome: list[str] = []
    kept: list[Any] = []

    def observer(execution: Any, result: Any) -> None:
        kept.append(execution)
        try:
            execution.signal = FakeSignal("late")
            outcome.append("allowed")
        except AttributeError:
            outcome.append("blocked")

    registry.on_result(observer)
    caller = FakeSignal("caller")
    result = await registry.execute(inp(signal=caller))
    assert result.to_json() == ok_json()
    assert outcome == ["blocked"]
    with pytest.raises(AttributeError):
        kept[0].signal = None
    with pytest.raises(AttributeError):
        del kept[0].signal
    assert kept[0].signal is caller


async def test_execution_signal_frozen_after_pipeline_even_for_wrapper_holder(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    kept: list[Any] = []

    async def wrap(execution: Any, next: Any) -> Any:
        kept.append(execution)
        return await next()

    registry.on_execute(wrap)
    await registry.execute(inp())
    with pytest.raises(AttributeError):
        kept[0].signal = FakeSignal("too late")
