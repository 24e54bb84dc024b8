# mypy: disable-error-code="func-returns-value"
"""Random typed signatures through ``@tool``: schema, binding and totality.

Section 2 of the fuzz suites (see ``fuzzkit``). The schema matches the
runtime both ways: an argument object the tool accepts is valid under its
exported JSON Schema, and one valid under the schema is accepted (the one
documented exceptions: ``null`` for an optional, non-nullable parameter
means "use the default", and a float parameter refuses an integer beyond
float range).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fuzzkit import (
    ARGS_NOT_JSON,
    META,
    any_arguments,
    assert_frozen_result,
    assert_lossless_json,
    assert_meta_valid,
    assert_observed_once,
    call,
    instrumented,
    json_scalars,
    json_values,
    lossless,
    non_json,
    text,
)
from hypothesis import event, given
from hypothesis import strategies as st
from jsonshapes import finite_floats
from typing_extensions import TypedDict  # pydantic needs it inside a dataclass

from dsh_nb.tools import Agent, tool

# -- 2. random typed signatures through @tool ----------------------------------------


@dataclasses.dataclass(frozen=True)
class Shape:
    """An annotation, how to make values it accepts, and how to check the bound one."""

    annotation: Any
    values: st.SearchStrategy[Any]
    check: Callable[[Any], bool]
    optional: bool = False


_names = iter(range(10**9))


def _fresh(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


_LEAVES: tuple[Callable[[st.DrawFn], Shape], ...] = (
    lambda draw: Shape(str, st.text(max_size=5), lambda v: type(v) is str),
    lambda draw: Shape(int, st.integers(-(2**60), 2**60), lambda v: type(v) is int),
    lambda draw: Shape(
        float,
        st.one_of(finite_floats, st.integers(-100, 100)),
        lambda v: type(v) in (int, float),
    ),
    lambda draw: Shape(bool, st.booleans(), lambda v: type(v) is bool),
    lambda draw: Shape(
        list, st.lists(json_values, max_size=3), lambda v: isinstance(v, list)
    ),
    lambda draw: Shape(
        dict[str, Any],
        st.dictionaries(st.text(max_size=3), json_values, max_size=3),
        lambda v: isinstance(v, dict),
    ),
)


def _literal(draw: st.DrawFn) -> Shape:
    members = tuple(
        draw(st.lists(st.text(max_size=3), min_size=1, max_size=3, unique=True))
    )
    return Shape(Literal[members], st.sampled_from(members), lambda v: v in members)


def _enum(draw: st.DrawFn) -> Shape:
    values = draw(st.lists(st.text(max_size=3), min_size=1, max_size=3, unique=True))
    cls = enum.Enum(_fresh("E"), {f"M{i}": v for i, v in enumerate(values)})  # type: ignore[misc]
    return Shape(cls, st.sampled_from(values), lambda v: isinstance(v, cls))


def _all_of(
    kind: type, check: Callable[[Any], bool], items: Callable[[Any], Any]
) -> Callable[[Any], bool]:
    def check_all(v: Any) -> bool:
        return isinstance(v, kind) and all(check(x) for x in items(v))

    return check_all


def _or_none(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def check_optional(v: Any) -> bool:
        return v is None or check(v)

    return check_optional


@st.composite
def shapes(draw: st.DrawFn, depth: int, allow_optional: bool = True) -> Shape:
    choice = draw(st.integers(0, 11 if depth > 0 else 7))
    if choice < len(_LEAVES):
        shape = _LEAVES[choice](draw)
    elif choice == 6:
        shape = _literal(draw)
    elif choice == 7:
        shape = _enum(draw)
    elif choice == 8:
        item = draw(shapes(depth - 1, allow_optional=False))
        shape = Shape(
            list[item.annotation],  # type: ignore[name-defined]
            st.lists(item.values, max_size=3),
            _all_of(list, item.check, lambda v: v),
        )
    elif choice == 9:
        item = draw(shapes(depth - 1, allow_optional=False))
        shape = Shape(
            dict[str, item.annotation],  # type: ignore[name-defined]
            st.dictionaries(st.text("abc", max_size=3), item.values, max_size=3),
            _all_of(dict, item.check, lambda v: v.values()),
        )
    elif choice == 10:
        shape = draw(_dataclass_shape(depth - 1))
    else:
        shape = draw(_typeddict_shape(depth - 1))
    if draw(st.integers(0, 4)) == 0:
        shape = dataclasses.replace(
            shape, annotation=Annotated[shape.annotation, draw(st.text(max_size=5))]
        )
    if allow_optional and draw(st.integers(0, 3)) == 0:
        shape = dataclasses.replace(
            shape,
            annotation=shape.annotation | None,
            values=st.one_of(st.none(), shape.values),
            check=_or_none(shape.check),
            optional=True,
        )
    return shape


@st.composite
def _fields(draw: st.DrawFn, depth: int) -> list[tuple[str, Shape]]:
    count = draw(st.integers(1, 3))
    return [(f"f{i}", draw(shapes(depth))) for i in range(count)]


def _record(fields: list[tuple[str, Shape]]) -> st.SearchStrategy[dict[str, Any]]:
    # X | None without a default is required (and nullable), as in Python.
    return st.fixed_dictionaries({n: s.values for n, s in fields})


@st.composite
def _dataclass_shape(draw: st.DrawFn, depth: int) -> Shape:
    fields = draw(_fields(depth))
    cls = dataclasses.make_dataclass(
        _fresh("D"), [(n, s.annotation) for n, s in fields]
    )

    def check(v: Any) -> bool:
        return isinstance(v, cls) and all(s.check(getattr(v, n)) for n, s in fields)

    return Shape(cls, _record(fields), check)


@st.composite
def _typeddict_shape(draw: st.DrawFn, depth: int) -> Shape:
    fields = draw(_fields(depth))
    cls = TypedDict(_fresh("TD"), {n: s.annotation for n, s in fields})  # type: ignore[misc]

    def check(v: Any) -> bool:
        return isinstance(v, dict) and all(n in v and s.check(v[n]) for n, s in fields)

    return Shape(cls, _record(fields), check)


@st.composite
def signatures(draw: st.DrawFn) -> tuple[list[tuple[str, Shape, Any]], Any]:
    """Parameters (name, shape, default or ABSENT marker) and a value strategy."""
    params: list[tuple[str, Shape, Any]] = []
    for i in range(draw(st.integers(0, 4))):
        shape = draw(shapes(2))
        default: Any = inspect.Parameter.empty
        if draw(st.integers(0, 3)) == 0:
            default = draw(shape.values)
        params.append((f"p{i}", shape, default))
    required = {n: s.values for n, s, d in params if d is inspect.Parameter.empty}
    optional = {n: s.values for n, s, d in params if d is not inspect.Parameter.empty}
    return params, st.fixed_dictionaries(required, optional=optional)


@given(data=st.data(), signature=signatures())
def test_signature_tools_schema_binding_and_totality(
    data: st.DataObject, signature: tuple[list[tuple[str, Shape, Any]], Any]
) -> None:
    params, values = signature
    calls: list[dict[str, Any]] = []

    def body(**kwargs: Any) -> str:
        calls.append(kwargs)
        return "ok"

    body.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=s.annotation
            )
            for n, s, d in params
        ]
    )
    body.__annotations__ = {n: s.annotation for n, s, _ in params}
    definition = tool(name="typed", description="typed fuzz")(body)
    assert_meta_valid(definition.parameters)
    agent = Agent("sig")
    registry, counters = instrumented(agent)
    registry.register(definition)

    valid = data.draw(values, label="valid")
    result = call(registry, "typed", valid, agent)
    payload = assert_lossless_json(result)
    assert_observed_once(counters, result, "c1")
    assert payload == {"callId": "c1", "content": [text("ok")], "isError": False}
    bound = calls[-1]
    for name, shape, _ in params:
        if name in valid:
            assert shape.check(bound[name]), (name, bound[name])
        else:
            assert name not in bound  # Python applies the function's default

    junk = data.draw(
        st.one_of(
            any_arguments,
            st.fixed_dictionaries(
                {},
                optional={
                    n: st.one_of(s.values, json_scalars, non_json) for n, s, _ in params
                },
            ),
        ),
        label="junk",
    )
    counters.result.clear()
    counters.scoped_result.clear()
    counters.trace.clear()
    result = call(registry, "typed", junk, agent, call_id="c2")
    payload = assert_lossless_json(result)
    assert_frozen_result(result)
    assert_observed_once(counters, result, "c2")
    event("junk: " + (payload["error"]["code"] if "error" in payload else "other"))
    if not lossless(junk):
        assert result.text == ARGS_NOT_JSON
    elif result.is_error:
        assert payload["error"] == {"name": "ToolArgsError", "code": "INVALID_ARGS"}
    if lossless(junk) and isinstance(junk, dict):
        # null is a value like any other: a defaulted parameter whose schema
        # does not take null refuses it, as the schema the model saw says.
        schema_ok = META.evolve(schema=definition.parameters).is_valid(junk)
        if schema_ok and result.is_error:
            # JSON Schema's "number" takes any integer; a float parameter
            # cannot hold one beyond float range, so the tool refuses it.
            assert _beyond_float(junk), (junk, result.text)
        else:
            assert schema_ok == (not result.is_error), (junk, result.text)


def _beyond_float(value: Any) -> bool:
    if type(value) is int:
        return abs(value) >= 2**1024
    if isinstance(value, dict):
        return any(_beyond_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_beyond_float(v) for v in value)
    return False
