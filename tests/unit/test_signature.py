"""Signature tools: pydantic schemas, docstrings, binding and refusals."""

# The old typing spellings are what these tests are about.
# ruff: noqa: UP006, UP007, UP035, UP037, UP045

from __future__ import annotations

import asyncio
import collections.abc
import dataclasses
import datetime
import enum
import functools
import sys
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, List, Literal, NewType, Optional, Union

import pytest
from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

from dsh_nb.tools.definition import tool
from dsh_nb.tools.errors import ToolArgsError, ToolDefinitionError
from dsh_nb.tools.jsonvalue import ABSENT, FrozenDict, snapshot_json
from dsh_nb.tools.running.abort import AbortController, AbortSignal
from dsh_nb.tools.schema import SchemaProp, check_spec, validate_args
from dsh_nb.tools.signature import (
    bind_to_signature,
    docstring_summary,
    spec_from_signature,
)
from dsh_nb.tools.values.execution import ToolExecution


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    """A point on the plane.

    Attributes:
        x: horizontal position
    """

    x: int
    y: float = 0.0
    label: str | None = None
    tags: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Shape:
    name: str
    points: list[Point]


class Options(TypedDict):
    depth: int
    mode: NotRequired[Literal["fast", "slow"]]


class Window(BaseModel):
    start: datetime.date
    days: int = Field(7, ge=1)


@dataclasses.dataclass
class Node:
    value: str
    children: list[Node]


def schema_of(func: Callable[..., Any]) -> dict[str, Any]:
    return dict(tool(func).parameters)


def props_of(func: Callable[..., Any]) -> dict[str, Any]:
    out: dict[str, Any] = schema_of(func)["properties"]
    return out


def definition_error(func: Callable[..., Any]) -> str:
    with pytest.raises(ToolDefinitionError) as info:
        tool(func)
    return str(info.value)


def violations(func: Callable[..., Any], args: Any) -> tuple[str, ...]:
    with pytest.raises(ToolArgsError) as info:
        bind_to_signature(func)(args, None)
    return info.value.violations


# -- annotation mapping ---------------------------------------------------------


def test_scalars_map_to_json_types_and_int_is_integer() -> None:
    def f(s: str, i: int, x: float, b: bool) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "x": {"type": "number"},
            "b": {"type": "boolean"},
        },
        "required": ["s", "i", "x", "b"],
    }


@pytest.mark.parametrize(
    "annotation",
    [list[str], List[str], Sequence[str], typing.Sequence[str]],
    ids=["list", "List", "abc.Sequence", "typing.Sequence"],
)
def test_lists_map_to_arrays_with_items(annotation: Any) -> None:
    def f(tags): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"tags": annotation}
    assert props_of(f) == {"tags": {"type": "array", "items": {"type": "string"}}}


