"""Contract §6: the structured-output schema subset."""

from __future__ import annotations

import collections
import math
import types
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_nb.tools.errors import HarnessError, OutputSchemaError
from dsh_nb.tools.jsonvalue import FrozenDict, FrozenList, snapshot_json
from dsh_nb.tools.schema.structured import (
    assert_supported_output_schema,
    validate_structured_value,
)

ONE_OF = "must be one of object/array/string/number/integer/boolean/null"
UNSUPPORTED = (
    "is not a supported keyword (subset: type/properties/required/"
    "additionalProperties/items/enum/const + annotations)"
)
ROOT_NOT_OBJECT = 'schema.type must be "object" (structured output is object-rooted)'


def violations(schema: object) -> list[str]:
    try:
        assert_supported_output_schema(schema)
    except OutputSchemaError as exc:
        return list(exc.violations)
    return []


def obj(**props: Any) -> dict[str, Any]:
    """An object-rooted schema whose properties are ``props``."""
    return {"type": "object", "properties": props}


# --- assert_supported_output_schema: the error itself -------------------------


def test_valid_schema_returns_none() -> None:
    schema = {
        "type": "object",
        "title": "Finding",
        "description": "one review finding",
        "properties": {
            "file": {"type": "string", "description": "path"},
            "line": {"type": "integer", "default": 1, "examples": [1, 2]},
            "score": {"type": "number"},
            "severity": {"type": "string", "enum": ["low", "high"]},
            "kind": {"type": "string", "const": "bug"},
            "fixed": {"type": "boolean"},
            "note": {"type": "null", "const": None},
            "tags": {"type": "array", "items": {"type": "string"}},
            "any": {"type": "array"},
            "meta": {"type": "object"},
        },
        "required": ["file", "line"],
        "additionalProperties": False,
    }
    assert assert_supported_output_schema(schema) is None


def test_error_lists_every_violation_in_walk_order() -> None:
    schema = {
        "type": "object",
        "pattern": "x",
        "properties": {"a": {"type": "weird"}, "b": {"type": "string", "minimum": 1}},
    }
    with pytest.raises(OutputSchemaError) as info:
        assert_supported_output_schema(schema)
    err = info.value
    assert isinstance(err, HarnessError)
    assert err.name == "OutputSchemaError"
    assert err.code == "UNSUPPORTED_SCHEMA"
    assert err.violations == (
        f"schema.pattern {UNSUPPORTED}",
        f"schema.properties.a.type {ONE_OF}",
        f"schema.properties.b.minimum {UNSUPPORTED}",
    )
    assert str(err) == "unsupported output schema: " + "; ".join(err.violations)


# --- rule 1: plain schema objects ---------------------------------------------


class DictSub(dict):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize(
    "node",
    [
        None,
        [],
        ["type", "object"],
        "object",
        1,
        True,
        ("type", "object"),
        types.MappingProxyType({"type": "object"}),
        collections.OrderedDict(type="object"),
        collections.defaultdict(int, type="object"),
        DictSub(type="object"),
        {"type": "object", 1: "x"},
        object(),
    ],
)
def test_root_that_is_not_a_plain_object(node: object) -> None:
    # The object-root violation is only added when nothing else is wrong.
    assert violations(node) == ["schema must be a schema object"]


def test_frozen_dict_is_a_schema_object() -> None:
    schema = snapshot_json(obj(a={"type": "array", "items": {"type": "string"}}))
    assert isinstance(schema, FrozenDict)
    assert violations(schema) == []


def test_child_that_is_not_a_plain_object() -> None:
    schema = {
        "type": "object",
        "properties": {"a": 1, "b": [], "c": DictSub(type="string")},
    }
    assert violations(schema) == [
        "schema.properties.a must be a schema object",
        "schema.properties.b must be a schema object",
        "schema.properties.c must be a schema object",
    ]
    array = obj(l={"type": "array", "items": None})
    assert violations(array) == ["schema.properties.l.items must be a schema object"]


# --- rule 2: cycles versus shared subschemas ----------------------------------


def test_self_reference_is_circular() -> None:
    node: dict[str, Any] = {"type": "array"}
    node["items"] = node
    root = obj(l=node)
    assert violations(root) == ["schema.properties.l.items is circular"]


