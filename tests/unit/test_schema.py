"""The schema DSL: conversion (§1.2), validation (§1.3-§1.5), definition checks."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from dsh_nb.tools import define_tool
from dsh_nb.tools.errors import ToolArgsError, ToolDefinitionError
from dsh_nb.tools.jsonvalue import ABSENT, FrozenDict, FrozenList, snapshot_json
from dsh_nb.tools.schema import (
    SchemaProp,
    args_validator,
    check_spec,
    compile_json_schema_validator,
    schema_spec_to_json_schema,
    validate_args,
)
from dsh_nb.tools.schema.argcheck import own_check

Check = Callable[[Any, Any], list[str]]


def _tool_check(spec: Any, args: Any) -> list[str]:
    """What the check define_tool builds for ``spec`` says of ``args``."""
    definition = define_tool(name="t", description="", parameters=spec, execute=str)
    check = own_check(definition)
    assert check is not None
    return check(args)


@pytest.fixture(params=[validate_args, _tool_check], ids=["validate_args", "tool"])
def check(request: pytest.FixtureRequest) -> Check:
    """Every rule holds for validate_args and for a tool's check of its args."""
    fn: Check = request.param
    return fn


PATH = {"path": {"type": "string", "required": True}}
NESTED = {
    "config": {
        "type": "object",
        "properties": {
            "host": {"type": "string", "required": True},
            "port": {"type": "number"},
        },
    },
    "bag": {"type": "object"},
}
SERVERS = {
    "servers": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"host": {"type": "string", "required": True}},
        },
    }
}


# -- SchemaProp -----------------------------------------------------------------


def test_schema_prop_stores_enum_list_as_tuple() -> None:
    prop = SchemaProp(type="string", enum=["a", "b"])  # type: ignore[arg-type]
    assert prop.enum == ("a", "b")


def test_schema_prop_is_frozen_and_keyword_only() -> None:
    prop = SchemaProp(type="string")
    with pytest.raises(AttributeError):
        prop.type = "number"  # type: ignore[misc]
    with pytest.raises(TypeError):
        SchemaProp("string")  # type: ignore[misc]
    assert prop.default is ABSENT
    assert prop.required is False


# -- conversion §1.2 ------------------------------------------------------------


def test_empty_spec_converts_to_exactly_object_with_empty_properties() -> None:
    assert schema_spec_to_json_schema({}) == {"type": "object", "properties": {}}
    assert list(schema_spec_to_json_schema({})) == ["type", "properties"]


def test_top_level_required_in_spec_order_and_keys_in_order() -> None:
    spec = {
        "b": {"type": "string", "required": True},
        "a": {"type": "number"},
        "c": SchemaProp(type="boolean", required=True),
    }
    out = schema_spec_to_json_schema(spec)
    assert out == {
        "type": "object",
        "properties": {
            "b": {"type": "string"},
            "a": {"type": "number"},
            "c": {"type": "boolean"},
        },
        "required": ["b", "c"],
    }
    assert list(out["properties"]) == ["b", "a", "c"]
    assert "additionalProperties" not in out


@pytest.mark.parametrize("flag", [False, 1, "true", None, "yes"])
def test_only_exactly_true_marks_required(flag: object) -> None:
    out = schema_spec_to_json_schema({"x": {"type": "string", "required": flag}})
    assert "required" not in out
    assert validate_args({"x": {"type": "string", "required": flag}}, {}) == []


def test_prop_key_order_and_all_fields() -> None:
    prop = SchemaProp(
        type="string",
        items=SchemaProp(type="string"),
        default="x",
        enum=("x", "y"),
        description="d",
        required=True,
    )
    out = schema_spec_to_json_schema({"p": prop})["properties"]["p"]
    assert list(out.items()) == [
        ("type", "string"),
        ("description", "d"),
        ("enum", ["x", "y"]),
        ("default", "x"),
    ]


def test_empty_description_is_dropped() -> None:
    out = schema_spec_to_json_schema({"p": {"type": "string", "description": ""}})
    assert out["properties"]["p"] == {"type": "string"}