def test_dict_values_are_described() -> None:
    def f(
        w: dict[str, float], s: Mapping[str, str], n: dict[str, int], a: dict
    ) -> None: ...

    props = props_of(f)
    assert props["w"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["s"]["additionalProperties"] == {"type": "string"}
    assert props["n"]["additionalProperties"] == {"type": "integer"}
    assert props["a"] == {"type": "object"}


def test_sets_and_tuples() -> None:
    def f(s: set[str], pair: tuple[int, str], xs: tuple[float, ...]) -> None: ...

    props = props_of(f)
    assert props["s"] == {"type": "array", "items": {"type": "string"}}
    assert props["pair"] == {
        "type": "array",
        "maxItems": 2,
        "minItems": 2,
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
    }
    assert props["xs"] == {"type": "array", "items": {"type": "number"}}


def test_times_and_paths_are_strings_with_formats() -> None:
    def f(
        a: datetime.datetime,
        b: datetime.date,
        c: datetime.time,
        d: datetime.timedelta,
        p: Path,
    ) -> None: ...

    props = props_of(f)
    assert [props[k]["format"] for k in "bdp"] == ["date", "duration", "path"]
    assert all(props[k]["type"] == "string" for k in "abcdp")
    # a datetime also takes a date alone and no offset, and says so twice
    assert [m.get("format") for m in props["a"]["anyOf"]] == ["date-time", "date", None]
    assert "a date alone, e.g. 2026-03-01, means midnight" in props["a"]["description"]
    assert [m.get("format") for m in props["c"]["anyOf"]] == ["time", None]


def test_typed_dict_maps_to_object_with_required_keys() -> None:
    def f(opts: Options) -> None: ...

    assert props_of(f)["opts"] == {
        "type": "object",
        "properties": {
            "depth": {"type": "integer"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
        },
        "required": ["depth"],
    }


class Old(typing.TypedDict):
    a: int


@dataclasses.dataclass
class Holder:
    old: Old


def test_typing_typed_dict_is_accepted_at_the_top_level() -> None:
    def f(o: Old) -> Any:
        return o

    assert props_of(f)["o"]["required"] == ["a"]
    assert bind_to_signature(f)({"o": {"a": 1}}, None) == {"a": 1}


def test_dataclass_maps_to_object_with_docstring_descriptions() -> None:
    def f(p: Point) -> None: ...

    assert props_of(f)["p"] == {
        "type": "object",
        "description": "A point on the plane.",
        "properties": {
            "x": {"type": "integer", "description": "horizontal position"},
            "y": {"type": "number", "default": 0.0},
            "label": {"type": ["string", "null"], "default": None},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["x"],
    }


def test_base_model_parameter_keeps_its_field_bounds() -> None:
    def f(w: Window) -> None: ...

    w = props_of(f)["w"]
    assert w["required"] == ["start"]
    assert w["properties"]["days"] == {"type": "integer", "default": 7, "minimum": 1}


def test_nested_classes_are_inlined_and_recursive_ones_keep_defs() -> None:
    def f(shape: Shape) -> None: ...

    schema = schema_of(f)
    assert "$defs" not in schema
    points = schema["properties"]["shape"]["properties"]["points"]
    assert points["items"]["required"] == ["x"]

    def g(tree: Node) -> None: ...

    schema = schema_of(g)
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/Node"
    }


def test_literals_of_any_scalars_and_enums() -> None:
    def f(
        mode: Literal["a", "b"],
        n: Literal[1, 2, 3],
        mixed: Literal["x", 1, True],
        color: Color = Color.GREEN,
        level: Level = Level.LOW,
    ) -> None: ...

    props = props_of(f)
    assert props["mode"] == {"type": "string", "enum": ["a", "b"]}
    assert props["n"] == {"type": "integer", "enum": [1, 2, 3]}
    assert props["mixed"] == {"enum": ["x", 1, True]}
    assert props["color"] == {
        "type": "string",
        "enum": ["red", "green"],
        "default": "green",
    }
    assert props["level"]["enum"] == [1, 2]
    assert props["level"]["default"] == 1


@pytest.mark.parametrize(
    "annotation",
    [Optional[int], Union[int, None], int | None, Union[None, int]],
    ids=["Optional", "Union", "pipe", "None-first"],
)
def test_optional_is_nullable_and_required_without_a_default(annotation: Any) -> None:
    def f(n): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"n": annotation}
    assert schema_of(f) == {
        "type": "object",
        "properties": {"n": {"type": ["integer", "null"]}},
        "required": ["n"],
    }


def test_union_lists_its_members() -> None:
    def f(x: int | str, y: int | str | None = None) -> None: ...

    props = props_of(f)
    assert props["x"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert props["y"]["anyOf"][-1] == {"type": "null"}


def test_defaults_make_optional_and_are_emitted_in_json_form() -> None:
    def f(
        a: int = 3,
        b: str = "",
        c: bool = False,
        d: list[int] = [1, 2],  # noqa: B006
        e: str | None = None,
        p: Path = Path("data"),
        when: datetime.date = datetime.date(2024, 1, 2),
        color: Color = Color.RED,
    ) -> None: ...

    defaults = {k: v.get("default") for k, v in props_of(f).items()}
    assert defaults == {
        "a": 3,
        "b": "",
        "c": False,
        "d": [1, 2],
        "e": None,
        "p": "data",
        "when": "2024-01-02",
        "color": "red",
    }
    assert "required" not in schema_of(f)


def test_none_default_makes_the_type_nullable() -> None:
    def f(n: int = None) -> Any:  # type: ignore[assignment]  # noqa: RUF013
        return n

    assert props_of(f)["n"] == {"type": ["integer", "null"], "default": None}
    assert bind_to_signature(f)({"n": None}, None) is None


def test_emitted_default_is_a_copy() -> None:
    default = [1]

    def f(d: list[int] = default) -> None: ...

    definition = tool(f)
    default.append(2)
    assert definition.parameters["properties"]["d"]["default"] == [1]


def test_descriptions_on_the_parameter_beat_the_docstring() -> None:
    def f(
        q: Annotated[str, "the query"],
        n: Annotated[int, 42, "count"] = 1,
        o: Annotated[Optional[int], "maybe"] = None,
        p: Optional[Annotated[int, "inner"]] = None,
        k: Annotated[int, Field(ge=1, description="clusters")] = 3,
        r: str = "x",
    ) -> None:
        """Do it.

        Args:
            q: from the docstring
            n: from the docstring
            k: from the docstring
            r: only the docstring
        """

    props = props_of(f)
    assert props["q"] == {"type": "string", "description": "the query"}
    assert props["n"]["description"] == "count"
    assert props["o"]["description"] == "maybe"
    assert props["p"]["description"] == "inner"
    assert props["k"] == {
        "type": "integer",
        "description": "clusters",
        "minimum": 1,
        "default": 3,
    }
    assert props["r"]["description"] == "only the docstring"


def test_field_as_the_default_gives_bounds_and_the_real_default() -> None:
    def f(k: int = Field(5, ge=1, description="clusters")) -> int:
        return k

    assert props_of(f)["k"] == {
        "type": "integer",
        "description": "clusters",
        "default": 5,
        "minimum": 1,
    }
    body = bind_to_signature(f)
    assert body({}, None) == 5
    assert violations(f, {"k": 0}) == ('"k" must be >= 1',)


def test_new_type_is_unwrapped() -> None:
    user_id = NewType("user_id", str)

    def f(u): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"u": user_id}
    assert props_of(f) == {"u": {"type": "string"}}


def test_string_annotations_resolve() -> None:
    def f(a: "int", b: "list[Point]") -> None: ...

    assert props_of(f)["b"]["items"]["required"] == ["x"]


# -- docstrings -----------------------------------------------------------------


def test_google_docstring_descriptions() -> None:
    def f(path: str, limit: int = 5, *, flag: bool = False, **extra: Any) -> None:
        """Read a file.

        Longer text that is not the summary.

        Args:
            path (str): Where to read,
                relative to the cwd.
            limit (int, optional): How many
              lines.
            flag: Turn it on.
            **extra: ignored.

        Returns:
            Nothing: really.
        """

    props = props_of(f)
    assert props["path"]["description"] == "Where to read, relative to the cwd."
    assert props["limit"]["description"] == "How many lines."
    assert props["flag"]["description"] == "Turn it on."
    assert list(props) == ["path", "limit", "flag"]


def test_numpy_docstring_descriptions() -> None:
    def f(a: int, b: str = "x", c: bool = False) -> None:
        """Do things.

        Parameters
        ----------
        a : int
            The a
            value.
        b, c : str
            Shared text.

        Returns
        -------
        int
            not a parameter
        """

    props = props_of(f)
    assert props["a"]["description"] == "The a value."
    assert props["b"]["description"] == "Shared text."
    assert props["c"]["description"] == "Shared text."


def test_sphinx_docstring_descriptions() -> None:
    def f(path: str, nrows: int = 5) -> None:
        """Load a CSV.

        :param path: Where to read,
            relative to the cwd.
        :param int nrows: How many rows.
        :returns: the frame
        """

    props = props_of(f)
    assert props["path"]["description"] == "Where to read, relative to the cwd."
    assert props["nrows"]["description"] == "How many rows."


def test_sections_right_under_the_summary_are_read_in_every_style() -> None:
    def google(path: str, limit: int = 5) -> None:
        """Read a file.
        Args:
            path (str): Where to read.
            limit: How many lines.
        Returns:
            Nothing.
        """

    def numpy(path: str, limit: int = 5) -> None:
        """Read a file.
        Parameters
        ----------
        path : str
            Where to read.
        limit : int
            How many lines.
        """

    def sphinx(path: str, limit: int = 5) -> None:
        """Read a file.
        :param path: Where to read.
        :param limit: How many lines.
        """

    for func in (google, numpy, sphinx):
        definition = tool(func)
        assert definition.description == "Read a file.", func.__name__
        props = definition.parameters["properties"]
        assert (props["path"]["description"], props["limit"]["description"]) == (
            "Where to read.",
            "How many lines.",
        ), func.__name__


def test_a_title_word_inside_prose_is_not_a_section() -> None:
    def f(x: int) -> None:
        """Sum things.
        Returns: nothing much, and Args: is prose here.
        """

    assert "description" not in props_of(f)["x"]


def test_docstring_summary() -> None:
    def f() -> None:
        """Search  the
        web for things.

        Details here.
        """

    def g() -> None:
        """One line.
        Args:
            x: nope
        """

    def s() -> None:
        """Sphinx style.
        :param x: nope
        """

    def h() -> None:
        pass

    assert docstring_summary(f) == "Search the web for things."
    assert docstring_summary(g) == "One line."
    assert docstring_summary(s) == "Sphinx style."
    assert docstring_summary(h) == ""
    assert docstring_summary(functools.partial(f)) == "Search the web for things."


# -- what is refused, and what is accepted with a warning ------------------------


def test_unannotated_parameter_is_any_with_a_warning() -> None:
    def f(x, y: int) -> Any:  # type: ignore[no-untyped-def]
        return x

    with pytest.warns(UserWarning) as caught:
        definition = tool(f)
    assert [str(w.message) for w in caught] == [
        '@tool f(): parameter "x" has no type annotation, so the model is told '
        "nothing about it and any value is accepted; annotate it (for example "
        "x: str)"
    ]
    assert definition.parameters["properties"]["x"] == {}
    assert definition.execute({"x": {"any": [1]}, "y": 1}, None) == '{"any":[1]}'


def test_any_is_accepted_without_a_warning() -> None:
    def f(x: Any) -> Any:
        return x

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert props_of(f) == {"x": {}}


_USE = (
    "use a JSON type (str, int, float, bool, list, dict), datetime, Path, an Enum, "
    "Literal, a dataclass, a TypedDict or a pydantic BaseModel"
)


@pytest.mark.parametrize(
    ("annotation", "shown", "why"),
    [
        (
            Callable[[int], int],
            "collections.abc.Callable[[int], int]",
            "JSON Schema cannot describe",
        ),
        (type, "type", "JSON Schema cannot describe"),
        (
            AbortController,
            "dsh_nb.tools.running.abort.AbortController",
            "pydantic cannot",
        ),
    ],
)
def test_refused_types_name_the_parameter_and_the_fix(
    annotation: Any, shown: str, why: str
) -> None:
    def f(x): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"x": annotation}
    message = definition_error(f)
    assert message.startswith(f'@tool f(): parameter "x" has type {shown}, which {why}')
    assert message.endswith(_USE)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="pydantic's rule before 3.12")
