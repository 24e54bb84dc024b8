# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline, §4.2: the input snapshot and argument materialisation.

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pytest
from pipelinekit import (
    ARGS_NOT_JSON,
    CountingInput,
    DictSub,
    ExplodingInput,
    FakeSignal,
    ListSub,
    counting_values,
    cycle_dict,
    cycle_list,
    error_json,
    inp,
    make_def,
    ok_json,
    text,
)

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.errors import (
    HarnessError,
)
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    ToolExecutionInput,
)

# -- §4.2 arguments -------------------------------------------------------------


async def test_every_phase_shares_one_frozen_distinct_copy(
    registry: ToolRegistry,
) -> None:
    seen: dict[str, Any] = {}

    async def body(args: Any, execution: Any) -> Any:
        seen["tool"] = args
        seen["tool-exec"] = execution.arguments
        return [text("ok")]

    registry.register(make_def("echo", body))

    def pre(execution: Any, next: Any) -> Any:
        seen["pre"] = execution.arguments
        return next()

    def guard(execution: Any) -> None:
        seen["guard"] = execution.arguments

    async def wrap(execution: Any, next: Any) -> Any:
        seen["wrap"] = execution.arguments
        return await next()

    def post(execution: Any, result: Any, next: Any) -> Any:
        seen["post"] = execution.arguments
        return next()

    registry.on_pre_execute(pre)
    registry.guard(guard)
    registry.on_execute(wrap)
    registry.on_post_execute(post)
    registry.on_result(
        lambda execution, result: seen.__setitem__("result", execution.arguments)
    )

    caller = {"path": "/tmp", "opts": {"deep": [1, {"x": None}]}, "n": 2.5}
    result = await registry.execute(inp(arguments=caller))
    assert result.is_error is False
    frozen = seen["tool"]
    assert frozen == caller
    assert frozen is not caller
    assert frozen["opts"] is not caller["opts"]
    for phase in ("tool-exec", "pre", "guard", "wrap", "post", "result"):
        assert seen[phase] is frozen, phase
    with pytest.raises(TypeError):
        frozen["path"] = "/etc"
    with pytest.raises(TypeError):
        frozen["opts"]["deep"].append(3)
    with pytest.raises(TypeError):
        frozen["opts"]["deep"][1]["x"] = 1
    with pytest.raises(TypeError):
        del frozen["n"]