def test_empty_enum_is_emitted() -> None:
    out = schema_spec_to_json_schema({"p": {"type": "string", "enum": []}})
    assert out["properties"]["p"] == {"type": "string", "enum": []}


@pytest.mark.parametrize("default", [None, 0, False, "", [], {}, 0.0])
def test_falsy_defaults_are_emitted(default: object) -> None:
    out = schema_spec_to_json_schema({"p": SchemaProp(type="string", default=default)})
    assert out["properties"]["p"] == {"type": "string", "default": default}
    assert type(out["properties"]["p"]["default"]) is type(default)


def test_default_is_copied_not_aliased() -> None:
    default = {"a": [1]}
    out = schema_spec_to_json_schema({"p": {"type": "object", "default": default}})
    out["properties"]["p"]["default"]["a"].append(2)
    assert default == {"a": [1]}


def test_nested_object_required_only_when_non_empty() -> None:
    out = schema_spec_to_json_schema(NESTED)
    assert out["properties"]["config"] == {
        "type": "object",
        "properties": {"host": {"type": "string"}, "port": {"type": "number"}},
        "required": ["host"],
    }
    out = schema_spec_to_json_schema(
        {"o": {"type": "object", "properties": {"x": {"type": "string"}}}}
    )
    assert out["properties"]["o"] == {
        "type": "object",
        "properties": {"x": {"type": "string"}},
    }


def test_empty_properties_mapping_is_emitted() -> None:
    out = schema_spec_to_json_schema({"o": {"type": "object", "properties": {}}})
    assert out["properties"]["o"] == {"type": "object", "properties": {}}


def test_array_of_objects_nests_required_in_items() -> None:
    out = schema_spec_to_json_schema(SERVERS)
    assert out["properties"]["servers"] == {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"host": {"type": "string"}},
            "required": ["host"],
        },
    }


def test_items_prop_required_flag_is_not_emitted() -> None:
    spec = {"a": {"type": "array", "items": {"type": "string", "required": True}}}
    out = schema_spec_to_json_schema(spec)
    assert out["properties"]["a"] == {"type": "array", "items": {"type": "string"}}


def test_properties_on_non_object_and_items_on_non_array_are_ignored() -> None:
    spec = {
        "s": {"type": "string", "properties": {"x": {"type": "string"}}},
        "o": {"type": "object", "items": {"type": "string"}},
    }
    out = schema_spec_to_json_schema(spec)
    assert out["properties"] == {"s": {"type": "string"}, "o": {"type": "object"}}


def test_enum_on_object_and_array_is_emitted() -> None:
    spec = {"o": {"type": "object", "enum": ["a"]}, "l": {"type": "array", "enum": []}}
    out = schema_spec_to_json_schema(spec)
    assert out["properties"] == {
        "o": {"type": "object", "enum": ["a"]},
        "l": {"type": "array", "enum": []},
    }


def test_unknown_type_passes_through_conversion() -> None:
    out = schema_spec_to_json_schema({"w": {"type": "weird", "enum": ["a"]}})
    assert out["properties"]["w"] == {"type": "weird", "enum": ["a"]}


def test_no_additional_properties_at_any_level() -> None:
    text = repr(schema_spec_to_json_schema({**NESTED, **SERVERS}))
    assert "additionalProperties" not in text


def test_conversion_returns_new_mappings() -> None:
    props = {"x": {"type": "string"}}
    spec = {"o": {"type": "object", "properties": props}}
    out = schema_spec_to_json_schema(spec)
    out["properties"]["o"]["properties"]["x"]["type"] = "number"
    assert props == {"x": {"type": "string"}}


# -- validation §1.3 / §1.5 ----------------------------------------------------


@pytest.mark.parametrize("args", [{}, {"other": 1}])
def test_missing_required(check: Check, args: dict[str, Any]) -> None:
    assert check(PATH, args) == ['missing required property "path"']


def test_extra_keys_are_allowed(check: Check) -> None:
    assert check(PATH, {"path": "/tmp", "extra": 1}) == []