def test_typing_typed_dict_inside_a_dataclass_says_what_to_import() -> None:
    def f(h: Holder) -> None: ...

    assert "typing_extensions.TypedDict" in definition_error(f)


@pytest.mark.parametrize("default", [b"x", float("nan"), object(), "five"])
def test_a_default_the_parameter_refuses_fails_the_definition(default: object) -> None:
    def f(x: list[int] = default) -> None: ...  # type: ignore[assignment]

    message = definition_error(f)
    assert message.startswith(f'@tool f(): parameter "x" has default {default!r}')


def test_default_refused_by_bounds_names_the_clause() -> None:
    def f(k: Annotated[int, Field(ge=1)] = 0) -> None: ...

    assert definition_error(f) == (
        '@tool f(): parameter "k" has default 0, which its own schema refuses '
        '("k" must be >= 1)'
    )


def test_unresolvable_string_annotation() -> None:
    def f(x: "Missing") -> None: ...  # type: ignore[name-defined]  # noqa: F821

    message = definition_error(f)
    assert message.startswith("@tool f(): cannot resolve type hints")
    assert "Missing" in message


# -- *args, **kwargs and injection ----------------------------------------------


def test_var_positional_is_an_array_property() -> None:
    def f(sep: str, *parts: int) -> str:
        return sep.join(map(str, parts))

    assert props_of(f)["parts"] == {"type": "array", "items": {"type": "integer"}}
    assert schema_of(f)["required"] == ["sep"]
    body = bind_to_signature(f)
    assert body({"sep": "-", "parts": [1, 2]}, None) == "1-2"
    assert body({"sep": "-"}, None) == ""
    assert violations(f, {"sep": "-", "parts": [1, "x"]}) == (
        '"parts[1]" must be an integer',
    )


