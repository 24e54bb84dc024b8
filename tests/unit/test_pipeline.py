# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline (contract §4.1-§4.5, §4.7-§4.17).

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import asyncio
import datetime
import decimal
import json
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.errors import (
    HarnessError,
    ListenerContractError,
    ToolErrorInfo,
)
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    Accept,
    Allow,
    Block,
    Deny,
    ToolExecutionInput,
    ToolExecutionResult,
)

# -- helpers -----------------------------------------------------------------

ARGS_NOT_JSON = "Error: tool execution arguments must be losslessly JSON-serializable"
RESULT_NOT_JSON = "Error: tool result must be losslessly JSON-serializable"
CONTRACT = {"name": "ListenerContractError", "code": "LISTENER_CONTRACT"}
AC = {
    "content": [{"type": "text", "text": "remember this"}],
    "source": {"kind": "plugin", "plugin": "test"},
}
AC2 = {
    "content": [{"type": "text", "text": "other context"}],
    "source": {"kind": "plugin", "plugin": "other"},
}


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


def error_json(message: str, call_id: str = "c1", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "callId": call_id,
        "content": [text(message)],
        "isError": True,
    }
    out.update(extra)
    return out


def ok_json(message: str = "ok", call_id: str = "c1") -> dict[str, Any]:
    return {"callId": call_id, "content": [text(message)], "isError": False}