def test_absent_optional_with_default_is_fine_and_nothing_is_filled(
    check: Check,
) -> None:
    args: dict[str, Any] = {}
    assert check({"n": {"type": "number", "default": 3}}, args) == []
    assert args == {}


@pytest.mark.parametrize("args", [None, "nope", [], 5, 1.5, True, ("a",), FrozenList()])
def test_non_object_top_level_is_one_violation(check: Check, args: object) -> None:
    assert check({**PATH, **NESTED}, args) == ['"arguments" must be an object']
    assert check({}, args) == ['"arguments" must be an object']


def test_nested_paths(check: Check) -> None:
    assert check(NESTED, {"config": {"port": 9}, "bag": 5}) == [
        'missing required property "config.host"',
        '"bag" must be an object',
    ]


def test_arrays(check: Check) -> None:
    tags = {"tags": {"type": "array", "items": {"type": "string"}}}
    assert check(tags, {"tags": ["a", 2]}) == ['"tags[1]" must be a string']
    assert check(tags, {"tags": "nope"}) == ['"tags" must be an array']
    assert check(tags, {"tags": [1, "b", None]}) == [
        '"tags[0]" must be a string',
        '"tags[2]" must be a string',
    ]


def test_items_less_array_and_properties_less_object_accept_anything(
    check: Check,
) -> None:
    spec = {"a": {"type": "array"}, "o": {"type": "object"}}
    assert check(spec, {"a": [1, {}, "x"], "o": {"anything": True}}) == []


def test_array_of_objects_paths(check: Check) -> None:
    assert check(SERVERS, {"servers": [{"host": "a"}, {}]}) == [
        'missing required property "servers[1].host"'
    ]
    assert check(SERVERS, {"servers": [{"host": 1}, "x"]}) == [
        '"servers[0].host" must be a string',
        '"servers[1]" must be an object',
    ]


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("string", "must be a string"),
        ("number", "must be a number"),
        ("boolean", "must be a boolean"),
        ("object", "must be an object"),
        ("array", "must be an array"),
    ],
)
def test_null_fails_even_optional_props(check: Check, kind: str, text: str) -> None:
    assert check({"v": {"type": kind}}, {"v": None}) == [f'"v" {text}']


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("string", ["", "x", "5"], [5, True, None, b"x", ["x"]]),
        (
            "number",
            [0, -1, 1.5, 10**100, float("nan"), float("inf"), -0.0],
            [True, False, "5", None, [1]],
        ),
        ("boolean", [True, False], [0, 1, "true", None, 1.0]),
        ("object", [{}, FrozenDict(), {"a": 1}], [[], (), None, "x", {1, 2}]),
        ("array", [[], FrozenList([1]), [None]], [(), {}, "ab", {1}, None]),
    ],
)
def test_type_table_without_coercion(
    check: Check, kind: str, good: list[object], bad: list[object]
) -> None:
    spec = {"v": {"type": kind}}
    for value in good:
        assert check(spec, {"v": value}) == [], value
    for value in bad:
        assert len(check(spec, {"v": value})) == 1, value


def test_bool_is_not_a_number_and_one_is_not_true(check: Check) -> None:
    spec = {"n": {"type": "number"}, "b": {"type": "boolean"}}
    assert check(spec, {"n": True, "b": 1}) == [
        '"n" must be a number',
        '"b" must be a boolean',
    ]


def test_tuple_is_not_an_array(check: Check) -> None:
    assert check({"a": {"type": "array"}}, {"a": ("x",)}) == ['"a" must be an array']


def test_dict_subclasses_are_objects(check: Check) -> None:
    class Sub(dict[str, Any]):
        pass

    assert check(NESTED, FrozenDict({"config": Sub(host="h")})) == []
    assert check(NESTED, snapshot_json({"config": {"host": "h"}})) == []


def test_enum_membership_and_message(check: Check) -> None:
    spec = {"color": {"type": "string", "enum": ["red", "green"]}}
    assert check(spec, {"color": "red"}) == []
    assert check(spec, {"color": "blue"}) == ['"color" must be one of ["red","green"]']