def test_root_reachable_from_itself_is_circular() -> None:
    root: dict[str, Any] = {"type": "object", "properties": {}}
    root["properties"]["again"] = root
    assert violations(root) == ["schema.properties.again is circular"]


def test_shared_subschema_in_sibling_positions_is_accepted() -> None:
    shared = {"type": "object", "properties": {"x": {"type": "string"}}}
    listed = {"type": "array", "items": shared}
    schema = obj(a=shared, b=shared, c=listed, d=listed)
    assert violations(schema) == []


def test_shared_invalid_subschema_reports_each_position() -> None:
    bad = {"type": "weird"}
    assert violations(obj(a=bad, b=bad)) == [
        f"schema.properties.a.type {ONE_OF}",
        f"schema.properties.b.type {ONE_OF}",
    ]


# --- rule 3: keywords and annotations -----------------------------------------


@pytest.mark.parametrize(
    "keyword",
    ["oneOf", "anyOf", "allOf", "not", "pattern", "minimum", "maxLength", "$ref"],
)
def test_unsupported_keyword(keyword: str) -> None:
    schema = obj(a={"type": "string", keyword: 1})
    assert violations(schema) == [f"schema.properties.a.{keyword} {UNSUPPORTED}"]


def test_unsupported_keywords_follow_key_order() -> None:
    schema = {"zeta": 1, "type": "object", "alpha": 2}
    assert violations(schema) == [
        f"schema.zeta {UNSUPPORTED}",
        f"schema.alpha {UNSUPPORTED}",
    ]


cyclic: list[Any] = []
cyclic.append(cyclic)


@pytest.mark.parametrize(
    "value",
    [
        math.nan,
        math.inf,
        -math.inf,
        -0.0,
        {1, 2},
        (1, 2),
        b"x",
        object(),
        {1: "a"},
        [1, math.nan],
        {"a": (1,)},
        cyclic,
        DictSub(a=1),
        collections.OrderedDict(a=1),
    ],
)
@pytest.mark.parametrize("key", ["default", "examples"])
def test_annotation_that_is_not_json_data(key: str, value: object) -> None:
    schema = {"type": "object", key: value}
    assert violations(schema) == [f"schema.{key} annotation must be JSON data"]


@pytest.mark.parametrize(
    "value",
    [None, 0, -1, 1.5, 10**30, True, "x", [], {}, [1, {"a": [None]}], FrozenList([1])],
)
def test_annotation_json_data_is_accepted(value: object) -> None:
    assert violations({"type": "object", "default": value, "examples": value}) == []


@pytest.mark.parametrize("key", ["description", "title"])
def test_description_and_title_must_be_strings(key: str) -> None:
    assert violations({"type": "object", key: 5}) == [f"schema.{key} must be a string"]
    assert violations({"type": "object", key: None}) == [
        f"schema.{key} must be a string"
    ]
    # Not JSON data and not a string: both, annotation first (key loop first).
    assert violations({"type": "object", key: math.nan}) == [
        f"schema.{key} annotation must be JSON data",
        f"schema.{key} must be a string",
    ]


# --- rule 5: type --------------------------------------------------------------


@pytest.mark.parametrize("type_", ["weird", "Object", "", 1, None, True, ("object",)])
def test_type_outside_the_seven(type_: object) -> None:
    assert violations({"type": type_}) == [f"schema.type {ONE_OF}"]


def test_missing_type() -> None:
    assert violations({}) == [f"schema.type {ONE_OF}"]
    assert violations(obj(a={"description": "x"})) == [
        f"schema.properties.a.type {ONE_OF}"
    ]


def test_type_list_gets_its_own_message() -> None:
    assert violations({"type": ["object", "null"]}) == [
        "schema.type must be a single type string (type arrays are not supported)"
    ]


def test_bad_type_stops_the_node() -> None:
    schema = {
        "type": "wat",
        "properties": {"a": {"type": "bad"}},
        "items": {"type": "bad"},
        "required": 5,
        "enum": [],
    }
    assert violations(schema) == [f"schema.type {ONE_OF}"]


# --- rule 6: keywords on the wrong type ----------------------------------------