class FakeSignal:
    """An opaque signal object; the registry must only pass it through."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.aborted = False
        self.reason = None

    def __repr__(self) -> str:
        return f"FakeSignal({self.label!r})"


def make_def(name: str = "echo", execute: Any = None) -> ToolDefinition:
    async def body(args: Any, execution: Any) -> Any:
        return [text("ok")]

    return ToolDefinition(
        name=name,
        description=f"the {name} tool",
        parameters={"type": "object", "properties": {}},
        execute=execute if execute is not None else body,
    )


def inp(
    name: str = "echo",
    arguments: Any = None,
    *,
    call_id: str = "c1",
    agent: Agent | None = None,
    parent: Any = None,
    signal: Any = None,
) -> ToolExecutionInput:
    return ToolExecutionInput(
        call_id=call_id,
        name=name,
        arguments={} if arguments is None else arguments,
        agent=agent,
        parent=parent,
        signal=signal,
    )


def err(result: ToolExecutionResult) -> Any:
    return result.to_json().get("error")


def only_text(result: ToolExecutionResult) -> str:
    assert len(result.content) == 1
    value: str = result.content[0]["text"]
    return value


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry()


@pytest.fixture
def agent() -> Agent:
    return Agent("alice")


@pytest.fixture
def other() -> Agent:
    return Agent("bob")


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


class DictSub(dict):  # type: ignore[type-arg]
    pass


class ListSub(list):  # type: ignore[type-arg]
    pass


def _cycle_dict() -> Any:
    d: dict[str, Any] = {}
    d["self"] = d
    return d


def _cycle_list() -> Any:
    lst: list[Any] = []
    lst.append({"back": lst})
    return lst


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
    ("cycle-dict", _cycle_dict),
    ("cycle-list", _cycle_list),
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


class CountingInput:
    """A duck-typed input whose fields count reads and change on re-read."""

    def __init__(self, **values: list[Any]) -> None:
        self.values = values
        self.reads: Counter[str] = Counter()

    def _read(self, key: str) -> Any:
        self.reads[key] += 1
        seq = self.values[key]
        return seq[min(self.reads[key], len(seq)) - 1]

    @property
    def call_id(self) -> Any:
        return self._read("call_id")

    @property
    def name(self) -> Any:
        return self._read("name")

    @property
    def arguments(self) -> Any:
        return self._read("arguments")

    @property
    def agent(self) -> Any:
        return self._read("agent")

    @property
    def parent(self) -> Any:
        return self._read("parent")

    @property
    def signal(self) -> Any:
        return self._read("signal")


class ExplodingInput(CountingInput):
    def __init__(self, error: BaseException, **values: list[Any]) -> None:
        super().__init__(**values)
        self.error = error

    @property
    def arguments(self) -> Any:
        self.reads["arguments"] += 1
        raise self.error


def _counting_values(agent: Agent, other: Agent, arguments: list[Any]) -> Any:
    return {
        "call_id": ["c1", "c2"],
        "name": ["echo", "decoy"],
        "agent": [agent, other],
        "parent": ["parent-1", "parent-2"],
        "signal": [FakeSignal("s1"), FakeSignal("s2")],
        "arguments": arguments,
    }


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

    values = _counting_values(agent, other, [{"x": 1}, {"x": 2}])
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
    values = _counting_values(agent, other, [{"x": float("nan")}, {"x": 1}])
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
    values = _counting_values(agent, other, [])
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
    values = _counting_values(agent, other, [])
    source = ExplodingInput(HarnessError("no args for you", "NO_ARGS"), **values)
    result = await registry.execute(source)  # type: ignore[arg-type]
    assert result.to_json() == error_json(
        "Error: no args for you", error={"name": "HarnessError", "code": "NO_ARGS"}
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


@pytest.mark.parametrize("stage", ["pre", "execute", "post"])
async def test_listener_returning_none_is_a_contract_error(
    registry: ToolRegistry, stage: str
) -> None:
    registry.register(make_def())
    log: list[str] = []
    if stage == "pre":
        registry.on_pre_execute(lambda e, n: None)
    elif stage == "execute":
        registry.on_execute(lambda e, n: None)
    else:
        registry.on_post_execute(lambda e, r, n: None)
    if stage != "post":
        registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    registry.on_result(lambda e, r: log.append("result"))
    result = await registry.execute(inp())
    assert result.is_error is True
    assert only_text(result).startswith("Error: ")
    assert err(result) == CONTRACT
    assert log == ["result"]


@pytest.mark.parametrize("stage", ["pre", "execute", "post"])
async def test_async_listener_returning_none_is_a_contract_error(
    registry: ToolRegistry, stage: str
) -> None:
    registry.register(make_def())

    async def pre(e: Any, n: Any) -> None:
        await n()

    async def wrap(e: Any, n: Any) -> None:
        await n()

    async def post(e: Any, r: Any, n: Any) -> None:
        await n()

    {
        "pre": lambda: registry.on_pre_execute(pre),
        "execute": lambda: registry.on_execute(wrap),
        "post": lambda: registry.on_post_execute(post),
    }[stage]()
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT


@pytest.mark.parametrize(
    "bad",
    [
        Accept(),
        Block(feedback=[text("x")]),
        "allow",
        {"kind": "yolo"},
        {"reason": "no kind"},
        42,
        True,
    ],
    ids=["accept", "block", "str", "dict-unknown-kind", "dict-no-kind", "int", "bool"],
)
async def test_pre_listener_unknown_decision_is_a_contract_error(
    registry: ToolRegistry, bad: Any
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.guard(lambda e: ran.append("guard"))
    registry.on_pre_execute(lambda e, n: bad)
    registry.on_post_execute(lambda e, r, n: (ran.append("post"), n())[1])
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT
    assert ran == []


@pytest.mark.parametrize("reason", [None, 5, ["x"]], ids=["none", "int", "list"])
async def test_deny_without_string_reason_is_a_contract_error(
    registry: ToolRegistry, reason: Any
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.guard(lambda e: ran.append("guard"))
    malformed = object.__new__(Deny)
    object.__setattr__(malformed, "reason", reason)
    registry.on_pre_execute(lambda e, n: malformed)
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT
    assert ran == []


@pytest.mark.parametrize(
    "bad",
    [Allow(), Deny("no"), "accept", {"kind": "yolo"}, {"kind": "allow"}, 0],
    ids=["allow", "deny", "str", "dict-unknown-kind", "dict-pre-kind", "int"],
)
async def test_post_listener_unknown_decision_is_a_contract_error(
    registry: ToolRegistry, bad: Any
) -> None:
    registry.register(make_def())
    registry.on_post_execute(lambda e, r, n: bad)
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT


@pytest.mark.parametrize(
    "bad",
    ["text", {"content": [], "isError": False}, [text("x")], Allow()],
    ids=["str", "dict-without-callid", "list", "decision"],
)
async def test_wrapper_returning_non_result_is_a_contract_error(
    registry: ToolRegistry, bad: Any
) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_execute(lambda e, n: bad)
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT
    assert log == []


async def test_calling_next_twice_raises_contract_error(
    registry: ToolRegistry,
) -> None:
    runs: list[int] = []

    async def body(args: Any, execution: Any) -> Any:
        runs.append(1)
        return [text("ok")]

    registry.register(make_def("echo", body))
    caught: list[ListenerContractError] = []

    async def wrapper(execution: Any, next: Any) -> Any:
        first = await next()
        try:
            await next()
        except ListenerContractError as exc:
            caught.append(exc)
        return first

    registry.on_execute(wrapper)
    result = await registry.execute(inp())
    assert result.to_json() == ok_json()
    assert runs == [1]
    assert len(caught) == 1
    assert caught[0].code == "LISTENER_CONTRACT"


@pytest.mark.parametrize("stage", ["pre", "execute", "post"])
async def test_uncaught_second_next_becomes_contract_error_result(
    registry: ToolRegistry, stage: str
) -> None:
    runs: list[int] = []

    async def body(args: Any, execution: Any) -> Any:
        runs.append(1)
        return [text("ok")]

    registry.register(make_def("echo", body))

    async def twice(*payload: Any) -> Any:
        next = payload[-1]
        await next()
        return await next()

    {
        "pre": registry.on_pre_execute,
        "execute": registry.on_execute,
        "post": registry.on_post_execute,
    }[stage](twice)
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT
    assert len(runs) <= 1


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_raising_pre_listener_pinned(
    registry: ToolRegistry, is_async: bool
) -> None:
    registry.register(make_def())
    log: list[str] = []

    async def pre_async(e: Any, n: Any) -> Any:
        await asyncio.sleep(0)
        raise RuntimeError("permission hook broke")

    def pre_sync(e: Any, n: Any) -> Any:
        raise RuntimeError("permission hook broke")

    pre: Callable[..., Any] = pre_async if is_async else pre_sync

    registry.on_pre_execute(pre)
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    registry.on_result(lambda e, r: log.append("result"))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: permission hook broke"}],
        "isError": True,
    }
    assert log == ["result"]


async def test_raising_pre_listener_harness_error_pinned(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())

    def pre(e: Any, n: Any) -> Any:
        raise HarnessError("denied", "DENIED")

    registry.on_pre_execute(pre)
    result = await registry.execute(inp())
    assert result.to_json() == error_json(
        "Error: denied", error={"name": "HarnessError", "code": "DENIED"}
    )


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_raising_wrapper_pinned(registry: ToolRegistry, is_async: bool) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))

    async def wrap_async(e: Any, n: Any) -> Any:
        await asyncio.sleep(0)
        raise RuntimeError("wrapper broke")

    def wrap_sync(e: Any, n: Any) -> Any:
        raise RuntimeError("wrapper broke")

    wrap: Callable[..., Any] = wrap_async if is_async else wrap_sync

    registry.on_execute(wrap)
    registry.on_post_execute(lambda e, r, n: (ran.append("post"), n())[1])
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: wrapper broke"}],
        "isError": True,
    }
    assert ran == []


async def test_raising_wrapper_after_next_skips_post(registry: ToolRegistry) -> None:
    log: list[str] = []
    registry.register(make_def())

    async def wrap(e: Any, n: Any) -> Any:
        await n()
        raise RuntimeError("wrapper broke")

    registry.on_execute(wrap)
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    result = await registry.execute(inp())
    assert result.to_json() == error_json("Error: wrapper broke")
    assert log == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_raising_post_listener_pinned(
    registry: ToolRegistry, is_async: bool
) -> None:
    registry.register(make_def())

    async def post_async(e: Any, r: Any, n: Any) -> Any:
        await n()
        raise RuntimeError("post hook broke")

    def post_sync(e: Any, r: Any, n: Any) -> Any:
        raise RuntimeError("post hook broke")

    post: Callable[..., Any] = post_async if is_async else post_sync

    registry.on_post_execute(post)
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: post hook broke"}],
        "isError": True,
    }


# -- §4.5 pre-execute ------------------------------------------------------------


async def test_pre_deny_denial_result_flows_through_post_and_observers(
    registry: ToolRegistry,
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.on_pre_execute(lambda e, n: Deny("not allowed here"))
    registry.guard(lambda e: ran.append("guard"))
    registry.on_execute(lambda e, n: (ran.append("execute"), n())[1])
    post_seen: list[Any] = []
    registry.on_post_execute(lambda e, r, n: (post_seen.append(r.to_json()), n())[1])
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(r))
    result = await registry.execute(inp())
    expected = {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: not allowed here"}],
        "isError": True,
    }
    assert result.to_json() == expected
    assert result.error is None
    assert ran == []
    assert post_seen == [expected]
    assert observed == [result]


async def test_inner_deny_reaches_outer_listener_through_next(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    seen: list[Any] = []

    async def outer(e: Any, n: Any) -> Any:
        decision = await n()
        seen.append(decision)
        return decision

    registry.on_pre_execute(outer)
    registry.on_pre_execute(lambda e, n: Deny("inner says no"))
    result = await registry.execute(inp())
    assert isinstance(seen[0], Deny)
    assert seen[0].reason == "inner says no"
    assert result.to_json() == error_json("Error: inner says no")


async def test_outer_listener_may_override_inner_deny(registry: ToolRegistry) -> None:
    registry.register(make_def())

    async def outer(e: Any, n: Any) -> Any:
        await n()
        return Allow()

    registry.on_pre_execute(outer)
    registry.on_pre_execute(lambda e, n: Deny("inner says no"))
    assert (await registry.execute(inp())).to_json() == ok_json()


async def test_deny_with_empty_reason(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_pre_execute(lambda e, n: Deny(""))
    assert (await registry.execute(inp())).to_json() == error_json("Error: ")


# -- §4.7 guards ------------------------------------------------------------------


async def test_guards_run_only_when_allowed(registry: ToolRegistry) -> None:
    registry.register(make_def())
    calls: list[str] = []
    registry.guard(lambda e: calls.append("guard"))
    registry.on_pre_execute(lambda e, n: Deny("no"))
    await registry.execute(inp())
    assert calls == []


async def test_guard_receives_frozen_arguments(registry: ToolRegistry) -> None:
    got: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        got.append(args)
        return [text("ok")]

    registry.register(make_def("echo", body))
    seen: list[Any] = []

    def guard(execution: Any) -> None:
        seen.append(execution.arguments)
        try:
            execution.arguments["x"] = 2
        except TypeError:
            seen.append("frozen")

    registry.guard(guard)
    await registry.execute(inp(arguments={"x": 1}))
    assert seen[1] == "frozen"
    assert seen[0] is got[0]
    assert got[0] == {"x": 1}


async def test_guard_empty_string_denies(registry: ToolRegistry) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.guard(lambda e: "")
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: "}],
        "isError": True,
    }
    assert ran == []


async def test_guard_denial_flows_through_post_execute(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.guard(lambda e: "guarded")
    seen: list[Any] = []
    registry.on_post_execute(lambda e, r, n: (seen.append(r.to_json()), n())[1])
    result = await registry.execute(inp())
    assert seen == [error_json("Error: guarded")]
    assert result.to_json() == error_json("Error: guarded")


@pytest.mark.parametrize(
    ("exc", "info"),
    [
        (RuntimeError("guard exploded"), None),
        (
            HarnessError("guard exploded", "GUARD_DOWN"),
            {"name": "HarnessError", "code": "GUARD_DOWN"},
        ),
    ],
    ids=["plain", "harness"],
)
async def test_raising_guard_goes_to_outer_boundary(
    registry: ToolRegistry, exc: Exception, info: Any
) -> None:
    registry.register(make_def())
    log: list[str] = []

    def guard(e: Any) -> None:
        raise exc

    registry.guard(guard)
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    registry.on_result(lambda e, r: log.append("result"))
    result = await registry.execute(inp())
    expected = error_json("Error: guard exploded")
    if info is not None:
        expected["error"] = info
    assert result.to_json() == expected
    assert log == ["result"]


async def test_prepended_allow_cannot_bypass_scoped_guard(
    registry: ToolRegistry, agent: Agent
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.guard(lambda e: "scoped guard says no", scope=agent)
    registry.on_pre_execute(lambda e, n: Allow(), prepend=True)
    registry.on_pre_execute(lambda e, n: Allow(), scope=agent, prepend=True)
    result = await registry.execute(inp(agent=agent))
    assert result.to_json() == error_json("Error: scoped guard says no")
    assert ran == []


# -- §4.8 denial through post-execute ---------------------------------------------


async def test_accept_can_rewrite_denial_text_without_clearing_is_error(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_pre_execute(lambda e, n: Deny("nope"))
    registry.on_post_execute(lambda e, r, n: Accept(content=[text("denied politely")]))
    result = await registry.execute(inp())
    assert result.to_json() == error_json("denied politely")


async def test_block_on_denial(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_pre_execute(lambda e, n: Deny("nope"))
    registry.on_post_execute(
        lambda e, r, n: Block(feedback=[text("blocked")], additional_context=AC)
    )
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("blocked")],
        "isError": True,
        "additionalContext": AC,
    }


# -- §4.9 tools/execute and base dispatch -------------------------------------------


async def test_unknown_tool_pinned(registry: ToolRegistry) -> None:
    log: list[str] = []
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    result = await registry.execute(inp("nope"))
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": 'Error: unknown tool "nope"'}],
        "isError": True,
        "error": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
    }
    assert result.error == ToolErrorInfo("ToolNotFoundError", "UNKNOWN_TOOL")
    assert log == ["post"]


async def test_scoped_tool_is_unknown_to_other_callers(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def("mine"), scope=agent)
    assert (await registry.execute(inp("mine", agent=agent))).is_error is False
    for caller in (None, other):
        result = await registry.execute(inp("mine", agent=caller))
        assert only_text(result) == 'Error: unknown tool "mine"'
        assert err(result) == {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"}


async def test_dispatch_uses_scoped_shadow(
    registry: ToolRegistry, agent: Agent
) -> None:
    async def g(args: Any, execution: Any) -> Any:
        return [text("global")]

    async def s(args: Any, execution: Any) -> Any:
        return [text("scoped")]

    registry.register(make_def("echo", g))
    registry.register(make_def("echo", s), scope=agent)
    assert (await registry.execute(inp(agent=agent))).to_json() == ok_json("scoped")
    assert (await registry.execute(inp())).to_json() == ok_json("global")


async def test_dispatch_resolves_at_dispatch_time(registry: ToolRegistry) -> None:
    async def late(args: Any, execution: Any) -> Any:
        return [text("late tool")]

    async def wrap(execution: Any, next: Any) -> Any:
        dispose = registry.register(make_def("late", late))
        try:
            return await next()
        finally:
            dispose()

    registry.on_execute(wrap)
    assert (await registry.execute(inp("late"))).to_json() == ok_json("late tool")


async def test_tool_removed_before_dispatch_is_unknown(registry: ToolRegistry) -> None:
    dispose = registry.register(make_def("gone"))

    async def wrap(execution: Any, next: Any) -> Any:
        dispose()
        return await next()

    registry.on_execute(wrap)
    result = await registry.execute(inp("gone"))
    assert only_text(result) == 'Error: unknown tool "gone"'


async def test_wrapper_next_returns_error_result_for_tool_failure(
    registry: ToolRegistry,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        raise HarnessError("kaboom", "BOOM")

    registry.register(make_def("echo", body))
    seen: list[Any] = []

    async def wrap(execution: Any, next: Any) -> Any:
        result = await next()
        seen.append(result)
        return result

    registry.on_execute(wrap)
    result = await registry.execute(inp())
    assert seen[0].is_error is True
    assert seen[0].to_json() == error_json(
        "Error: kaboom", error={"name": "HarnessError", "code": "BOOM"}
    )
    assert result.to_json() == seen[0].to_json()


async def test_wrapper_next_returns_error_result_for_unknown_tool(
    registry: ToolRegistry,
) -> None:
    seen: list[Any] = []

    async def wrap(execution: Any, next: Any) -> Any:
        result = await next()
        seen.append(result.to_json())
        return result

    registry.on_execute(wrap)
    await registry.execute(inp("ghost"))
    assert seen == [
        error_json(
            'Error: unknown tool "ghost"',
            error={"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
        )
    ]


@pytest.mark.parametrize("is_async", [False, True])
async def test_wrapper_sees_a_non_json_dispatch_result_as_is(
    registry: ToolRegistry, is_async: bool
) -> None:
    """§4.9: wrapper results are taken as-is; JSON-ness is checked later."""

    def sync_body(args: Any, execution: Any) -> Any:
        return [{"type": "text", "text": "x", "score": float("nan")}]

    async def async_body(args: Any, execution: Any) -> Any:
        return sync_body(args, execution)

    registry.register(make_def("echo", async_body if is_async else sync_body))
    seen: list[Any] = []

    async def repair(execution: Any, next: Any) -> Any:
        result = await next()
        seen.append(result)
        return ToolExecutionResult(
            call_id=result.call_id, content=[text("repaired")], is_error=False
        )

    registry.on_execute(repair)
    result = await registry.execute(inp())
    assert seen[0].is_error is False
    assert seen[0].content[0]["text"] == "x"
    assert seen[0].content[0]["score"] != seen[0].content[0]["score"]  # NaN
    assert result.to_json() == ok_json("repaired")


async def test_a_passed_on_result_is_frozen_and_detached_from_the_tool(
    registry: ToolRegistry,
) -> None:
    returned: list[Any] = []

    def body(args: Any, execution: Any) -> Any:
        content = [text("ok"), {"type": "json", "value": {"n": [1, 2]}}]
        returned.append(content)
        return {"content": content, "meta": {"m": [1]}}

    registry.register(make_def("echo", body))
    in_wrapper: list[Any] = []

    def wrap(execution: Any, next: Any) -> Any:
        pending = next()
        in_wrapper.append(pending)
        return pending

    registry.on_execute(wrap)
    registry.on_post_execute(lambda e, r, n: n())
    result = await registry.execute(inp())
    returned[0][1]["value"]["n"].append(3)
    returned[0].append(text("late"))
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("ok"), {"type": "json", "value": {"n": [1, 2]}}],
        "isError": False,
        "meta": {"m": [1]},
    }
    with pytest.raises(TypeError):
        result.content[1]["value"]["n"].append(4)  # type: ignore[index]


async def test_a_sync_tool_runs_when_the_wrapper_calls_next(
    registry: ToolRegistry,
) -> None:
    """next() starts the chain at once, as the reference's promise does."""
    log: list[str] = []

    def body(args: Any, execution: Any) -> Any:
        log.append("tool")
        return "ok"

    registry.register(make_def("echo", body))

    async def wrap(execution: Any, next: Any) -> Any:
        pending = next()
        log.append("next returned")
        return await pending

    registry.on_execute(wrap)
    result = await registry.execute(inp())
    assert log == ["tool", "next returned"]
    assert result.to_json() == ok_json()