def test_enum_message_is_compact_and_keeps_non_ascii(check: Check) -> None:
    spec = {"c": {"type": "string", "enum": ["é", 'a"b']}}
    assert check(spec, {"c": "x"}) == ['"c" must be one of ["é","a\\"b"]']


def test_type_failure_suppresses_enum_check(check: Check) -> None:
    spec = {"c": {"type": "string", "enum": ["a"]}}
    assert check(spec, {"c": 1}) == ['"c" must be a string']


def test_numbers_and_booleans_never_match_string_enums(check: Check) -> None:
    spec = {"n": {"type": "number", "enum": ["1", "2"]}}
    assert check(spec, {"n": 1}) == ['"n" must be one of ["1","2"]']
    spec = {"b": {"type": "boolean", "enum": ["true"]}}
    assert check(spec, {"b": True}) == ['"b" must be one of ["true"]']


def test_empty_enum_rejects_everything(check: Check) -> None:
    spec = {"s": {"type": "string", "enum": []}}
    assert check(spec, {"s": ""}) == ['"s" must be one of []']
    assert check(spec, {}) == []


def test_enum_on_object_or_array_is_not_checked(check: Check) -> None:
    spec = {"o": {"type": "object", "enum": []}, "a": {"type": "array", "enum": ["x"]}}
    assert check(spec, {"o": {"k": 1}, "a": [1]}) == []


def test_non_string_enum_members_use_strict_equality() -> None:
    # define_tool refuses such enums; validate_args still judges them.
    check = validate_args
    spec = {"n": {"type": "number", "enum": [1, 2.5]}}
    assert check(spec, {"n": 1.0}) == []
    assert check(spec, {"n": 2.5}) == []
    assert check(spec, {"n": 3}) == ['"n" must be one of [1,2.5]']
    spec = {"b": {"type": "boolean", "enum": [1]}}
    assert check(spec, {"b": True}) == ['"b" must be one of [1]']
    nan = float("nan")
    assert check({"n": SchemaProp(type="number", enum=(nan,))}, {"n": nan}) != []  # type: ignore[arg-type]


def test_str_subclass_is_a_string_and_matches_enum(check: Check) -> None:
    class S(str):
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("must not be called")

        __hash__ = str.__hash__

    spec = {"c": {"type": "string", "enum": ["a"]}}
    assert check(spec, {"c": S("a")}) == []
    assert check(spec, {"c": S("b")}) == ['"c" must be one of ["a"]']


def test_all_violations_in_declaration_order(check: Check) -> None:
    spec = {
        "a": {"type": "string", "required": True},
        "b": {"type": "number"},
        "c": {
            "type": "object",
            "properties": {
                "x": {"type": "boolean", "required": True},
                "y": {"type": "array", "items": {"type": "number"}},
            },
        },
        "d": {"type": "string", "enum": ["k"]},
    }
    args = {"d": "z", "c": {"y": [1, "2", 3, None]}, "b": "1"}
    assert check(spec, args) == [
        'missing required property "a"',
        '"b" must be a number',
        'missing required property "c.x"',
        '"c.y[1]" must be a number',
        '"c.y[3]" must be a number',
        '"d" must be one of ["k"]',
    ]


def test_paths_are_plain_concatenation(check: Check) -> None:
    spec = {
        'a.b["c': {
            "type": "object",
            "properties": {"x[0]": {"type": "string", "required": True}},
        }
    }
    assert check(spec, {'a.b["c': {}}) == ['missing required property "a.b["c.x[0]"']


def test_args_are_never_mutated(check: Check) -> None:
    args = {"config": {"port": 1}, "bag": {}}
    before = repr(args)
    check(NESTED, args)
    assert repr(args) == before


