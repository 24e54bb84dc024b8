"""Property tests for the schema DSL (contract §1.5 (a)-(f) and more)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_nb.tools import define_tool
from dsh_nb.tools.jsonvalue import ABSENT, FrozenDict, FrozenList
from dsh_nb.tools.schema import (
    SchemaProp,
    schema_spec_to_json_schema,
    validate_args,
)
from dsh_nb.tools.schema.argcheck import own_check

TYPES = ("string", "number", "boolean", "object", "array")
# max_examples comes from the profile tests/conftest.py loads (--slow: 10,000).
PROPERTY_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
DATA_SETTINGS = PROPERTY_SETTINGS

names = st.text(min_size=1, max_size=5)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


class _Sub(dict):  # type: ignore[type-arg]
    """A dict subclass arguments might arrive as."""


python_scalars = (
    json_scalars
    | st.floats()  # NaN, infinities, -0.0
    | st.integers(min_value=10**30, max_value=10**60)
    | st.binary(max_size=4)
    | st.complex_numbers(allow_nan=True)
    | st.just(float("-0.0"))
    | st.just(object())
)
python_values = st.recursive(
    python_scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.lists(inner, max_size=3).map(FrozenList)
        | st.frozensets(st.integers() | st.text(max_size=3), max_size=3)
        | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(FrozenDict)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(_Sub)
    ),
    max_leaves=10,
)
# Values one JSON type away from another: what breaks a sloppy type check.
# Values one JSON type away from another: what breaks a sloppy type check.
# Built fresh per draw so no test can share (and mutate) a container.
NEAR_MISSES = (
    lambda: True,
    lambda: False,
    lambda: 0,
    lambda: 1.0,
    lambda: "1",
    lambda: None,
    lambda: [],
    lambda: {},
)
PY_NEAR_MISSES = (
    *NEAR_MISSES,
    lambda: float("nan"),
    lambda: -0.0,
    lambda: 10**40,
    lambda: b"",
    lambda: ("a",),
    lambda: frozenset(),
    lambda: FrozenDict(),
    lambda: FrozenList(),
    lambda: _Sub(),
)
near_misses = st.sampled_from(PY_NEAR_MISSES).map(lambda make: make())
json_near_misses = st.sampled_from(NEAR_MISSES).map(lambda make: make())
required_flags = st.sampled_from([True, False, None, 1, "true", 0])
TEXT = st.text(max_size=4)
NUMBERS = st.integers() | st.floats(allow_nan=False, allow_infinity=False)
BOOLEANS = st.booleans()
ANY_OBJECT = st.dictionaries(st.text(max_size=3), json_values, max_size=3)
ANY_LIST = st.lists(json_values, max_size=3)
# Extra keys never collide with spec names: those are at most 5 characters.
EXTRAS = st.dictionaries(st.text(min_size=6, max_size=8), json_scalars, max_size=2)


ENUMS = {
    valid: st.lists(st.text(max_size=3), min_size=int(valid), max_size=3, unique=True)
    for valid in (False, True)
}


@st.composite
def props(draw: st.DrawFn, depth: int, types: tuple[str, ...], valid: bool) -> Any:
    """A prop as a SchemaProp or a plain dict, any field present or not.

    ``valid=True`` leaves out enums no value can satisfy (on number/boolean
    props, or empty), so every generated spec has satisfying arguments.
    """
    kind = draw(st.sampled_from(types))
    fields: dict[str, Any] = {"type": kind}
    if draw(BOOLEANS):
        fields["required"] = draw(required_flags)
    if draw(BOOLEANS):
        fields["description"] = draw(TEXT)
    if draw(st.integers(0, 3)) == 0 and not (valid and kind in ("number", "boolean")):
        fields["enum"] = draw(ENUMS[valid])
    if draw(BOOLEANS):
        fields["default"] = draw(json_values)
    if depth > 0 and draw(BOOLEANS):
        if kind == "object":
            fields["properties"] = draw(specs(depth - 1, types, valid))
        if kind == "array":
            fields["items"] = draw(prop_strategy(depth - 1, types, valid))
    if draw(BOOLEANS):
        return fields
    if "enum" in fields and draw(BOOLEANS):
        fields["enum"] = tuple(fields["enum"])
    return SchemaProp(**fields)


@functools.cache
def prop_strategy(
    depth: int = 2, types: tuple[str, ...] = TYPES, valid: bool = False
) -> st.SearchStrategy[Any]:
    """Shared strategy objects: building new ones per draw is slow."""
    return props(depth, types, valid)


@functools.cache
def specs(
    depth: int = 2, types: tuple[str, ...] = TYPES, valid: bool = False
) -> st.SearchStrategy[Any]:
    return st.dictionaries(names, prop_strategy(depth, types, valid), max_size=4)


def field(prop: Any, name: str) -> Any:
    if isinstance(prop, SchemaProp):
        value = getattr(prop, name)
        return ABSENT if value is None and name != "default" else value
    return prop.get(name, ABSENT)


def is_required(prop: Any) -> bool:
    return field(prop, "required") is True


def satisfiable(prop: Any) -> bool:
    """Whether some value passes ``prop`` (enums can make it impossible)."""
    kind, enum = field(prop, "type"), field(prop, "enum")
    if kind in ("number", "boolean") and enum is not ABSENT:
        return False
    if kind == "string" and enum is not ABSENT and len(enum) == 0:
        return False
    properties = field(prop, "properties")
    if kind == "object" and properties is not ABSENT:
        return all(satisfiable(p) for p in properties.values() if is_required(p))
    return True


def valid_value(prop: Any) -> st.SearchStrategy[Any]:
    kind, enum = field(prop, "type"), field(prop, "enum")
    if kind == "string":
        if enum is ABSENT:
            return TEXT
        return st.sampled_from(list(enum)) if enum else st.nothing()
    if kind == "number":
        return NUMBERS
    if kind == "boolean":
        return BOOLEANS
    if kind == "object":
        properties = field(prop, "properties")
        return ANY_OBJECT if properties is ABSENT else valid_args(properties)
    items = field(prop, "items")
    if items is ABSENT:
        return ANY_LIST
    if not satisfiable(items):
        return st.just([])
    return st.lists(valid_value(items), max_size=3)


def valid_args(spec: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    required = {k: valid_value(p) for k, p in spec.items() if is_required(p)}
    optional = {
        k: valid_value(p)
        for k, p in spec.items()
        if not is_required(p) and satisfiable(p)
    }
    return st.tuples(st.fixed_dictionaries(required, optional=optional), EXTRAS).map(
        lambda pair: {**pair[1], **pair[0]}
    )


_ABSENT_KEY = object()


def chaotic_value(
    prop: Any, noise: st.SearchStrategy[Any], wild: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """Mostly near misses, some valid values, some arbitrary noise."""
    kind = field(prop, "type")
    if kind == "object" and field(prop, "properties") is not ABSENT:
        valid = chaotic_args(field(prop, "properties"), noise, wild)
    elif kind == "array" and field(prop, "items") is not ABSENT:
        valid = st.lists(chaotic_value(field(prop, "items"), noise, wild), max_size=3)
    else:
        valid = valid_value(prop)
    return st.integers(0, 9).flatmap(
        lambda roll: noise if roll < 4 else valid if roll < 8 else wild
    )


def chaotic_args(
    spec: dict[str, Any], noise: st.SearchStrategy[Any], wild: st.SearchStrategy[Any]
) -> Any:
    maybe = {
        k: st.integers(0, 4).flatmap(
            lambda roll, p=p: (
                st.just(_ABSENT_KEY) if roll == 0 else chaotic_value(p, noise, wild)
            )
        )
        for k, p in spec.items()
    }
    return st.fixed_dictionaries(maybe).map(
        lambda d: {k: v for k, v in d.items() if v is not _ABSENT_KEY}
    )


def walk_levels(spec: dict[str, Any], schema: dict[str, Any]) -> list[tuple[Any, Any]]:
    """Pairs (spec mapping, emitted object schema) at every object level."""
    levels = [(spec, schema)]
    for key, prop in spec.items():
        levels.extend(walk_prop(prop, schema["properties"][key]))
    return levels


def walk_prop(prop: Any, emitted: dict[str, Any]) -> list[tuple[Any, Any]]:
    kind = field(prop, "type")
    properties, items = field(prop, "properties"), field(prop, "items")
    if kind == "object" and properties is not ABSENT:
        return walk_levels(properties, emitted)
    if kind == "array" and items is not ABSENT:
        return walk_prop(items, emitted["items"])
    return []


def enum_on_containers(spec: dict[str, Any]) -> bool:
    for prop in spec.values():
        kind = field(prop, "type")
        if kind in ("object", "array") and field(prop, "enum") is not ABSENT:
            return True
        properties, items = field(prop, "properties"), field(prop, "items")
        if kind == "object" and properties is not ABSENT:
            if enum_on_containers(properties):
                return True
        if kind == "array" and items is not ABSENT:
            if enum_on_containers({"": items}):
                return True
    return False


def definable(prop: Any) -> Any:
    """``prop`` as define_tool takes it, meaning the same to validate_args.

    A ``required`` that is not True becomes False (validate_args reads it
    so; define_tool refuses one that is not a bool), and the default goes
    (never applied; define_tool refuses one that is not lossless, -0.0).
    """
    if isinstance(prop, SchemaProp):
        return dataclasses.replace(
            prop,
            required=prop.required is True,
            default=ABSENT,
            properties=None
            if prop.properties is None
            else {k: definable(p) for k, p in prop.properties.items()},
            items=None if prop.items is None else definable(prop.items),
        )
    out = dict(prop)
    out.pop("default", None)
    if "required" in out:
        out["required"] = out["required"] is True
    if "properties" in out:
        out["properties"] = {k: definable(p) for k, p in out["properties"].items()}
    if "items" in out:
        out["items"] = definable(out["items"])
    return out


def tool_check(spec: dict[str, Any]) -> Any:
    """The check define_tool builds for ``spec`` (made definable)."""
    parameters = {k: definable(p) for k, p in spec.items()}
    definition = define_tool(
        name="t", description="", parameters=parameters, execute=str
    )
    check = own_check(definition)
    assert check is not None
    return check


# -- (a) (b) and the meta-schema ------------------------------------------------


@PROPERTY_SETTINGS
@given(specs())
def test_a_required_lists_match_required_true_at_every_level(spec: Any) -> None:
    schema = schema_spec_to_json_schema(spec)
    for level_spec, level_schema in walk_levels(spec, schema):
        expected = [k for k, p in level_spec.items() if is_required(p)]
        if expected:
            assert level_schema["required"] == expected
        else:
            assert "required" not in level_schema
        for emitted in level_schema["properties"].values():
            assert "additionalProperties" not in emitted


@PROPERTY_SETTINGS
@given(specs(2, (*TYPES, "weird", "", "integer")))
def test_b_conversion_never_raises(spec: Any) -> None:
    schema = schema_spec_to_json_schema(spec)
    assert schema["type"] == "object"
    assert list(schema["properties"]) == list(spec)


@PROPERTY_SETTINGS
@given(specs())
def test_emitted_schema_is_valid_draft_2020_12(spec: Any) -> None:
    schema = schema_spec_to_json_schema(spec)
    meta = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    assert [e.message for e in meta.iter_errors(schema)] == []


# -- (c) (d) (e) (f) ------------------------------------------------------------


@PROPERTY_SETTINGS
@given(specs(), python_values)
def test_c_validation_never_raises_on_any_top_level(spec: Any, args: Any) -> None:
    out = validate_args(spec, args)
    assert out == tool_check(spec)(args)
    assert all(isinstance(v, str) for v in out)


@DATA_SETTINGS
@given(st.data())
def test_c_validation_never_raises_on_chaotic_nested_values(
    data: st.DataObject,
) -> None:
    spec = data.draw(specs())
    args = data.draw(chaotic_args(spec, near_misses, python_values))
    out = validate_args(spec, args)
    assert out == tool_check(spec)(args)


@DATA_SETTINGS
@given(st.data())
def test_d_satisfying_args_validate_clean(data: st.DataObject) -> None:
    spec = data.draw(specs(2, TYPES, True))
    args = data.draw(valid_args(spec))
    assert validate_args(spec, args) == []
    assert tool_check(spec)(args) == []


@DATA_SETTINGS
@given(st.data())
def test_e_dropping_a_required_key_is_reported(data: st.DataObject) -> None:
    spec = data.draw(specs(2, TYPES, True))
    extra = data.draw(prop_strategy(2, TYPES, True))
    if isinstance(extra, SchemaProp):
        extra = dataclasses.replace(extra, required=True)
    else:
        extra = {**extra, "required": True}
    items = list(spec.items())
    name = data.draw(names.filter(lambda k: k not in spec))
    items.insert(data.draw(st.integers(0, len(items))), (name, extra))
    spec = dict(items)
    args = data.draw(valid_args(spec))
    key = data.draw(st.sampled_from([k for k, p in spec.items() if is_required(p)]))
    del args[key]
    for out in (validate_args(spec, args), tool_check(spec)(args)):
        assert f'missing required property "{key}"' in out


@PROPERTY_SETTINGS
@given(
    specs() | st.just({}),
    python_values.filter(lambda v: not isinstance(v, dict)),
)
def test_f_non_object_top_level_always_violates(spec: Any, args: Any) -> None:
    assert validate_args(spec, args) == ['"arguments" must be an object']
    assert tool_check(spec)(args) == ['"arguments" must be an object']


# -- agreement with the JSON Schema the model is shown --------------------------


@DATA_SETTINGS
@given(st.data())
def test_verdict_agrees_with_jsonschema_on_json_args(data: st.DataObject) -> None:
    spec = data.draw(specs().filter(lambda s: not enum_on_containers(s)))
    args = data.draw(chaotic_args(spec, json_near_misses, json_values))
    # Whole spec, then one property at a time so one violation cannot mask another.
    cases = [(spec, args)] + [
        ({k: p}, {k: args[k]} if k in args else {}) for k, p in spec.items()
    ]
    for case_spec, case_args in cases:
        schema = schema_spec_to_json_schema(case_spec)
        verdict = jsonschema.Draft202012Validator(schema).is_valid(case_args)
        assert (validate_args(case_spec, case_args) == []) == verdict
        assert (tool_check(case_spec)(case_args) == []) == verdict


def test_deep_nesting_is_fine() -> None:
    deep: Any = []
    for _ in range(50_000):
        deep = [deep]
    spec = {
        "a": {"type": "array"},
        "m": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
        "o": {"type": "object"},
    }
    args = {"a": deep, "m": deep, "o": {"x": deep}}
    expected = ['"m[0][0]" must be a number']
    assert validate_args(spec, args) == expected
    assert tool_check(spec)(args) == expected