async def test_wrapper_callid_mismatch_pinned(registry: ToolRegistry) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id="forged", content=[text("x")], is_error=False
        )
    )
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    registry.on_result(lambda e, r: log.append("result"))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [
            {
                "type": "text",
                "text": 'Error: tools/execute returned callId "forged" for '
                'authoritative call "c1"',
            }
        ],
        "isError": True,
    }
    assert result.error is None
    assert log == ["result"]


async def test_wrapper_result_fields_are_kept(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id,
            content=[text("from wrapper")],
            is_error=True,
            error=ToolErrorInfo("RetryError", "RETRY_EXHAUSTED"),
            additional_context=AC,
            meta={"attempts": 3},
        )
    )
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("from wrapper")],
        "isError": True,
        "error": {"name": "RetryError", "code": "RETRY_EXHAUSTED"},
        "additionalContext": AC,
        "meta": {"attempts": 3},
    }


async def test_tool_receives_execution_with_call_identity(
    registry: ToolRegistry, agent: Agent
) -> None:
    seen: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        seen.append((execution.call_id, execution.name, execution.agent))
        return [text("ok")]

    registry.register(make_def("echo", body))
    await registry.execute(inp(agent=agent, call_id="abc"))
    assert seen == [("abc", "echo", agent)]


async def test_sync_tool_body(registry: ToolRegistry) -> None:
    def body(args: Any, execution: Any) -> Any:
        return [text(f"sync {args['n']}")]

    registry.register(make_def("echo", body))
    result = await registry.execute(inp(arguments={"n": 1}))
    assert result.to_json() == ok_json("sync 1")