def test_schema_prop_and_plain_dicts_mix(check: Check) -> None:
    spec = {
        "o": SchemaProp(
            type="object",
            properties={"x": {"type": "number", "required": True}},  # type: ignore[dict-item]
        ),
        "l": {"type": "array", "items": SchemaProp(type="string")},
    }
    assert check(spec, {"o": {}, "l": [1]}) == [
        'missing required property "o.x"',
        '"l[0]" must be a string',
    ]


def test_unknown_type_raises_unreachable() -> None:
    check = validate_args  # define_tool refuses an unknown type
    spec = {"w": {"type": "weird"}}
    with pytest.raises(Exception, match='unreachable variant in validateArgs: "weird"'):
        check(spec, {"w": 1})


def test_unknown_type_not_reached_does_not_raise() -> None:
    check = validate_args  # define_tool refuses an unknown type
    spec = {
        "w": {"type": "weird"},
        "o": {"type": "object", "properties": {"z": {"type": "weird"}}},
    }
    assert check(spec, {"o": 5}) == ['"o" must be an object']


def test_unknown_nested_item_type_raises() -> None:
    check = validate_args  # define_tool refuses an unknown type
    spec = {"a": {"type": "array", "items": {"type": "weird"}}}
    assert check(spec, {"a": []}) == []
    with pytest.raises(Exception, match="unreachable variant in validateArgs"):
        check(spec, {"a": [1]})


def test_a_tools_check_is_detached_from_later_spec_edits() -> None:
    inner: dict[str, Any] = {"x": {"type": "string", "required": True}}
    spec: dict[str, Any] = {
        "a": {"type": "number", "required": True},
        "o": {"type": "object", "properties": inner},
        "l": {"type": "array", "items": {"type": "string", "enum": ["k"]}},
    }
    definition = define_tool(name="t", description="", parameters=spec, execute=str)
    check = own_check(definition)
    assert check is not None
    spec["b"] = {"type": "string", "required": True}
    spec["a"]["type"] = "string"
    inner["x"]["type"] = "number"
    spec["l"]["items"]["enum"].append("z")
    args = {"a": 1, "o": {"x": "s"}, "l": ["k", "z"]}
    assert check(args) == ['"l[1]" must be one of ["k"]']
    assert validate_args(spec, args) == [
        '"a" must be a string',
        '"o.x" must be a number',
        'missing required property "b"',
    ]


def test_args_validator_reads_the_spec_once() -> None:
    enum = ["a"]
    props: dict[str, Any] = {"x": {"type": "number", "required": True}}
    spec: dict[str, Any] = {
        "e": {"type": "string", "enum": enum},
        "o": {"type": "object", "properties": props},
    }
    validator = args_validator(spec)
    enum.append("b")
    props["y"] = {"type": "string", "required": True}
    spec["z"] = {"type": "string", "required": True}
    args = {"e": "b", "o": {"x": "1"}}
    assert validator(args) == [
        '"e" must be one of ["a"]',
        '"o.x" must be a number',
    ]
    assert validate_args(spec, args) == [
        '"o.x" must be a number',
        'missing required property "o.y"',
        'missing required property "z"',
    ]


def test_a_tools_check_returns_a_fresh_list_each_call() -> None:
    spec = {"a": {"type": "number"}}
    definition = define_tool(name="t", description="", parameters=spec, execute=str)
    check = own_check(definition)
    assert check is not None
    for args in ({}, {"a": "1"}, None):
        first = check(args)
        first.append("x")
        assert check(args) == first[:-1]
        assert check(args) is not check(args)


# -- ToolArgsError §1.4 ---------------------------------------------------------


def test_tool_args_error_shape() -> None:
    violations = validate_args(
        {"a": {"type": "string", "required": True}, "b": {"type": "number"}},
        {"b": "x"},
    )
    exc = ToolArgsError(violations)
    assert exc.name == "ToolArgsError"
    assert exc.code == "INVALID_ARGS"
    assert exc.violations == ('missing required property "a"', '"b" must be a number')
    assert str(exc) == (
        'invalid arguments: missing required property "a"; "b" must be a number'
    )


# -- check_spec -----------------------------------------------------------------