def test_object_keywords_on_other_types_in_fixed_order() -> None:
    node = {
        "items": {"type": "bad"},
        "additionalProperties": 5,
        "required": ["zz"],
        "properties": {"p": {"type": "bad"}},
        "type": "string",
    }
    assert violations(obj(s=node)) == [
        'schema.properties.s.properties is not supported on type "string"',
        'schema.properties.s.required is not supported on type "string"',
        'schema.properties.s.additionalProperties is not supported on type "string"',
        'schema.properties.s.items is not supported on type "string"',
    ]


def test_scalar_keywords_on_object_and_array() -> None:
    schema = {"type": "object", "const": 1, "enum": [1], "items": {"type": "bad"}}
    assert violations(schema) == [
        'schema.items is not supported on type "object"',
        'schema.enum is not supported on type "object"',
        'schema.const is not supported on type "object"',
    ]
    array = {"type": "array", "enum": "x", "properties": {"p": {"type": "bad"}}}
    assert violations(obj(a=array)) == [
        'schema.properties.a.properties is not supported on type "array"',
        'schema.properties.a.enum is not supported on type "array"',
    ]


# --- rule 7: object ------------------------------------------------------------


@pytest.mark.parametrize(
    "properties",
    [[], [{"type": "string"}], "a", None, DictSub(), {1: {"type": "string"}}],
)
def test_properties_must_be_an_object_of_schemas(properties: object) -> None:
    assert violations({"type": "object", "properties": properties}) == [
        "schema.properties must be an object of schemas"
    ]


@pytest.mark.parametrize("required", ["a", ["a", 1], ("a",), None, {"a": 1}, [None]])
def test_required_must_be_an_array_of_strings(required: object) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    schema["required"] = required
    assert violations(schema) == ["schema.required must be an array of strings"]


def test_required_names_must_be_declared() -> None:
    schema = obj(a={"type": "string"})
    schema["required"] = ["a", "b", "keys", "__class__", "c"]
    assert violations(schema) == [
        'schema.required names "b" which is not in properties',
        'schema.required names "keys" which is not in properties',
        'schema.required names "__class__" which is not in properties',
        'schema.required names "c" which is not in properties',
    ]


def test_required_without_properties_names_every_entry() -> None:
    assert violations({"type": "object", "required": ["a", "b"]}) == [
        'schema.required names "a" which is not in properties',
        'schema.required names "b" which is not in properties',
    ]
    invalid = {"type": "object", "properties": [], "required": ["a"]}
    assert violations(invalid) == [
        "schema.properties must be an object of schemas",
        'schema.required names "a" which is not in properties',
    ]


def test_empty_required_is_fine() -> None:
    assert violations({"type": "object", "required": []}) == []
    assert (
        violations(
            {
                "type": "object",
                "required": FrozenList(["a"]),
                "properties": {"a": {"type": "null"}},
            }
        )
        == []
    )


@pytest.mark.parametrize("value", [0, 1, "false", None, [False]])
def test_additional_properties_must_be_a_boolean(value: object) -> None:
    assert violations({"type": "object", "additionalProperties": value}) == [
        "schema.additionalProperties must be a boolean"
    ]


@pytest.mark.parametrize("value", [True, False])
def test_additional_properties_boolean_is_fine(value: bool) -> None:
    assert violations({"type": "object", "additionalProperties": value}) == []


def test_children_are_reported_before_required_and_additional_properties() -> None:
    schema = {
        "additionalProperties": 1,
        "required": ["b"],
        "properties": {
            "a": {"type": "x"},
            "c": {"type": "array", "items": {"type": "y"}},
        },
        "type": "object",
    }
    assert violations(schema) == [
        f"schema.properties.a.type {ONE_OF}",
        f"schema.properties.c.items.type {ONE_OF}",
        'schema.required names "b" which is not in properties',
        "schema.additionalProperties must be a boolean",
    ]


# --- rule 7: scalars -----------------------------------------------------------


@pytest.mark.parametrize(
    "enum",
    [
        [],
        "abc",
        [{}],
        [[1]],
        [math.nan],
        [math.inf],
        [1, -math.inf],
        ("a",),
        None,
        [-0.0],
        [object()],
    ],
)
def test_enum_must_be_a_non_empty_array_of_scalars(enum: object) -> None:
    assert violations(obj(a={"type": "string", "enum": enum})) == [
        "schema.properties.a.enum must be a non-empty array of scalars"
    ]


