# mypy: disable-error-code="func-returns-value"
"""Random specs through ``define_tool``: calls, validation and emitted schemas.

Sections 1, 4 and 5 of the fuzz suites (see ``fuzzkit``): random
``SchemaProp`` trees and plain-dict props become tools run at every seam
with exact expectations; ``validate_args`` is total and a tool's own check
agrees with it; every schema we emit is valid Draft 2020-12; ``define_tool``
either accepts a spec or raises ``ToolDefinitionError``.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from fuzzkit import (
    ARGS_NOT_JSON,
    META,
    TYPES,
    HostileDict,
    any_arguments,
    assert_deep_frozen,
    assert_frozen_result,
    assert_lossless_json,
    assert_meta_valid,
    assert_observed_once,
    bad_keys,
    call,
    chaotic_args,
    enum_on_containers,
    instrumented,
    json_scalars,
    json_values,
    lossless,
    non_json,
    props,
    specs,
    text,
    valid_args,
)
from hypothesis import event, given
from hypothesis import strategies as st
from jsonshapes import DictSub, ListSub, Opaque, cyclic_dict, cyclic_list

from dsh_nb.tools import (
    Agent,
    SchemaProp,
    ToolDefinitionError,
    ToolRegistry,
    define_tool,
    schema_spec_to_json_schema,
    validate_args,
)
from dsh_nb.tools.schema.argcheck import own_check

# -- 1. random specs through define_tool, every seam, exact expectations ---------


@given(data=st.data(), spec=specs(), with_signal=st.booleans())
def test_spec_tools_never_raise_and_agree_with_validate_args(
    data: st.DataObject, spec: dict[str, Any], with_signal: bool
) -> None:
    seen: list[Any] = []

    def echo(args: Any) -> Any:
        seen.append(args)
        return {"content": [text("ok")], "meta": args}

    definition = define_tool(
        name="fuzzed", description="fuzz", parameters=spec, execute=echo
    )
    assert_meta_valid(definition.parameters)
    assert definition.parameters == schema_spec_to_json_schema(spec)
    agent = Agent("fuzz")
    registry, counters = instrumented(agent)
    registry.register(definition)
    for entry in registry.schemas():
        assert_meta_valid(entry["parameters"])

    arguments = data.draw(
        st.one_of(valid_args(spec), chaotic_args(spec), any_arguments),
        label="arguments",
    )
    result = call(registry, "fuzzed", arguments, agent, with_signal)

    payload = assert_lossless_json(result)
    assert_frozen_result(result)
    assert_observed_once(counters, result, "c1")
    assert result.call_id == "c1"
    if not lossless(arguments):
        event("arguments: not JSON")
        assert payload == {
            "callId": "c1",
            "content": [text(ARGS_NOT_JSON)],
            "isError": True,
        }
        assert counters.pre == counters.post == 0
        assert seen == []
        return
    violations = validate_args(spec, arguments)
    event("arguments: " + ("invalid" if violations else "valid"))
    check = own_check(definition)
    assert check is not None
    assert check(arguments) == violations
    if isinstance(arguments, dict) and not enum_on_containers(spec):
        assert (not violations) == META.evolve(schema=definition.parameters).is_valid(
            arguments
        )
    if violations:
        assert payload == {
            "callId": "c1",
            "content": [text("Error: invalid arguments: " + "; ".join(violations))],
            "isError": True,
            "error": {"name": "ToolArgsError", "code": "INVALID_ARGS"},
        }
        assert seen == []
    else:
        assert payload == {
            "callId": "c1",
            "content": [text("ok")],
            "isError": False,
            "meta": arguments,
        }
        assert seen == [arguments]
        assert seen[0] is not arguments
        assert_deep_frozen(seen[0])
    assert counters.pre == counters.post == 1


# -- 4. validate_args is total ---------------------------------------------------------

hostile_noise = st.one_of(json_scalars, non_json)
hostile_top_level = st.one_of(
    json_values,
    non_json,
    st.builds(HostileDict),
    st.dictionaries(
        st.one_of(st.text(max_size=3), bad_keys),
        st.one_of(json_values, non_json),
        max_size=3,
    ),
)


@given(data=st.data(), spec=specs(3))
def test_validate_args_is_total_and_a_tools_check_agrees(
    data: st.DataObject, spec: dict[str, Any]
) -> None:
    args = data.draw(
        st.one_of(chaotic_args(spec, hostile_noise), hostile_top_level), label="args"
    )
    violations = validate_args(spec, args)
    assert isinstance(violations, list)
    assert all(type(v) is str for v in violations)
    definition = define_tool(name="t", description="", parameters=spec, execute=str)
    check = own_check(definition)
    assert check is not None
    assert check(args) == violations
    if not isinstance(args, dict):
        assert violations == ['"arguments" must be an object']


# -- 5. every schema we emit is valid Draft 2020-12 -------------------------------


@given(spec=specs(3))
def test_emitted_schemas_are_valid_draft_2020_12(spec: dict[str, Any]) -> None:
    schema = schema_spec_to_json_schema(spec)
    assert_meta_valid(schema)
    definition = define_tool(
        name="s", description="", parameters=spec, execute=lambda a: []
    )
    assert definition.parameters == schema
    raw = define_tool(
        name="raw", description="", parameters=schema, execute=lambda a: []
    )
    registry = ToolRegistry()
    registry.register(definition)
    registry.register(raw)
    projected = registry.schemas()
    assert [p["name"] for p in projected] == ["s", "raw"]
    for entry in projected:
        assert set(entry) == {"name", "description", "parameters"}
        assert entry["parameters"] == schema
        assert_meta_valid(entry["parameters"])


# What an author might wrongly put in a spec. Values that cannot even be
# printed (raising __repr__/__eq__, ints past the str limit) are left out:
# see test_define_tool_names_an_unprintable_spec_value.
tame_poison = st.one_of(
    st.sampled_from([math.nan, math.inf, -0.0]),
    st.lists(json_scalars, max_size=3).map(tuple),
    st.sets(st.integers(), max_size=3),
    st.binary(max_size=4),
    st.dictionaries(st.text(max_size=3), json_scalars, max_size=2).map(DictSub),
    st.lists(json_scalars, max_size=2).map(ListSub),
    st.builds(Opaque),
    st.just(len),
    st.just(int),
    st.dictionaries(st.integers(), json_scalars, min_size=1, max_size=2),
    st.builds(cyclic_dict),
    st.builds(cyclic_list),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.datetimes(),
)
junk_props = st.one_of(
    props(2),
    st.dictionaries(
        st.sampled_from(
            ["type", "required", "enum", "default", "properties", "items", "typo"]
        ),
        st.one_of(json_values, tame_poison, st.sampled_from(TYPES), st.just("weird")),
        max_size=4,
    ),
    st.builds(SchemaProp, type=st.one_of(st.sampled_from(TYPES), st.text(max_size=4))),
    json_scalars,
    tame_poison,
)


@given(
    spec=st.one_of(
        st.dictionaries(
            st.one_of(st.text(max_size=3), st.integers()), junk_props, max_size=4
        ),
        json_values,
    )
)
def test_define_tool_accepts_or_raises_a_definition_error(spec: Any) -> None:
    try:
        definition = define_tool(
            name="junk", description="", parameters=spec, execute=lambda a: []
        )
    except ToolDefinitionError as exc:
        assert str(exc)
        return
    assert_meta_valid(definition.parameters)


def test_define_tool_names_an_unprintable_spec_value() -> None:
    with pytest.raises(ToolDefinitionError):
        define_tool(
            name="t",
            description="",
            parameters={"a": {"type": 10**5000}},
            execute=lambda a: [],
        )