def _definition_error(spec: object) -> str:
    with pytest.raises(ToolDefinitionError) as info:
        check_spec(spec, tool_name="add")
    assert info.value.code == "INVALID_DEFINITION"
    return str(info.value)


def test_check_spec_normalises_dicts_to_schema_props() -> None:
    spec = {
        "a": {"type": "number", "required": True, "description": "first"},
        "o": {
            "type": "object",
            "properties": {"x": {"type": "string", "enum": ["p", "q"]}},
        },
        "l": {"type": "array", "items": {"type": "number"}, "default": [1]},
    }
    out = check_spec(spec, tool_name="add")
    assert out == {
        "a": SchemaProp(type="number", required=True, description="first"),
        "o": SchemaProp(
            type="object", properties={"x": SchemaProp(type="string", enum=("p", "q"))}
        ),
        "l": SchemaProp(type="array", items=SchemaProp(type="number"), default=[1]),
    }
    assert schema_spec_to_json_schema(out) == schema_spec_to_json_schema(spec)


def test_check_spec_accepts_schema_props_and_empty_spec() -> None:
    prop = SchemaProp(type="string", enum=("a",), default=None)
    assert check_spec({"p": prop}, tool_name="t") == {"p": prop}
    assert check_spec({}, tool_name="t") == {}


def test_check_spec_unknown_type_did_you_mean() -> None:
    assert _definition_error({"a": {"type": "numbr"}}) == (
        'defineTool(add): property "a" has unknown type "numbr"; did you mean "number"?'
    )


def test_check_spec_unknown_type_without_close_match_lists_types() -> None:
    message = _definition_error({"a": SchemaProp(type="xyzzy")})
    assert 'property "a" has unknown type "xyzzy"' in message
    assert '"string", "number", "boolean", "object", "array"' in message


def test_check_spec_unknown_key_did_you_mean() -> None:
    message = _definition_error({"a": {"type": "string", "reqired": True}})
    assert message == (
        'defineTool(add): property "a" has unknown key "reqired"; '
        'did you mean "required"?'
    )


def test_check_spec_nested_path_in_message() -> None:
    spec = {
        "o": {
            "type": "object",
            "properties": {"l": {"type": "array", "items": {"type": "strng"}}},
        }
    }
    message = _definition_error(spec)
    assert (
        'property "o.l[]" has unknown type "strng"; did you mean "string"?' in message
    )


@pytest.mark.parametrize(
    ("prop", "fragment"),
    [
        ({}, 'has no "type"'),
        ({"type": 5}, "has type 5"),
        ({"type": "string", "required": "yes"}, "required='yes'; use True or False"),
        ({"type": "string", "required": 1}, "required=1"),
        ({"type": "string", "description": 3}, "description=3; use a string"),
        ({"type": "string", "enum": "ab"}, "enum='ab'; use a list of strings"),
        ({"type": "string", "enum": [1]}, "enum=[1]"),
        ({"type": "string", "default": (1,)}, "not lossless JSON"),
        ({"type": "number", "default": float("nan")}, "not lossless JSON"),
        ({"type": "object", "properties": [1]}, "must be a mapping"),
        ({"type": "string", "properties": {}}, 'properties need type "object"'),
        ({"type": "object", "items": {"type": "string"}}, 'items need type "array"'),
        ({"type": "array", "items": 5}, "must be a SchemaProp or a dict"),
        (5, "must be a SchemaProp or a dict"),
    ],
)
def test_check_spec_rejects(prop: object, fragment: str) -> None:
    message = _definition_error({"p": prop})
    assert message.startswith("defineTool(add): ")
    assert fragment in message


def test_check_spec_rejects_non_mapping_and_non_str_names() -> None:
    assert "parameters must be a mapping" in _definition_error([("a", {})])
    assert "property name 1 is not a string" in _definition_error({1: {}})


def test_check_spec_copies_defaults() -> None:
    default = {"a": [1]}
    out = check_spec({"p": {"type": "object", "default": default}}, tool_name="t")
    default["a"].append(2)
    assert out["p"].default == {"a": [1]}