def test_enum_members_need_not_match_the_type() -> None:
    mixed = ["a", 1, 1.5, True, None, 10**40]
    for type_ in ("string", "number", "integer", "boolean", "null"):
        assert violations(obj(a={"type": type_, "enum": mixed})) == []
    assert violations(obj(a={"type": "string", "enum": FrozenList(["x"])})) == []


@pytest.mark.parametrize("const", [{}, [1], math.nan, math.inf, (1,), -0.0, b"x"])
def test_const_must_be_a_scalar(const: object) -> None:
    assert violations(obj(a={"type": "number", "const": const})) == [
        "schema.properties.a.const must be a scalar"
    ]


@pytest.mark.parametrize("const", [None, True, False, 0, -2.5, "x", ""])
def test_const_scalars_are_fine(const: object) -> None:
    assert violations(obj(a={"type": "string", "const": const})) == []


def test_enum_and_const_both_reported() -> None:
    assert violations(obj(a={"type": "boolean", "enum": [], "const": [1]})) == [
        "schema.properties.a.enum must be a non-empty array of scalars",
        "schema.properties.a.const must be a scalar",
    ]


# --- rule 8: object root -------------------------------------------------------


@pytest.mark.parametrize(
    "type_", ["array", "string", "number", "integer", "boolean", "null"]
)
def test_root_must_be_an_object(type_: str) -> None:
    assert violations({"type": type_}) == [ROOT_NOT_OBJECT]


def test_root_message_only_without_other_violations() -> None:
    assert violations({"type": "array", "items": {"type": "nope"}}) == [
        f"schema.items.type {ONE_OF}"
    ]
    assert violations({"type": "string", "pattern": "x"}) == [
        f"schema.pattern {UNSUPPORTED}"
    ]


def test_deep_schema_does_not_overflow() -> None:
    node: dict[str, Any] = {"type": "string"}
    value: Any = "leaf"
    for _ in range(5000):
        node = {"type": "array", "items": node}
        value = [value]
    schema = obj(deep=node)
    assert violations(schema) == []
    assert validate_structured_value(schema, {"deep": value}) == []
    bad = validate_structured_value(schema, {"deep": [[[1]]]})
    assert bad == ['"value.deep[0][0][0]" must be an array']


# --- validate_structured_value: types ------------------------------------------


