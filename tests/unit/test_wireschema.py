"""What a model is shown: tidy schemas, OpenAI strict schemas, tool names."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path
from typing import Any, Literal

import jsonschema
import pytest

from dsh_nb.cards.listing import parameters_summary
from dsh_nb.tools.definition import tool
from dsh_nb.tools.errors import ToolArgsError, ToolDefinitionError
from dsh_nb.tools.names import check_tool_name, suggest_tool_name
from dsh_nb.tools.schema.wireschema import StrictSchemaError, strict_schema, tidy_schema


@dataclasses.dataclass
class Span:
    start: int
    end: int = 0


@dataclasses.dataclass
class Tree:
    label: str
    kids: list[Tree]


def test_tidy_inlines_refs_and_drops_titles_and_unique_items() -> None:
    raw = {
        "title": "Arguments",
        "description": "doc",
        "type": "object",
        "properties": {
            "s": {"$ref": "#/$defs/Span", "description": "mine"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "title": {"title": "Title", "type": "string"},
        },
        "$defs": {"Span": {"title": "Span", "type": "object", "properties": {}}},
    }
    assert tidy_schema(raw) == {
        "type": "object",
        "properties": {
            "s": {"type": "object", "properties": {}, "description": "mine"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "title": {"type": "string"},
        },
    }


def test_recursive_types_keep_their_defs_and_validate() -> None:
    def grow(tree: Tree) -> str:
        return tree.label

    schema = dict(tool(grow).parameters)
    assert set(schema["$defs"]) == {"Tree"}
    validator = jsonschema.Draft202012Validator(schema)
    good = {"tree": {"label": "a", "kids": [{"label": "b", "kids": []}]}}
    assert validator.is_valid(good)
    assert not validator.is_valid({"tree": {"label": "a", "kids": [{"kids": []}]}})
    assert tool(grow).execute(good, None) == "a"


def _strict(func: Any) -> dict[str, Any]:
    definition = tool(func)
    return strict_schema(definition.parameters, definition.name)


def test_strict_requires_everything_and_says_each_default() -> None:
    def pick(span: Span, k: int = 3, name: str | None = None) -> str:
        return ""

    assert _strict(pick) == {
        "type": "object",
        "properties": {
            "span": {
                "type": "object",
                "properties": {
                    "start": {"type": "integer"},
                    "end": {"type": "integer", "description": "default: 0"},
                },
                "required": ["start", "end"],
                "additionalProperties": False,
            },
            "k": {"type": "integer", "description": "default: 3"},
            "name": {"type": ["string", "null"], "description": "default: null"},
        },
        "required": ["span", "k", "name"],
        "additionalProperties": False,
    }


def test_strict_keeps_an_enum_with_its_default_said() -> None:
    def pick(mode: Literal["a", "b"] = "a") -> str:
        return mode

    assert _strict(pick)["properties"]["mode"] == {
        "type": "string",
        "enum": ["a", "b"],
        "description": 'default: "a"',
    }
    # ... and the tool refuses null, as both schemas say
    with pytest.raises(ToolArgsError):
        tool(pick).execute({"mode": None}, None)


def test_strict_keeps_the_first_form_of_a_datetime() -> None:
    def since(when: datetime.datetime | None = None) -> str:
        return ""

    assert _strict(since)["properties"]["when"] == {
        "type": ["string", "null"],
        "format": "date-time",
        "description": (
            "ISO 8601, e.g. 2026-03-01T09:30:00Z; without an offset the time is "
            "naive; a date alone, e.g. 2026-03-01, means midnight (default: null)"
        ),
    }


@pytest.mark.parametrize(
    ("annotation", "problem"),
    [
        (dict[str, float], '"x" is an object without fixed properties'),
        (Any, '"x" accepts any value'),
        (tuple[int, str], '"x" is a tuple'),
        (list, '"x[]" accepts any value'),
    ],
)
def test_strict_refuses_what_it_cannot_express(annotation: Any, problem: str) -> None:
    def f(x):  # type: ignore[no-untyped-def]
        return ""

    f.__annotations__ = {"x": annotation}
    with pytest.raises(StrictSchemaError) as info:
        _strict(f)
    assert str(info.value) == (
        f"tool 'f' cannot be exported for OpenAI strict mode: {problem}"
    )


def test_strict_refuses_a_dsl_array_without_items() -> None:
    schema = {"type": "object", "properties": {"xs": {"type": "array"}}}
    with pytest.raises(StrictSchemaError) as info:
        strict_schema(schema, "d")
    assert str(info.value).endswith('"xs" is an array of any values')


def test_strict_drops_formats_and_keywords_strict_mode_refuses() -> None:
    def f(p: Path, tags: set[str]) -> str:
        return ""

    props = _strict(f)["properties"]
    assert props["p"] == {"type": "string"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}


# -- names ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("größe", "grosse"),
        ("load data", "load_data"),
        ("café.menu", "cafe_menu"),
        ("x" * 70, "x" * 64),
        ("!!!", "tool"),
    ],
)
def test_bad_names_get_a_valid_suggestion(name: str, suggestion: str) -> None:
    assert suggest_tool_name(name) == suggestion
    assert check_tool_name(suggestion, "w") is None
    message = check_tool_name(name, "w")
    assert message is not None and message.endswith(f"Try name={suggestion!r}")


def test_long_name_message_says_how_long() -> None:
    message = check_tool_name("a" * 65, "@tool")
    assert message is not None and "is 65 characters long;" in message


@pytest.mark.parametrize("name", ["a", "load_csv", "Get-Data-2", "x" * 64])
def test_good_names_pass(name: str) -> None:
    assert check_tool_name(name, "w") is None


def test_tool_refuses_a_bad_name_given_or_taken_from_the_function() -> None:
    def f() -> str:
        return ""

    with pytest.raises(ToolDefinitionError) as info:
        tool(name="load data")(f)
    assert "Try name='load_data'" in str(info.value)


def test_parameters_summary_reads_unions() -> None:
    def f(n: int | None = None, s: str = "x") -> str:
        return ""

    assert parameters_summary(tool(f).parameters) == (
        'n: integer|null = null, s: string = "x"'
    )