# -- raw JSON Schema ------------------------------------------------------------

RAW = {
    "type": "object",
    "properties": {
        "n": {"type": "number"},
        "name": {"type": "string", "minLength": 2},
        "mode": {"enum": ["a", "b"]},
        "cfg": {
            "type": "object",
            "properties": {"host": {"type": "string"}, "port": {"type": "integer"}},
            "required": ["host"],
        },
        "tags": {"type": "array", "items": {"type": ["string", "null"]}},
    },
    "required": ["n", "name"],
    "additionalProperties": False,
}


def test_raw_validator_valid_args() -> None:
    validate = compile_json_schema_validator(RAW)
    assert validate({"n": 1, "name": "ab", "tags": ["x", None]}) == []
    assert validate(FrozenDict({"n": 1.5, "name": "ab"})) == []


@pytest.mark.parametrize("args", [None, [], "x", 1, ("a",)])
def test_raw_validator_non_object(args: object) -> None:
    assert compile_json_schema_validator(RAW)(args) == ['"arguments" must be an object']


def test_raw_validator_maps_errors_in_declaration_order() -> None:
    validate = compile_json_schema_validator(RAW)
    args = {
        "tags": [1],
        "cfg": {"port": 1.5},
        "mode": "c",
        "name": "x",
        "zzz": 1,
    }
    assert validate(args) == [
        "\"arguments\" Additional properties are not allowed ('zzz' was unexpected)",
        'missing required property "n"',
        "\"name\" 'x' is too short",
        '"mode" must be one of ["a","b"]',
        'missing required property "cfg.host"',
        '"cfg.port" must be an integer',
        '"tags[0]" must be a string or null',
    ]


def test_raw_validator_type_names() -> None:
    validate = compile_json_schema_validator(
        {
            "type": "object",
            "properties": {
                k: {"type": k}
                for k in ("string", "number", "integer", "boolean", "object", "array")
            }
            | {"z": {"type": "null"}},
        }
    )
    args = {
        "string": 1,
        "number": True,
        "integer": 1.5,
        "boolean": 0,
        "object": [],
        "array": (),
        "z": 0,
    }
    assert validate(args) == [
        '"string" must be a string',
        '"number" must be a number',
        '"integer" must be an integer',
        '"boolean" must be a boolean',
        '"object" must be an object',
        '"array" must be an array',
        '"z" must be null',
    ]


def test_raw_validator_honours_schema_draft() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
    }
    assert compile_json_schema_validator(draft4)({"n": 1}) == []
    assert compile_json_schema_validator(draft4)({"n": 0}) != []


def test_raw_validator_is_total_over_odd_values() -> None:
    validate = compile_json_schema_validator(
        {"type": "object", "patternProperties": {"^a": {"type": "string"}}}
    )
    assert validate({"ab": "x"}) == []
    out = validate({1: "x", "ab": 2})
    assert isinstance(out, list)
    assert out


@pytest.mark.parametrize(
    ("schema", "fragment"),
    [
        ({"type": "object", "properties": {"a": {"type": "strng"}}}, "not a valid"),
        ({"type": "object", "required": "a"}, "not a valid"),
        ({"$schema": "https://example.com/nope", "type": "object"}, "unknown"),
        ([1], "must be a JSON Schema object"),
    ],
)
def test_raw_validator_rejects_bad_schema(schema: Any, fragment: str) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        compile_json_schema_validator(schema, tool_name="paste")
    assert str(info.value).startswith("defineTool(paste): ")
    assert fragment in str(info.value)


def test_raw_validator_is_detached_from_the_schema() -> None:
    schema: dict[str, Any] = {"type": "object", "required": ["a"]}
    validate = compile_json_schema_validator(schema)
    schema["required"].append("b")
    assert validate({"a": 1}) == []


def test_importing_schema_does_not_import_jsonschema() -> None:
    code = (
        "import sys, dsh_nb.tools.schema.spec, dsh_nb.tools.signature.plan; "
        "assert 'jsonschema' not in sys.modules, 'jsonschema was imported'"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