async def test_caller_arguments_are_neither_mutated_nor_frozen(
    registry: ToolRegistry,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        try:
            args["inner"].append("tool was here")
        except TypeError:
            pass
        return [text("ok")]

    registry.register(make_def("echo", body))
    inner = ["a"]
    caller: dict[str, Any] = {"inner": inner}
    await registry.execute(inp(arguments=caller))
    assert type(caller) is dict
    assert type(caller["inner"]) is list
    assert caller == {"inner": ["a"]}
    caller["added"] = 1
    inner.append("b")
    assert caller == {"inner": ["a", "b"], "added": 1}


async def test_shared_references_become_independent_copies(
    registry: ToolRegistry,
) -> None:
    got: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        got.append(args)
        return [text("ok")]

    registry.register(make_def("echo", body))
    shared = {"k": [1, 2]}
    result = await registry.execute(inp(arguments={"a": shared, "b": shared}))
    assert result.is_error is False
    args = got[0]
    assert args == {"a": {"k": [1, 2]}, "b": {"k": [1, 2]}}
    assert args["a"] is not shared
    assert args["a"] is not args["b"]


NON_JSON_ARGS: list[tuple[str, Any]] = [
    ("nan", lambda: {"x": float("nan")}),
    ("inf", lambda: {"x": float("inf")}),
    ("-inf", lambda: {"x": [float("-inf")]}),
    ("negative-zero", lambda: {"x": -0.0}),
    ("negative-zero-root", lambda: -0.0),
    ("nan-root", lambda: float("nan")),
    ("tuple", lambda: {"x": (1, 2)}),
    ("tuple-root", lambda: (1, 2)),
    ("set", lambda: {"x": {1, 2}}),
    ("frozenset", lambda: {"x": frozenset()}),
    ("bytes", lambda: {"x": b"abc"}),
    ("bytearray", lambda: {"x": bytearray(b"a")}),
    ("dict-subclass", lambda: DictSub(a=1)),
    ("nested-dict-subclass", lambda: {"x": DictSub()}),
    ("list-subclass", lambda: {"x": ListSub([1])}),
    ("int-key", lambda: {1: "a"}),
    ("none-key", lambda: {"ok": {None: "a"}}),
    ("tuple-key", lambda: {(1,): "a"}),
    ("cycle-dict", cycle_dict),
    ("cycle-list", cycle_list),
    ("object", lambda: {"x": object()}),
    ("function", lambda: {"x": lambda: 1}),
    ("datetime", lambda: {"x": datetime.datetime(2026, 1, 1)}),
    ("decimal", lambda: {"x": decimal.Decimal("1.5")}),
    ("complex", lambda: {"x": 1j}),
    ("type", lambda: {"x": int}),
]


@pytest.mark.parametrize(
    "make_args", [f for _, f in NON_JSON_ARGS], ids=[i for i, _ in NON_JSON_ARGS]
)
async def test_non_json_arguments_short_circuit_to_observers(
    registry: ToolRegistry, agent: Agent, make_args: Any
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.on_pre_execute(lambda e, n: (ran.append("pre"), n())[1])
    registry.guard(lambda e: ran.append("guard"))
    registry.on_execute(lambda e, n: (ran.append("execute"), n())[1])
    registry.on_post_execute(lambda e, r, n: (ran.append("post"), n())[1])
    observed: list[tuple[str, Any, Any]] = []
    registry.on_result(lambda e, r: observed.append(("global", e, r)))
    registry.on_result(lambda e, r: observed.append(("scoped", e, r)), scope=agent)

    parent = object()
    signal = FakeSignal("s")
    result = await registry.execute(
        inp(
            arguments=make_args(),
            agent=agent,
            parent=parent,
            signal=signal,
        )
    )
    assert result.to_json() == error_json(ARGS_NOT_JSON)
    assert result.error is None
    assert ran == []
    assert [label for label, _, _ in observed] == ["global", "scoped"]
    for _, execution, observed_result in observed:
        assert observed_result is result
        assert execution.arguments is ABSENT
        assert execution.call_id == "c1"
        assert execution.name == "echo"
        assert execution.agent is agent
        assert execution.parent is parent
        assert execution.signal is signal


async def test_non_json_arguments_agentless(registry: ToolRegistry) -> None:
    registry.register(make_def())
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(e))
    result = await registry.execute(inp(arguments={"x": (1,)}))
    assert result.to_json() == error_json(ARGS_NOT_JSON)
    assert len(observed) == 1
    assert observed[0].agent is None
    assert observed[0].parent is None
    assert observed[0].signal is None


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -0,
        1,
        2**200,
        -(2**70),
        1.5,
        0.0,
        -2.25,
        "text",
        "",
        [],
        {},
        [None, True, 1, 1.5, "s", [], {}],
        {"a": {"b": {"c": [1, {"d": None}]}}, "é": "ü"},
    ],
    ids=repr,
)
async def test_json_arguments_reach_the_tool_unchanged(
    registry: ToolRegistry, value: Any
) -> None:
    got: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        got.append(args)
        return [text("ok")]

    registry.register(make_def("echo", body))
    result = await registry.execute(
        ToolExecutionInput(call_id="c1", name="echo", arguments=value)
    )
    assert result.to_json() == ok_json()
    assert got == [value]
    assert type(got[0]) is not bool or type(value) is bool
    if type(value) in (int, float, bool):
        assert type(got[0]) is type(value)


