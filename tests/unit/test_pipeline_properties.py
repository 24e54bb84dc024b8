# mypy: disable-error-code="func-returns-value"
"""Property tests for the pipeline's totality (contract §4.1, §4.2, §4.12, §4.13).

Random JSON and non-JSON arguments, random tool returns and random listener
behaviour never make ``execute`` raise; every result is lossless JSON,
deep-frozen, and observers fire exactly once per call. Bounded for speed.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import json
import math
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonshapes import (
    DictSub,
    ListSub,
    Opaque,
    buried,
    cyclic_dict,
    cyclic_list,
    finite_floats,
    indirect_cycle,
    json_trees,
)

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.errors import HarnessError
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    Accept,
    Allow,
    Ask,
    Block,
    Deny,
    ToolExecutionInput,
    ToolExecutionResult,
)

T = TypeVar("T")

ARGS_NOT_JSON = "Error: tool execution arguments must be losslessly JSON-serializable"

# max_examples comes from the profile tests/conftest.py loads (--slow: 10,000).
SETTINGS = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


# -- strategies ----------------------------------------------------------------


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**3000), max_value=2**3000),
    finite_floats,
    st.text(max_size=8),
)
json_values = json_trees(json_scalars, max_leaves=25)


def _lambda() -> Any:
    return lambda: None


poison = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0]),
    st.lists(json_scalars, max_size=3).map(tuple),
    st.sets(st.integers(), max_size=3),
    st.frozensets(st.integers(), max_size=3),
    st.binary(max_size=4),
    st.binary(max_size=4).map(bytearray),
    st.dictionaries(st.text(max_size=3), json_scalars, max_size=2).map(DictSub),
    st.lists(json_scalars, max_size=2).map(ListSub),
    st.builds(Opaque),
    st.builds(object),
    st.just(len),
    st.builds(_lambda),
    st.dictionaries(
        st.one_of(
            st.integers(),
            st.none(),
            st.booleans(),
            finite_floats,
            st.tuples(st.integers()),
            st.binary(max_size=2),
        ),
        json_scalars,
        min_size=1,
        max_size=2,
    ),
    st.builds(cyclic_dict),
    st.builds(cyclic_list),
    st.builds(indirect_cycle),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.datetimes(),
    st.just(datetime.date(2026, 1, 1)),
    st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False),
    st.just(int),
)


non_json = buried(poison, json_values, max_leaves=6)


def _nest(depth_and_kind: tuple[int, bool]) -> Any:
    depth, as_dict = depth_and_kind
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


deep = st.tuples(st.integers(1, 4000), st.booleans()).map(_nest)

tagged_arguments = st.one_of(
    json_values.map(lambda v: ("json", v)),
    non_json.map(lambda v: ("bad", v)),
)


# -- invariants --------------------------------------------------------------------


def assert_lossless_json(result: ToolExecutionResult) -> dict[str, Any]:
    assert isinstance(result, ToolExecutionResult)
    payload = result.to_json()
    encoded = json.dumps(payload, allow_nan=False)
    assert json.loads(encoded) == payload
    assert isinstance(result.is_error, bool)
    assert isinstance(result.call_id, str)
    return payload


def assert_deep_frozen(result: ToolExecutionResult) -> None:
    with pytest.raises(TypeError):
        result.content.append(text("mutated"))  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        result.content.clear()  # type: ignore[attr-defined]
    for block in result.content:
        with pytest.raises(TypeError):
            block["text"] = "mutated"  # type: ignore[index]
    with pytest.raises(AttributeError):
        result.is_error = not result.is_error  # type: ignore[misc]


def make_registry(execute: Callable[..., Any]) -> tuple[ToolRegistry, list[Any]]:
    registry = ToolRegistry()
    registry.register(
        ToolDefinition(
            name="echo",
            description="echo",
            parameters={"type": "object", "properties": {}},
            execute=execute,
        )
    )
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append((e, r)))
    return registry, observed


# -- properties ----------------------------------------------------------------------


@SETTINGS
@given(tagged=tagged_arguments)
def test_any_arguments_never_raise_and_results_are_lossless_frozen(
    tagged: tuple[str, Any],
) -> None:
    kind, arguments = tagged

    async def echo(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": args}

    registry, observed = make_registry(echo)
    agent = Agent("prop")
    scoped: list[Any] = []
    registry.on_result(lambda e, r: scoped.append(r), scope=agent)
    before = copy.deepcopy(arguments) if kind == "json" else None

    result = run(
        registry.execute(
            ToolExecutionInput(
                call_id="c1", name="echo", arguments=arguments, agent=agent
            )
        )
    )

    payload = assert_lossless_json(result)
    assert_deep_frozen(result)
    assert len(observed) == 1
    assert observed[0][1] is result
    assert scoped == [result]
    assert result.call_id == "c1"
    if kind == "json":
        assert result.is_error is False
        assert result.meta == arguments
        assert payload["meta"] == arguments
        assert arguments == before
        assert type(arguments) is type(before)
    elif kind == "bad":
        assert payload == {
            "callId": "c1",
            "content": [text(ARGS_NOT_JSON)],
            "isError": True,
        }
        assert observed[0][0].call_id == "c1"
        assert observed[0][0].agent is agent


@SETTINGS
@given(arguments=json_values)
def test_tool_gets_an_equal_distinct_frozen_copy(arguments: Any) -> None:
    seen: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        seen.append(args)
        return [text("ok")]

    registry, _ = make_registry(body)
    snapshot = copy.deepcopy(arguments)
    result = run(
        registry.execute(
            ToolExecutionInput(call_id="c1", name="echo", arguments=arguments)
        )
    )
    assert result.is_error is False
    assert seen == [arguments]
    assert arguments == snapshot
    got = seen[0]
    if isinstance(arguments, (dict, list)):
        assert got is not arguments
        with pytest.raises(TypeError):
            if isinstance(got, dict):
                got["__new__"] = 1
            else:
                got.append(1)
        # The caller's value stays mutable.
        if isinstance(arguments, dict):
            arguments["__new__"] = 1
        else:
            arguments.append(1)


tool_returns = st.one_of(
    st.lists(st.dictionaries(st.text(max_size=4), json_values, max_size=3), max_size=3),
    st.lists(json_values, max_size=3),
    st.builds(
        lambda content, meta: {"content": content, "meta": meta},
        st.lists(st.builds(text, st.text(max_size=5)), max_size=2),
        st.one_of(json_values, non_json),
    ),
    st.builds(
        lambda content: {"content": content},
        st.one_of(json_values, non_json),
    ),
    st.text(max_size=5),
    json_scalars,
    non_json,
)

failures = st.sampled_from(
    [
        RuntimeError("plain"),
        HarnessError("harness", "CODE"),
        KeyError("k"),
        ValueError(),
    ]
)


@SETTINGS
@given(
    outcome=st.one_of(
        tool_returns.map(lambda v: ("return", v)), failures.map(lambda e: ("raise", e))
    ),
    is_async=st.booleans(),
)
def test_any_tool_behaviour_never_raises(
    outcome: tuple[str, Any], is_async: bool
) -> None:
    how, value = outcome

    def sync_body(args: Any, execution: Any) -> Any:
        if how == "raise":
            raise value
        return value

    async def async_body(args: Any, execution: Any) -> Any:
        return sync_body(args, execution)

    registry, observed = make_registry(async_body if is_async else sync_body)
    result = run(
        registry.execute(ToolExecutionInput(call_id="c1", name="echo", arguments={}))
    )
    assert_lossless_json(result)
    assert_deep_frozen(result)
    assert len(observed) == 1
    assert observed[0][1] is result
    if how == "raise":
        assert result.is_error is True


pre_behaviour = st.sampled_from(
    ["next", "allow", "deny", "ask", "ask-reason", "none", "raise", "garbage", "twice"]
)
guard_behaviour = st.sampled_from(["none", "reason", "empty", "raise"])
wrap_behaviour = st.sampled_from(
    ["next", "short", "wrong-id", "none", "raise", "raise-after", "non-json", "twice"]
)
post_behaviour = st.sampled_from(
    [
        "next",
        "accept",
        "accept-content",
        "accept-bad-content",
        "accept-context",
        "block",
        "none",
        "raise",
        "garbage",
    ]
)


def _install(
    registry: ToolRegistry,
    pre: str,
    guard: str,
    wrap: str,
    post: str,
    scope: Agent | None,
) -> None:
    async def pre_listener(e: Any, n: Any) -> Any:
        if pre == "next":
            return await n()
        if pre == "allow":
            return Allow()
        if pre == "deny":
            return Deny("denied")
        if pre == "ask":
            return Ask()
        if pre == "ask-reason":
            return Ask("why")
        if pre == "none":
            return None
        if pre == "raise":
            raise HarnessError("pre", "PRE")
        if pre == "twice":
            await n()
            return await n()
        return object()

    def guard_fn(e: Any) -> Any:
        if guard == "reason":
            return "guarded"
        if guard == "empty":
            return ""
        if guard == "raise":
            raise RuntimeError("guard")
        return None

    async def wrap_listener(e: Any, n: Any) -> Any:
        if wrap == "next":
            return await n()
        if wrap == "short":
            return ToolExecutionResult(
                call_id=e.call_id, content=[text("short")], is_error=False
            )
        if wrap == "wrong-id":
            return ToolExecutionResult(call_id="other", content=[], is_error=False)
        if wrap == "none":
            return None
        if wrap == "raise":
            raise RuntimeError("wrap")
        if wrap == "raise-after":
            await n()
            raise RuntimeError("wrap after")
        if wrap == "twice":
            await n()
            return await n()
        return ToolExecutionResult(
            call_id=e.call_id,
            content=[text("x")],
            is_error=False,
            meta={"bad": math.nan},
        )

    def post_listener(e: Any, r: Any, n: Any) -> Any:
        if post == "next":
            return n()
        if post == "accept":
            return Accept()
        if post == "accept-content":
            return Accept(content=[text("replaced")])
        if post == "accept-bad-content":
            return Accept(content=[{"type": "text", "text": (1, 2)}])
        if post == "accept-context":
            return Accept(
                additional_context={
                    "content": [text("ctx")],
                    "source": {"kind": "plugin", "plugin": "p"},
                }
            )
        if post == "block":
            return Block(feedback=[text("blocked")])
        if post == "none":
            return None
        if post == "raise":
            raise RuntimeError("post")
        return "garbage"

    registry.on_pre_execute(pre_listener, scope=scope)
    registry.guard(guard_fn, scope=scope)
    registry.on_execute(wrap_listener, scope=scope)
    registry.on_post_execute(post_listener, scope=scope)


@SETTINGS
@given(
    pre=pre_behaviour,
    guard=guard_behaviour,
    wrap=wrap_behaviour,
    post=post_behaviour,
    scoped=st.booleans(),
    arguments=st.one_of(json_values, non_json),
    tool_name=st.sampled_from(["echo", "missing"]),
)
def test_any_listener_behaviour_never_raises(
    pre: str,
    guard: str,
    wrap: str,
    post: str,
    scoped: bool,
    arguments: Any,
    tool_name: str,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": {"m": 1}}

    registry, observed = make_registry(body)
    agent = Agent("prop")
    _install(registry, pre, guard, wrap, post, agent if scoped else None)

    result = run(
        registry.execute(
            ToolExecutionInput(
                call_id="c1", name=tool_name, arguments=arguments, agent=agent
            )
        )
    )
    assert_lossless_json(result)
    assert_deep_frozen(result)
    assert len(observed) == 1
    assert observed[0][1] is result
    assert result.call_id == "c1"


@SETTINGS
@given(arguments=deep)
def test_deep_nesting_never_breaks_execute_or_serialisation(arguments: Any) -> None:
    async def echo(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": args}

    registry, observed = make_registry(echo)
    result = run(
        registry.execute(
            ToolExecutionInput(call_id="c1", name="echo", arguments=arguments)
        )
    )
    assert_lossless_json(result)
    assert_deep_frozen(result)
    assert len(observed) == 1


@pytest.mark.parametrize("depth", [200, 500, 600, 900, 990])
def test_deeply_nested_meta_keeps_to_json_total(depth: int) -> None:
    """A result execute() accepted must also serialise (no RecursionError)."""
    arguments = _nest((depth, True))

    async def echo(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": args}

    registry, observed = make_registry(echo)
    result = run(
        registry.execute(
            ToolExecutionInput(call_id="c1", name="echo", arguments=arguments)
        )
    )
    assert_lossless_json(result)
    assert len(observed) == 1


def test_huge_integer_arguments_keep_results_serialisable() -> None:
    """An int beyond CPython's str-conversion limit must not break JSON output."""
    huge = 10**5000

    async def echo(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": args}

    registry, observed = make_registry(echo)
    result = run(
        registry.execute(
            ToolExecutionInput(call_id="c1", name="echo", arguments={"n": huge})
        )
    )
    assert_lossless_json(result)
    assert len(observed) == 1