def test_var_keyword_takes_extra_keys_checked_as_its_type() -> None:
    def f(a: str, **rest: int) -> dict[str, Any]:
        return {"a": a, **rest}

    assert schema_of(f) == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": {"type": "integer"},
    }
    body = bind_to_signature(f)
    assert body({"a": "x", "b": 1, "c": 2.0}, None) == {"a": "x", "b": 1, "c": 2}
    assert violations(f, {"a": "x", "b": "one"}) == ('"b" must be an integer',)


def test_untyped_var_keyword_passes_extras_through() -> None:
    def f(a: str, **rest: Any) -> dict[str, Any]:
        return {"a": a, **rest}

    assert bind_to_signature(f)({"a": "x", "c": [2]}, None) == {"a": "x", "c": [2]}
    assert "additionalProperties" not in schema_of(f)


def test_injected_parameters_are_not_in_the_schema() -> None:
    def f(
        q: str,
        execution: ToolExecution,
        signal: AbortSignal | None = None,
    ) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
    }


def test_injected_names_imported_only_for_type_checking_resolve() -> None:
    namespace: dict[str, Any] = {}
    exec(  # the names below are deliberately missing from the function's globals
        "from __future__ import annotations\n"
        "def f(q: str, execution: ToolExecution, signal: AbortSignal | None) -> str:\n"
        "    return q\n",
        namespace,
    )
    assert schema_of(namespace["f"]) == {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
    }