# -- §2.3 return normalisation (raw definitions) -------------------------------


async def test_raw_definition_is_not_validated(registry: ToolRegistry) -> None:
    got: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        got.append(args)
        return [text("ran")]

    registry.register(
        ToolDefinition(
            name="raw",
            description="raw",
            parameters={
                "type": "object",
                "properties": {"n": {"type": "number"}},
                "required": ["n"],
            },
            execute=body,
        )
    )
    result = await registry.execute(inp("raw", {"n": "not a number"}))
    assert result.to_json() == ok_json("ran")
    result = await registry.execute(inp("raw", {}))
    assert result.to_json() == ok_json("ran")
    assert got == [{"n": "not a number"}, {}]


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        ([text("a"), text("b")], {"content": [text("a"), text("b")]}),
        ([], {"content": []}),
        ([{"type": "image", "data": "x", "odd": [1]}], None),
        ({"content": [text("m")], "meta": {"k": [1, 2]}}, None),
        ({"content": [text("m")], "meta": None}, None),
        ({"content": [text("m")], "meta": 0}, None),
        ({"content": [text("m")], "meta": ""}, None),
        ({"content": [text("m")]}, {"content": [text("m")]}),
        (
            {"content": [text("m")], "meta": 1, "ignored": True},
            {"content": [text("m")], "meta": 1},
        ),
        ("plain text", {"content": [text("plain text")]}),
    ],
    ids=[
        "list",
        "empty-list",
        "any-block-shape",
        "meta",
        "meta-null",
        "meta-zero",
        "meta-empty",
        "no-meta",
        "extra-keys",
        "str",
    ],
)
async def test_return_forms(
    registry: ToolRegistry, returned: Any, expected: Any
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return returned

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    if expected is None:
        expected = (
            {"content": returned} if isinstance(returned, list) else dict(returned)
        )
    want = {"callId": "c1", "isError": False, **expected}
    assert result.to_json() == want
    if "meta" in want:
        assert result.meta == want["meta"]
        assert result.meta is not ABSENT
    else:
        assert result.meta is ABSENT
        assert "meta" not in result.to_json()


@pytest.mark.parametrize(
    "returned",
    [
        None,
        5,
        True,
        {"content": "not a list"},
        {"nothing": []},
        (text("tuple"),),
        {"content": None},
        {"content": [text("ok")], "meta": float("nan")},
    ],
    ids=[
        "none",
        "int",
        "bool",
        "content-str",
        "no-content",
        "tuple",
        "content-none",
        "nan-meta",
    ],
)
async def test_unsupported_return_shapes_become_error_results(
    registry: ToolRegistry, returned: Any
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return returned

    registry.register(make_def("echo", body))
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(r))
    result = await registry.execute(inp())
    assert result.is_error is True
    assert only_text(result).startswith("Error: ")
    assert result.meta is ABSENT
    assert observed == [result]
    json.dumps(result.to_json())


# -- §4.10 post-execute ---------------------------------------------------------------


async def test_post_accept_replaces_content_keeps_the_rest(
    registry: ToolRegistry,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("original")], "meta": {"m": 1}}

    registry.register(make_def("echo", body))
    registry.on_post_execute(lambda e, r, n: Accept(content=[text("replaced")]))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("replaced")],
        "isError": False,
        "meta": {"m": 1},
    }


