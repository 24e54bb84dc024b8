# mypy: disable-error-code="func-returns-value"
"""The edges of lossless JSON, and inputs that once broke a guarantee.

Section 6 of the fuzz suites (see ``fuzzkit``). Each regression is pinned
here by name; the strategies in ``fuzzkit`` draw the same inputs too.
"""

from __future__ import annotations

from typing import Any

import pytest
from fuzzkit import (
    ARGS_NOT_JSON,
    MAX_DEPTH,
    RESULT_NOT_JSON,
    CollidingKey,
    EvilStr,
    HostileStr,
    SpoofDict,
    SpoofStr,
    assert_lossless_json,
    assert_observed_once,
    call,
    instrumented,
    text,
)
from jsonshapes import nested

from dsh_nb.tools import Agent, SchemaProp, define_tool, validate_args
from dsh_nb.tools.schema.argcheck import own_check


def tool_check(spec: dict[str, Any]) -> Any:
    """The check define_tool builds for ``spec``."""
    definition = define_tool(name="t", description="", parameters=spec, execute=str)
    check = own_check(definition)
    assert check is not None
    return check


# -- 6. boundaries of lossless JSON --------------------------------------------------


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        (nested(MAX_DEPTH - 1, True), True),
        (nested(MAX_DEPTH, True), True),
        (nested(MAX_DEPTH + 1, True), False),
        (nested(MAX_DEPTH, False), True),
        (nested(MAX_DEPTH + 1, False), False),
        (nested(50_000, False), False),
        (10**4298, True),  # 4,299 digits
        (-(10**4298), True),
        (10**4300, False),  # 4,301 digits
        (10**100_000, False),
    ],
    ids=[
        "depth-255",
        "depth-256",
        "depth-257",
        "list-256",
        "list-257",
        "depth-50000",
        "int-4299-digits",
        "negative-4299-digits",
        "int-4301-digits",
        "int-100001-digits",
    ],
)
def test_depth_and_int_limits(value: Any, accepted: bool) -> None:
    seen: list[Any] = []

    def echo(args: Any) -> Any:
        seen.append(args)
        return {"content": [text("ok")], "meta": args}

    agent = Agent("limits")
    registry, counters = instrumented(agent)
    registry.register(
        define_tool(name="echo", description="", parameters={}, execute=echo)
    )
    result = call(
        registry, "echo", {"v": value} if type(value) is int else value, agent
    )
    payload = assert_lossless_json(result)
    assert_observed_once(counters, result, "c1")
    if not accepted:
        assert result.text == ARGS_NOT_JSON
    elif type(value) is int:
        assert payload["meta"] == {"v": value}
    else:
        # A nested non-object is not an object; the call still ends cleanly.
        assert result.is_error is (type(value) is not dict)


# -- inputs that once broke a guarantee, pinned by name ---------------------------


class ReprRaises:
    def __repr__(self) -> str:
        raise RuntimeError("hostile __repr__")

    __str__ = __repr__
    __hash__ = object.__hash__


@pytest.mark.parametrize("where", ["arguments", "result-meta", "result-content"])
@pytest.mark.parametrize("key_kind", ["repr-raises", "huge-int"])
def test_execute_is_total_for_keys_whose_repr_fails(where: str, key_kind: str) -> None:
    key: Any = ReprRaises() if key_kind == "repr-raises" else 10**5000
    poisoned = {key: 1}

    def body(args: Any) -> Any:
        if where == "result-meta":
            return {"content": [text("ok")], "meta": poisoned}
        if where == "result-content":
            return [poisoned]
        return [text("ok")]

    agent = Agent("bug")
    registry, counters = instrumented(agent)
    registry.register(
        define_tool(name="t", description="", parameters={}, execute=body)
    )
    result = call(registry, "t", poisoned if where == "arguments" else {}, agent)
    expected = ARGS_NOT_JSON if where == "arguments" else RESULT_NOT_JSON
    assert result.text == expected
    assert_observed_once(counters, result, "c1")


@pytest.mark.parametrize(
    ("where", "violation"),
    [
        ("top", '"arguments" must be an object'),
        ("nested", '"o" must be an object'),
        ("enum", '"e" must be a string'),
    ],
)
def test_validate_args_sees_through_a_spoofed_class(where: str, violation: str) -> None:
    """isinstance() honours a spoofed __class__; the validators read type()."""
    spec = {
        "o": SchemaProp(type="object", properties={"b": SchemaProp(type="string")}),
        "e": SchemaProp(type="string", enum=("x",)),
    }
    args: Any = {
        "top": SpoofDict(),
        "nested": {"o": SpoofDict()},
        "enum": {"e": SpoofStr()},
    }[where]
    assert validate_args(spec, args) == [violation]
    assert tool_check(spec)(args) == [violation]


@pytest.mark.parametrize(
    ("key_kind", "message"),
    [("colliding-object", "hostile __eq__"), ("str-subclass", "hostile str __eq__")],
)
def test_validate_args_is_total_for_a_key_colliding_with_a_spec_key(
    key_kind: str, message: str
) -> None:
    """A lookup of "a" runs the colliding key's __eq__; what it raises is reported."""
    spec = {"a": SchemaProp(type="string")}
    key = CollidingKey() if key_kind == "colliding-object" else EvilStr("a")
    args = {key: 1}
    expected = [f"arguments could not be validated: {message}"]
    assert validate_args(spec, args) == expected
    assert tool_check(spec)(args) == expected


def test_a_malformed_spec_still_raises_through_the_net() -> None:
    spec: Any = {"a": {"type": "strang"}}
    with pytest.raises(
        ValueError, match='unreachable variant in validateArgs: "strang"'
    ):
        validate_args(spec, {"a": 1})
    nested: Any = {"o": {"type": "object", "properties": spec}}
    with pytest.raises(
        ValueError, match='unreachable variant in validateArgs: "strang"'
    ):
        validate_args(nested, {"o": {"a": 1}})
    with pytest.raises(
        ValueError, match='unreachable variant in validateArgs: "strang"'
    ):
        validate_args({"l": {"type": "array", "items": spec["a"]}}, {"l": [1]})


def test_execute_is_total_for_those_same_hostile_arguments() -> None:
    """What validate_args chokes on never reaches it through execute()."""
    agent = Agent("ok")
    registry, counters = instrumented(agent)
    registry.register(
        define_tool(
            name="t",
            description="",
            parameters={"a": SchemaProp(type="string")},
            execute=lambda a: [text("ok")],
        )
    )
    for i, args in enumerate(
        [SpoofDict(), {"a": SpoofStr()}, {CollidingKey(): 1}, {"a": HostileStr()}]
    ):
        counters.result.clear()
        counters.scoped_result.clear()
        counters.trace.clear()
        result = call(registry, "t", args, agent, call_id=f"c{i}")
        assert result.text == ARGS_NOT_JSON
        assert_observed_once(counters, result, f"c{i}")