def test_injected_parameters_receive_execution_and_signal() -> None:
    seen: dict[str, Any] = {}

    def f(q: str, execution: ToolExecution, signal: AbortSignal) -> str:
        seen.update(execution=execution, signal=signal)
        return q

    signal = AbortController().signal
    execution = ToolExecution(
        call_id="c",
        name="f",
        arguments=FrozenDict(),
        agent=None,
        parent=None,
        signal=signal,
    )
    body = bind_to_signature(f)
    assert body({"q": "x", "execution": 1, "signal": 2}, None) == "x"
    assert body({"q": "x"}, execution) == "x"
    assert seen["execution"] is execution
    assert seen["signal"] is signal
    assert body({"q": "y"}, None) == "y"
    assert seen == {"execution": None, "signal": None}


# -- binding --------------------------------------------------------------------


def test_bind_drops_extra_keys_and_keeps_function_defaults() -> None:
    marker: list[int] = []

    def f(a: str, b: list[int] = marker) -> tuple[str, Any]:
        return a, b

    body = bind_to_signature(f)
    assert body({"a": "x", "zzz": 1}, None)[1] is marker  # Python's own default
    assert body(snapshot_json({"a": "x", "b": [2]}), None) == ("x", [2])


def test_null_is_refused_where_the_schema_refuses_it() -> None:
    def f(n: int = 5, s: str | None = "x") -> tuple[int, Any]:
        return n, s

    assert props_of(f)["n"] == {"type": "integer", "default": 5}
    assert violations(f, {"n": None}) == ('"n" must be an integer',)
    body = bind_to_signature(f)
    assert body({}, None) == (5, "x")  # absent: the default
    assert body({"s": None}, None) == (5, None)  # s accepts null: kept