class StrSub(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile __eq__")

    __hash__ = str.__hash__


class FloatSub(float):
    def __float__(self) -> float:
        raise RuntimeError("hostile __float__")


class IntSub(int):
    def __int__(self) -> int:
        raise RuntimeError("hostile __int__")


class Spoof:
    """Claims to be a str through ``__class__``; must not be believed."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


TYPE_CASES: list[tuple[str, list[object], list[object], str]] = [
    (
        "object",
        [{}, {"a": 1}, FrozenDict(a=1)],
        [
            [],
            None,
            "x",
            (),
            DictSub(),
            collections.OrderedDict(),
            types.MappingProxyType({}),
            {1: "a"},
        ],
        "must be an object",
    ),
    (
        "array",
        [[], [1, "a"], FrozenList([1])],
        [(), {}, None, "ab", {1}],
        "must be an array",
    ),
    (
        "string",
        ["", "x", StrSub("s")],
        [1, None, b"x", ["x"], Spoof()],
        "must be a string",
    ),
    (
        "number",
        [0, -1, 1.5, -0.0, 10**100, FloatSub(2.5), IntSub(3)],
        [True, False, math.nan, math.inf, -math.inf, "1", None, [1]],
        "must be a finite number",
    ),
    (
        "integer",
        [0, 3, 3.0, -0.0, 10**100, 1e300, FloatSub(4.0), IntSub(3)],
        [1.5, "x", math.inf, math.nan, True, None, FloatSub(0.5)],
        "must be an integer",
    ),
    ("boolean", [True, False], [1, 0, None, "true"], "must be a boolean"),
    ("null", [None], [False, 0, "", [], {}], "must be null"),
]


@pytest.mark.parametrize(("type_", "good", "bad", "message"), TYPE_CASES)
def test_type_checks(
    type_: str, good: list[object], bad: list[object], message: str
) -> None:
    schema = obj(v={"type": type_})
    for value in good:
        assert validate_structured_value(schema, {"v": value}) == [], value
    for value in bad:
        assert validate_structured_value(schema, {"v": value}) == [
            f'"value.v" {message}'
        ], value


def test_root_value_must_be_an_object() -> None:
    assert validate_structured_value({"type": "object"}, [1]) == [
        '"value" must be an object'
    ]
    assert validate_structured_value({"type": "object"}, None) == [
        '"value" must be an object'
    ]


def test_null_const_null_accepts_null() -> None:
    schema = obj(n={"type": "null", "const": None})
    assert validate_structured_value(schema, {"n": None}) == []
    assert validate_structured_value(schema, {"n": 0}) == ['"value.n" must be null']


# --- validate_structured_value: objects and arrays ------------------------------


def test_three_messages_in_one_pass() -> None:
    schema = {
        "type": "object",
        "properties": {
            "file": {"type": "string"},
            "line": {"type": "integer"},
            "severity": {"type": "string", "enum": ["low", "medium", "high"]},
        },
        "required": ["file", "line", "severity"],
    }
    assert validate_structured_value(schema, {"line": "x", "severity": "mid"}) == [
        'missing required property "value.file"',
        '"value.line" must be an integer',
        '"value.severity" must be one of ["low","medium","high"]',
    ]


def test_object_order_required_then_properties_then_extras() -> None:
    schema = {
        "type": "object",
        "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
        "required": ["z", "a", "y"],
        "additionalProperties": False,
    }
    value = {"q": 1, "a": 1, "b": 2, "p": 3}
    assert validate_structured_value(schema, value) == [
        'missing required property "value.z"',
        'missing required property "value.y"',
        '"value.b" must be a string',
        '"value.a" must be a string',
        '"value.q" is not a declared property (additionalProperties: false)',
        '"value.p" is not a declared property (additionalProperties: false)',
    ]


def test_additional_properties_true_or_absent_allows_extra_keys() -> None:
    for extra in ({}, {"additionalProperties": True}):
        schema = {"type": "object", "properties": {"a": {"type": "string"}}, **extra}
        assert validate_structured_value(schema, {"a": "x", "b": object()}) == []


def test_additional_properties_false_without_properties() -> None:
    schema = {"type": "object", "additionalProperties": False}
    assert validate_structured_value(schema, {"k": 1}) == [
        '"value.k" is not a declared property (additionalProperties: false)'
    ]


def test_declared_but_absent_property_is_skipped() -> None:
    schema = obj(a={"type": "string"}, keys={"type": "string"})
    assert validate_structured_value(schema, {}) == []


def test_none_is_a_present_null_not_a_missing_key() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
    }
    assert validate_structured_value(schema, {"a": None}) == [
        '"value.a" must be a string'
    ]


def test_nested_paths() -> None:
    schema = obj(
        a={
            "type": "object",
            "properties": {"b": {"type": "array", "items": obj(c={"type": "boolean"})}},
        }
    )
    value = {"a": {"b": [{"c": True}, {"c": 1}, 5]}}
    assert validate_structured_value(schema, value) == [
        '"value.a.b[1].c" must be a boolean',
        '"value.a.b[2]" must be an object',
    ]


def test_array_without_items_accepts_any_list() -> None:
    schema = obj(l={"type": "array"})
    assert validate_structured_value(schema, {"l": [object(), math.nan, (1,)]}) == []


def test_array_items_collect_every_element() -> None:
    schema = obj(l={"type": "array", "items": {"type": "integer"}})
    assert validate_structured_value(schema, {"l": [1, "a", 2.0, 2.5]}) == [
        '"value.l[1]" must be an integer',
        '"value.l[3]" must be an integer',
    ]


# --- validate_structured_value: enum and const ---------------------------------


def test_enum_membership_is_type_strict() -> None:
    bools = obj(v={"type": "boolean", "enum": [1, 0]})
    assert validate_structured_value(bools, {"v": True}) == [
        '"value.v" must be one of [1,0]'
    ]
    ints = obj(v={"type": "integer", "enum": [True]})
    assert validate_structured_value(ints, {"v": 1}) == [
        '"value.v" must be one of [true]'
    ]
    nulls = obj(v={"type": "null", "enum": [0, False, ""]})
    assert validate_structured_value(nulls, {"v": None}) == [
        '"value.v" must be one of [0,false,""]'
    ]


def test_enum_numbers_compare_across_int_and_float() -> None:
    schema = obj(v={"type": "number", "enum": [1.0, 2]})
    for value in (1, 1.0, 2, 2.0, IntSub(1), FloatSub(2.0)):
        assert validate_structured_value(schema, {"v": value}) == []
    assert (
        validate_structured_value(obj(v={"type": "number", "enum": [0]}), {"v": -0.0})
        == []
    )


def test_enum_message_is_compact_json() -> None:
    schema = obj(v={"type": "string", "enum": [1.0, "é", None, True, 2.5]})
    assert validate_structured_value(schema, {"v": "x"}) == [
        '"value.v" must be one of [1,"é",null,true,2.5]'
    ]


def test_enum_with_hostile_str_subclass() -> None:
    schema = obj(v={"type": "string", "enum": ["a"]})
    assert validate_structured_value(schema, {"v": StrSub("a")}) == []
    assert validate_structured_value(schema, {"v": StrSub("b")}) == [
        '"value.v" must be one of ["a"]'
    ]


def test_const() -> None:
    schema = obj(v={"type": "string", "const": "bug"})
    assert validate_structured_value(schema, {"v": "bug"}) == []
    assert validate_structured_value(schema, {"v": "feature"}) == [
        '"value.v" must be "bug"'
    ]
    number = obj(v={"type": "number", "const": 1.0})
    assert validate_structured_value(number, {"v": 1}) == []
    assert validate_structured_value(number, {"v": 2}) == ['"value.v" must be 1']
    strict = obj(v={"type": "boolean", "const": 1})
    assert validate_structured_value(strict, {"v": True}) == ['"value.v" must be 1']


def test_at_most_one_violation_per_scalar() -> None:
    schema = obj(v={"type": "string", "enum": ["a", "b"], "const": "a"})
    assert validate_structured_value(schema, {"v": "c"}) == [
        '"value.v" must be one of ["a","b"]'
    ]
    assert validate_structured_value(schema, {"v": "b"}) == ['"value.v" must be "a"']
    assert validate_structured_value(schema, {"v": "a"}) == []
    assert validate_structured_value(schema, {"v": 1}) == ['"value.v" must be a string']


# --- validate_structured_value: programming errors and totality ----------------


def test_unknown_type_raises_naming_it() -> None:
    with pytest.raises(ValueError, match="'weird'"):
        validate_structured_value(obj(a={"type": "weird"}), {"a": 1})
    with pytest.raises(ValueError, match="None"):
        validate_structured_value({}, {})


def test_unknown_type_on_absent_property_is_never_reached() -> None:
    assert validate_structured_value(obj(a={"type": "weird"}), {}) == []


RICH_SCHEMA = {
    "type": "object",
    "properties": {
        "s": {"type": "string", "enum": ["a", "b"]},
        "n": {"type": "number", "const": 1},
        "i": {"type": "integer"},
        "b": {"type": "boolean"},
        "z": {"type": "null"},
        "l": {"type": "array", "items": obj(x={"type": "string"})},
        "o": {
            "type": "object",
            "properties": {"k": {"type": "integer", "enum": [1, 2.0]}},
            "required": ["k"],
            "additionalProperties": False,
        },
    },
    "required": ["s", "o"],
    "additionalProperties": False,
}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.binary(max_size=3),
    st.sampled_from([StrSub("a"), FloatSub(1.0), IntSub(2), Spoof(), object()]),
)
keys = st.one_of(
    st.sampled_from(["s", "n", "i", "b", "z", "l", "o", "x", "k"]), st.integers()
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(keys, inner, max_size=5),
        st.dictionaries(
            st.sampled_from(["s", "o", "l", "k", "x"]), inner, max_size=5
        ).map(FrozenDict),
        st.lists(inner, max_size=3).map(FrozenList),
    ),
    max_leaves=20,
)


@settings(deadline=None)
@given(values)
def test_validate_is_total_over_arbitrary_values(value: object) -> None:
    result = validate_structured_value(RICH_SCHEMA, value)
    assert isinstance(result, list)
    assert all(type(message) is str for message in result)