async def test_post_accept_empty_content_counts_as_supplied(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_post_execute(lambda e, r, n: Accept(content=[]))
    result = await registry.execute(inp())
    assert result.to_json() == {"callId": "c1", "content": [], "isError": False}


async def test_post_accept_without_fields_keeps_result(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("original")], "meta": None}

    registry.register(make_def("echo", body))
    registry.on_post_execute(lambda e, r, n: Accept())
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("original")],
        "isError": False,
        "meta": None,
    }


async def test_post_accept_on_error_keeps_is_error_and_error_info(
    registry: ToolRegistry,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        raise HarnessError("disk full", "ENOSPC")

    registry.register(make_def("echo", body))
    registry.on_post_execute(
        lambda e, r, n: Accept(content=[text("Error: try a smaller file")])
    )
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("Error: try a smaller file")],
        "isError": True,
        "error": {"name": "HarnessError", "code": "ENOSPC"},
    }


async def test_post_accept_replaces_additional_context_not_merged(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())

    async def wrap(e: Any, n: Any) -> Any:
        inner = await n()
        return ToolExecutionResult(
            call_id=inner.call_id,
            content=inner.content,
            is_error=False,
            additional_context=AC,
            meta="wrapped",
        )

    registry.on_execute(wrap)
    registry.on_post_execute(lambda e, r, n: Accept(additional_context=AC2))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("ok")],
        "isError": False,
        "additionalContext": AC2,
        "meta": "wrapped",
    }