def test_strict_integers_take_whole_floats_only() -> None:
    def f(n: int, m: int = 0) -> tuple[int, int]:
        return n, m

    body = bind_to_signature(f)
    result = body({"n": 3.0, "m": 10**30}, None)
    assert result == (3, 10**30)
    assert type(result[0]) is int
    assert violations(f, {"n": 2.5, "m": "x"}) == (
        '"n" must be an integer',
        '"m" must be an integer',
    )
    assert violations(f, {"n": True}) == ('"n" must be an integer',)
    assert violations(f, {"n": "50"}) == ('"n" must be an integer',)


def test_coerce_opts_into_pydantic_lax_mode() -> None:
    def f(n: int, flag: bool, when: datetime.date) -> tuple[Any, ...]:
        return n, flag, when

    lax = bind_to_signature(f, coerce=True)
    assert lax({"n": "50", "flag": "true", "when": "2024-01-02"}, None) == (
        50,
        True,
        datetime.date(2024, 1, 2),
    )
    strict = bind_to_signature(f)
    with pytest.raises(ToolArgsError) as info:
        strict({"n": "50", "flag": "true", "when": "2024-01-02"}, None)
    assert info.value.violations == (
        '"n" must be an integer',
        '"flag" must be a boolean',
    )


def test_bind_constructs_dataclasses_recursively() -> None:
    def f(shape: Shape, pts: list[Point]) -> tuple[Shape, list[Point]]:
        return shape, pts

    body = bind_to_signature(f)
    args = snapshot_json(
        {
            "shape": {"name": "s", "points": [{"x": 1.0, "extra": 1}], "more": 2},
            "pts": [{"x": 2, "y": 0.5, "label": "p", "tags": ["t"]}],
        }
    )
    shape, pts = body(args, None)
    assert shape == Shape(name="s", points=[Point(x=1)])
    assert type(shape.points[0].x) is int
    assert pts == [Point(x=2, y=0.5, label="p", tags=["t"])]
    assert violations(
        f, {"shape": {"name": "s", "points": [{"x": 1.5}]}, "pts": []}
    ) == ('"shape.points[0].x" must be an integer',)


def test_bind_converts_enums_typed_dicts_times_and_paths() -> None:
    def f(
        color: Color,
        opts: Options,
        when: datetime.datetime,
        p: Path,
        colors: list[Color] = [],  # noqa: B006
    ) -> Any:
        return color, opts, when, p, colors

    body = bind_to_signature(f)
    color, opts, when, p, colors = body(
        {
            "color": "red",
            "opts": {"depth": 2.0, "x": 1},
            "when": "2024-05-06T07:08:09Z",
            "p": "data/x.csv",
            "colors": ["green"],
        },
        None,
    )
    assert color is Color.RED
    assert opts == {"depth": 2}
    assert when == datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc)
    assert p == Path("data/x.csv")
    assert colors == [Color.GREEN]
    assert violations(
        f, {"color": "blue", "opts": {"depth": 1}, "when": "soon", "p": 3}
    ) == (
        '"color" must be one of ["red","green"]',
        '"when" must be an ISO 8601 datetime',
        '"p" must be a string',
    )


def test_bind_dict_values_are_converted() -> None:
    def f(counts: dict[str, int], pts: dict[str, Point]) -> Any:
        return counts, pts

    counts, pts = bind_to_signature(f)(
        {"counts": {"a": 1.0}, "pts": {"p": {"x": 1}}}, None
    )
    assert counts == {"a": 1}
    assert pts == {"p": Point(x=1)}
    assert violations(f, {"counts": {"a": 1.5}, "pts": {}}) == (
        '"counts.a" must be an integer',
    )


def test_bind_reports_missing_required_and_non_objects() -> None:
    def f(a: str) -> str:
        return a

    assert violations(f, {}) == ('missing required property "a"',)
    for bad in (None, [], "x", 3):
        assert violations(f, bad) == ('"arguments" must be an object',)


def test_bind_positional_only_parameters() -> None:
    def f(a: str, b: int = 2, /, c: str = "c") -> tuple[str, int, str]:
        return a, b, c

    body = bind_to_signature(f)
    assert body({"a": "x"}, None) == ("x", 2, "c")
    assert body({"a": "x", "b": 5.0, "c": "z"}, None) == ("x", 5, "z")