async def test_frozen_arguments_can_be_passed_again(registry: ToolRegistry) -> None:
    """Our own FrozenDict/FrozenList count as lossless JSON (nested calls)."""
    got: list[Any] = []

    async def inner(args: Any, execution: Any) -> Any:
        got.append(args)
        return [text("inner")]

    async def outer(args: Any, execution: Any) -> Any:
        res = await registry.execute(
            ToolExecutionInput(
                call_id="c1:inner",
                name="inner",
                arguments=execution.arguments,
                parent=execution.token,
            )
        )
        return list(res.content)

    registry.register(make_def("inner", inner))
    registry.register(make_def("outer", outer))
    result = await registry.execute(inp("outer", {"x": [1, {"y": 2}]}))
    assert result.to_json() == ok_json("inner")
    assert got == [{"x": [1, {"y": 2}]}]


async def test_input_fields_are_read_exactly_once(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    got: list[tuple[Any, Any]] = []

    async def echo(args: Any, execution: Any) -> Any:
        got.append((args, execution.call_id))
        return [text("echo")]

    async def decoy(args: Any, execution: Any) -> Any:
        got.append(("decoy", None))
        return [text("decoy")]

    registry.register(make_def("echo", echo))
    registry.register(make_def("decoy", decoy))
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(e), scope=agent)
    registry.on_result(lambda e, r: observed.append(("other", e)), scope=other)
    pre_agents: list[Any] = []
    registry.on_pre_execute(
        lambda e, n: (pre_agents.append((e.agent, e.name, e.signal)), n())[1]
    )

    values = counting_values(agent, other, [{"x": 1}, {"x": 2}])
    source = CountingInput(**values)
    result = await registry.execute(source)  # type: ignore[arg-type]

    assert dict(source.reads) == {
        "call_id": 1,
        "name": 1,
        "arguments": 1,
        "agent": 1,
        "parent": 1,
        "signal": 1,
    }
    assert result.to_json() == ok_json("echo", call_id="c1")
    assert got == [({"x": 1}, "c1")]
    assert pre_agents == [(agent, "echo", values["signal"][0])]
    assert len(observed) == 1
    execution = observed[0]
    assert execution.call_id == "c1"
    assert execution.name == "echo"
    assert execution.agent is agent
    assert execution.parent == "parent-1"
    assert execution.signal is values["signal"][0]
    assert execution.arguments == {"x": 1}


async def test_input_fields_read_once_on_the_failure_path(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def())
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(e), scope=agent)
    values = counting_values(agent, other, [{"x": float("nan")}, {"x": 1}])
    source = CountingInput(**values)
    result = await registry.execute(source)  # type: ignore[arg-type]
    assert result.to_json() == error_json(ARGS_NOT_JSON)
    assert all(count == 1 for count in source.reads.values())
    assert set(source.reads) == set(values)
    assert len(observed) == 1
    assert observed[0].call_id == "c1"
    assert observed[0].name == "echo"
    assert observed[0].agent is agent
    assert observed[0].parent == "parent-1"
    assert observed[0].signal is values["signal"][0]
    assert observed[0].arguments is ABSENT


async def test_arguments_getter_raising_becomes_error_result(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.on_pre_execute(lambda e, n: (ran.append("pre"), n())[1])
    registry.on_post_execute(lambda e, r, n: (ran.append("post"), n())[1])
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append((e, r)))
    values = counting_values(agent, other, [])
    source = ExplodingInput(RuntimeError("getter exploded"), **values)
    result = await registry.execute(source)  # type: ignore[arg-type]
    assert result.to_json() == error_json("Error: getter exploded")
    assert ran == []
    assert source.reads["arguments"] == 1
    assert all(count == 1 for count in source.reads.values())
    assert len(observed) == 1
    assert observed[0][0].arguments is ABSENT
    assert observed[0][0].call_id == "c1"
    assert observed[0][1] is result


async def test_arguments_getter_raising_harness_error_keeps_info(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def())
    values = counting_values(agent, other, [])
    source = ExplodingInput(HarnessError("no args for you", "NO_ARGS"), **values)
    result = await registry.execute(source)  # type: ignore[arg-type]
    assert result.to_json() == error_json(
        "Error: no args for you", error={"name": "HarnessError", "code": "NO_ARGS"}
    )