async def test_post_accept_keeps_wrapper_additional_context(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id,
            content=[text("w")],
            is_error=False,
            additional_context=AC,
        )
    )
    registry.on_post_execute(lambda e, r, n: Accept(content=[text("new")]))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("new")],
        "isError": False,
        "additionalContext": AC,
    }


async def test_post_block_builds_a_new_result_dropping_error_meta_and_context(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id,
            content=[text("w")],
            is_error=True,
            error=ToolErrorInfo("X", "Y"),
            additional_context=AC,
            meta={"dropped": True},
        )
    )
    feedback = [text("Blocked: do not do that"), {"type": "text", "text": "2nd"}]
    registry.on_post_execute(lambda e, r, n: Block(feedback=feedback))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": feedback,
        "isError": True,
    }
    assert result.meta is ABSENT
    assert result.error is None
    assert result.additional_context is None


async def test_post_block_of_success_with_own_context(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("secret")], "meta": {"m": 1}}

    registry.register(make_def("echo", body))
    registry.on_post_execute(
        lambda e, r, n: Block(feedback=[text("no secrets")], additional_context=AC2)
    )
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("no secrets")],
        "isError": True,
        "additionalContext": AC2,
    }


async def test_post_block_feedback_verbatim_even_empty(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_post_execute(lambda e, r, n: Block(feedback=[]))
    result = await registry.execute(inp())
    assert result.to_json() == {"callId": "c1", "content": [], "isError": True}


async def test_post_sees_dispatched_result_as_immutable_view(
    registry: ToolRegistry,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("original")], "meta": {"m": [1]}}

    registry.register(make_def("echo", body))
    attempts: list[str] = []

    def post(e: Any, result: Any, n: Any) -> Any:
        assert result.to_json() == {
            "callId": "c1",
            "content": [text("original")],
            "isError": False,
            "meta": {"m": [1]},
        }
        for mutate in (
            lambda: result.content.append(text("sneaky")),
            lambda: result.content[0].__setitem__("text", "sneaky"),
            lambda: setattr(result, "is_error", True),
            lambda: result.meta["m"].append(2),
        ):
            try:
                mutate()
                attempts.append("mutated")
            except (TypeError, AttributeError):
                attempts.append("refused")
        return n()

    registry.on_post_execute(post)
    result = await registry.execute(inp())
    assert attempts == ["refused"] * 4
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("original")],
        "isError": False,
        "meta": {"m": [1]},
    }