def test_parameter_names_pydantic_models_reserve_are_plain_fields() -> None:
    def f(json: str, _private: int, model_config: bool = False) -> tuple[Any, ...]:
        return json, _private, model_config

    assert list(props_of(f)) == ["json", "_private", "model_config"]
    assert bind_to_signature(f)({"json": "j", "_private": 1}, None) == ("j", 1, False)


async def test_async_functions_return_awaitables() -> None:
    async def f(a: int, execution: ToolExecution) -> int:
        await asyncio.sleep(0)
        return a * 2

    assert props_of(f) == {"a": {"type": "integer"}}
    result = bind_to_signature(f)({"a": 2}, None)
    assert asyncio.iscoroutine(result)
    assert await result == 4


def test_methods_and_partials() -> None:
    class Tools:
        def search(self, q: str, n: int = 1) -> tuple[str, int]:
            """Search for q."""
            return q, n

        def __call__(self, z: bool) -> bool:
            return z

    tools = Tools()
    assert props_of(tools.search) == {
        "q": {"type": "string"},
        "n": {"type": "integer", "default": 1},
    }
    assert bind_to_signature(tools.search)({"q": "x"}, None) == ("x", 1)
    assert docstring_summary(tools.search) == "Search for q."
    part = functools.partial(tools.search, n=3)
    assert bind_to_signature(part)({"q": "y"}, None) == ("y", 3)
    assert props_of(tools) == {"z": {"type": "boolean"}}
    assert bind_to_signature(tools)({"z": True}, None) is True


# -- the SchemaSpec projection ---------------------------------------------------


def test_spec_from_signature_projects_into_the_dsl() -> None:
    def f(q: str, n: int, p: Point, mode: Literal["a", "b"] = "a") -> None: ...

    spec = spec_from_signature(f)
    assert all(isinstance(v, SchemaProp) for v in spec.values())
    assert check_spec(spec, tool_name="f") == spec
    assert spec["n"].type == "number"
    assert spec["mode"].enum == ("a", "b") and spec["mode"].default == "a"
    assert spec["q"].default is ABSENT
    assert validate_args(spec, {"q": "x", "n": 1, "p": {"x": 1}}) == []
    assert validate_args(spec, {"n": 1, "p": {"y": 1}, "mode": "c"}) == [
        'missing required property "q"',
        'missing required property "p.x"',
        '"mode" must be one of ["a","b"]',
    ]


def test_spec_from_signature_refuses_what_the_dsl_cannot_write() -> None:
    def f(x: int | str) -> None: ...

    with pytest.raises(ToolDefinitionError) as info:
        spec_from_signature(f)
    assert str(info.value) == (
        '@tool f(): parameter "x" has a type the SchemaSpec DSL cannot write; '
        "@tool describes it in full JSON Schema"
    )


def test_collections_abc_mapping_is_accepted() -> None:
    def f(m: collections.abc.Mapping[str, bool]) -> Any:
        return m

    assert bind_to_signature(f)({"m": {"a": True}}, None) == {"a": True}


def test_undeclared_keys_never_reach_the_json_parser() -> None:
    # A datetime makes the tool validate from JSON text; a 300-deep extra key
    # would exceed the parser's depth limit, but extra keys are ignored.
    def f(when: datetime.date) -> str:
        return when.isoformat()

    deep: Any = ["leaf"]
    for _ in range(300):
        deep = [deep]
    assert bind_to_signature(f)({"when": "2024-01-02", "deep": deep}, None) == (
        "2024-01-02"
    )


def test_int_literals_and_int_enums_refuse_booleans() -> None:
    def f(n: Literal[1, 2], level: Level = Level.LOW) -> Any:
        return n, level

    assert violations(f, {"n": True, "level": False}) == (
        '"n" must be one of [1,2]',
        '"level" must be one of [1,2]',
    )
    assert bind_to_signature(f)({"n": 2.0, "level": 2}, None) == (2, Level.HIGH)