async def test_post_runs_for_failures_unknown_tools_and_wrapper_results(
    registry: ToolRegistry,
) -> None:
    async def broken(args: Any, execution: Any) -> Any:
        raise ValueError("bad value")

    registry.register(make_def("broken", broken))
    seen: list[Any] = []
    registry.on_post_execute(lambda e, r, n: (seen.append(r.to_json()), n())[1])
    await registry.execute(inp("broken"))
    await registry.execute(inp("missing"))
    dispose = registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id, content=[text("w")], is_error=False
        )
    )
    await registry.execute(inp("missing"))
    dispose()
    assert seen == [
        error_json("Error: bad value"),
        error_json(
            'Error: unknown tool "missing"',
            error={"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
        ),
        ok_json("w"),
    ]


async def test_inner_post_block_seen_by_outer_and_may_be_overridden(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    seen: list[Any] = []

    async def outer(e: Any, r: Any, n: Any) -> Any:
        decision = await n()
        seen.append(decision)
        return Accept()

    registry.on_post_execute(outer)
    registry.on_post_execute(lambda e, r, n: Block(feedback=[text("inner block")]))
    result = await registry.execute(inp())
    assert isinstance(seen[0], Block)
    assert result.to_json() == ok_json()


# -- §4.12 final materialisation -------------------------------------------------


@pytest.mark.parametrize(
    "returned",
    [
        {"content": [text("ok")], "meta": {"x": float("nan")}},
        {"content": [text("ok")], "meta": lambda: 1},
        {"content": [text("ok")], "meta": -0.0},
        {"content": [text("ok")], "meta": (1, 2)},
        {"content": [text("ok")], "meta": {1: "int key"}},
        [{"type": "text", "text": "ok", "fn": print}],
        [{"type": "text", "text": float("inf")}],
        [{"type": "text", "text": b"bytes"}],
        [DictSub(type="text", text="sub")],
    ],
    ids=[
        "meta-nan",
        "meta-fn",
        "meta-neg-zero",
        "meta-tuple",
        "meta-int-key",
        "content-fn",
        "content-inf",
        "content-bytes",
        "content-dict-sub",
    ],
)
async def test_non_json_final_result_becomes_error(
    registry: ToolRegistry, returned: Any
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return returned

    registry.register(make_def("echo", body))
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(r))
    result = await registry.execute(inp())
    assert result.to_json() == error_json(RESULT_NOT_JSON)
    assert result.error is None
    assert result.meta is ABSENT
    assert observed == [result]
    assert observed[0] is result


async def test_cyclic_meta_becomes_error(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": _cycle_dict()}

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    assert result.to_json() == error_json(RESULT_NOT_JSON)


async def test_non_json_wrapper_fields_become_error(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id,
            content=[text("ok")],
            is_error=False,
            additional_context={"content": [text("x")], "source": {1, 2}},
        )
    )
    result = await registry.execute(inp())
    assert result.to_json() == error_json(RESULT_NOT_JSON)


async def test_non_json_post_content_becomes_error(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_post_execute(
        lambda e, r, n: Accept(content=[{"type": "text", "text": float("nan")}])
    )
    result = await registry.execute(inp())
    assert result.to_json() == error_json(RESULT_NOT_JSON)


async def test_harness_error_with_non_string_code_still_total(
    registry: ToolRegistry,
) -> None:
    class WeirdCode(HarnessError):
        pass

    async def body(args: Any, execution: Any) -> Any:
        raise WeirdCode("weird", 42)  # type: ignore[arg-type]

    registry.register(make_def("echo", body))
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(r))
    result = await registry.execute(inp())
    assert result.is_error is True
    assert result.error is None
    assert observed == [result]
    payload = result.to_json()
    assert json.loads(json.dumps(payload)) == payload


async def test_final_result_is_deep_frozen_and_detached(
    registry: ToolRegistry,
) -> None:
    held_content = [text("ok")]
    held_meta = {"rows": [1, 2]}

    async def body(args: Any, execution: Any) -> Any:
        return {"content": held_content, "meta": held_meta}

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    assert result.content is not held_content
    assert result.meta is not held_meta
    held_content.append(text("later"))
    held_content[0]["text"] = "changed"
    held_meta["rows"].append(3)
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("ok")],
        "isError": False,
        "meta": {"rows": [1, 2]},
    }
    with pytest.raises(TypeError):
        result.content.append(text("x"))  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        result.content[0]["text"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        result.meta["rows"].append(4)
    with pytest.raises(AttributeError):
        result.is_error = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        result.content = []  # type: ignore[misc]


async def test_to_json_is_plain_json(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": {"a": [1, 2.5, None, True]}}

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    payload = result.to_json()
    assert json.loads(json.dumps(payload)) == payload


# -- §4.13 observers ---------------------------------------------------------------


async def test_observer_fires_once_on_every_path(
    registry: ToolRegistry, agent: Agent
) -> None:
    async def ok(args: Any, execution: Any) -> Any:
        return [text("ok")]

    async def boom(args: Any, execution: Any) -> Any:
        raise RuntimeError("boom")

    async def bad(args: Any, execution: Any) -> Any:
        return {"content": [text("x")], "meta": float("nan")}

    registry.register(make_def("ok", ok))
    registry.register(make_def("boom", boom))
    registry.register(make_def("bad", bad))

    def pre(e: Any, n: Any) -> Any:
        if e.arguments == {"deny": True}:
            return Deny("denied")
        if e.arguments == {"raise": True}:
            raise RuntimeError("pre broke")
        return n()

    registry.on_pre_execute(pre)
    counts: Counter[str] = Counter()
    registry.on_result(lambda e, r: counts.update([e.call_id]))

    cases = [
        inp("ok", call_id="success"),
        inp("boom", call_id="tool-raise"),
        inp("bad", call_id="bad-result"),
        inp("missing", call_id="unknown"),
        inp("ok", {"deny": True}, call_id="deny"),
        inp("ok", {"raise": True}, call_id="pre-raise"),
        inp("ok", {"x": float("nan")}, call_id="bad-args"),
        inp("ok", call_id="scoped", agent=agent),
    ]
    for case in cases:
        result = await registry.execute(case)
        assert result.call_id == case.call_id
    assert counts == Counter({case.call_id: 1 for case in cases})


async def test_observer_receives_frozen_execution_and_result(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    checks: list[str] = []

    def observer(execution: Any, result: Any) -> None:
        try:
            result.content.append(text("x"))
        except TypeError:
            checks.append("content frozen")
        try:
            result.content[0]["text"] = "x"
        except TypeError:
            checks.append("block frozen")
        try:
            execution.arguments["a"] = 2
        except TypeError:
            checks.append("arguments frozen")

    registry.on_result(observer)
    result = await registry.execute(inp(arguments={"a": 1}))
    assert checks == ["content frozen", "block frozen", "arguments frozen"]
    assert result.to_json() == ok_json()


async def test_raising_observer_is_contained_and_logged(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_result(lambda e, r: log.append("first"))

    def broken(e: Any, r: Any) -> None:
        raise RuntimeError("observer blew up")

    registry.on_result(broken)
    registry.on_result(lambda e, r: log.append("last"))
    with caplog.at_level(logging.WARNING):
        result = await registry.execute(inp(call_id="c7"))
    assert result.to_json() == ok_json(call_id="c7")
    assert log == ["first", "last"]
    messages = [r.getMessage() for r in caplog.records]
    assert (
        'tool "echo" (c7): tools/result observer failed: observer blew up' in messages
    )
    warnings = [
        r for r in caplog.records if "tools/result observer failed" in r.getMessage()
    ]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING


class Hostile(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no printing")


async def test_observer_with_unprintable_error_logs_fallback(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.register(make_def())

    def broken(e: Any, r: Any) -> None:
        raise Hostile()

    registry.on_result(broken)
    with caplog.at_level(logging.WARNING):
        result = await registry.execute(inp())
    assert result.to_json() == ok_json()
    assert (
        'tool "echo" (c1): tools/result observer failed: <unprintable thrown value>'
        in [r.getMessage() for r in caplog.records]
    )


async def test_raising_observer_on_error_path_is_contained(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(e: Any, r: Any) -> None:
        raise ValueError("still broken")

    registry.on_result(broken)
    with caplog.at_level(logging.WARNING):
        result = await registry.execute(inp("missing", {"x": (1,)}))
    assert result.to_json() == error_json(ARGS_NOT_JSON)
    assert 'tool "missing" (c1): tools/result observer failed: still broken' in [
        r.getMessage() for r in caplog.records
    ]


async def test_observers_are_scope_filtered(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def())
    heard: list[str] = []
    registry.on_result(lambda e, r: heard.append("alice"), scope=agent)
    registry.on_result(lambda e, r: heard.append("bob"), scope=other)
    registry.on_result(lambda e, r: heard.append("all"))
    await registry.execute(inp(agent=agent))
    await registry.execute(inp())
    assert heard == ["alice", "all", "all"]


# -- §4.14 error normalisation ---------------------------------------------------


class DiskFull(HarnessError):
    def __init__(self) -> None:
        super().__init__("no space left", "ENOSPC")


class BrokenCode(HarnessError):
    @property
    def code(self) -> str:
        raise RuntimeError("cannot read code")

    @code.setter
    def code(self, value: str) -> None:
        pass


@pytest.mark.parametrize(
    ("exc", "expected_text", "info"),
    [
        (RuntimeError("plain failure"), "Error: plain failure", None),
        (KeyError("k"), "Error: 'k'", None),
        (
            HarnessError("raw", "BOOM"),
            "Error: raw",
            {"name": "HarnessError", "code": "BOOM"},
        ),
        (DiskFull(), "Error: no space left", {"name": "DiskFull", "code": "ENOSPC"}),
        (Hostile(), "Error: <unprintable thrown value>", None),
        (BrokenCode("odd", "X"), "Error: odd", None),
    ],
    ids=["plain", "keyerror", "harness", "subclass", "hostile", "broken-code"],
)
async def test_tool_failures_normalise(
    registry: ToolRegistry, exc: Exception, expected_text: str, info: Any
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        raise exc

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    expected = error_json(expected_text)
    if info is not None:
        expected["error"] = info
    assert result.to_json() == expected
    assert result.meta is ABSENT


async def test_sync_tool_failure_normalises(registry: ToolRegistry) -> None:
    def body(args: Any, execution: Any) -> Any:
        raise HarnessError("sync boom", "BOOM")

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    assert result.to_json() == error_json(
        "Error: sync boom", error={"name": "HarnessError", "code": "BOOM"}
    )


async def test_hostile_listener_error(registry: ToolRegistry) -> None:
    registry.register(make_def())

    def pre(e: Any, n: Any) -> Any:
        raise Hostile()

    registry.on_pre_execute(pre)
    result = await registry.execute(inp())
    assert result.to_json() == error_json("Error: <unprintable thrown value>")


# -- §4.16 additional context / §4.17 meta -----------------------------------------


async def test_additional_context_is_ferried_not_merged_into_content(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_post_execute(lambda e, r, n: Accept(additional_context=AC))
    result = await registry.execute(inp())
    assert result.content == [text("ok")]
    assert result.additional_context == AC
    assert result.to_json() == {**ok_json(), "additionalContext": AC}
    with pytest.raises(TypeError):
        result.additional_context["content"].append(text("x"))


async def test_meta_only_on_success(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": {"lines": 3}}

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    assert result.meta == {"lines": 3}
    with pytest.raises(TypeError):
        result.meta["lines"] = 4

    async def failing(args: Any, execution: Any) -> Any:
        raise RuntimeError("failed")

    registry.register(make_def("fail", failing))
    failed = await registry.execute(inp("fail"))
    assert failed.meta is ABSENT
    assert "meta" not in failed.to_json()


async def test_result_to_json_omits_absent_keys_only() -> None:
    result = ToolExecutionResult(call_id="x", content=[text("a")], is_error=False)
    assert result.to_json() == {"callId": "x", "content": [text("a")], "isError": False}
    with_null = ToolExecutionResult(call_id="x", content=[], is_error=False, meta=None)
    assert with_null.to_json() == {
        "callId": "x",
        "content": [],
        "isError": False,
        "meta": None,
    }
    full = ToolExecutionResult(
        call_id="x",
        content=[],
        is_error=True,
        error=ToolErrorInfo("N", "C"),
        additional_context=AC,
        meta=0,
    )
    assert full.to_json() == {
        "callId": "x",
        "content": [],
        "isError": True,
        "error": {"name": "N", "code": "C"},
        "additionalContext": AC,
        "meta": 0,
    }


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
    source = BadId(**_counting_values(agent, other, [{}]))
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
