"""Signature-derived schemas: annotations, defaults, docstrings, binding."""

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
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, List, Literal, NewType, Optional, TypedDict, Union

import pytest

from dsh_nb.tools.errors import ToolArgsError, ToolDefinitionError
from dsh_nb.tools.execution import ToolExecution
from dsh_nb.tools.jsonvalue import ABSENT, FrozenDict, snapshot_json
from dsh_nb.tools.schema import (
    SchemaProp,
    check_spec,
    schema_spec_to_json_schema,
    validate_args,
)
from dsh_nb.tools.signature import (
    bind_to_signature,
    docstring_summary,
    spec_from_signature,
)
from dsh_nb.tools.timeout import AbortController, AbortSignal

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:
    from typing_extensions import NotRequired


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


class Number(enum.Enum):
    ONE = 1


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


class Loose(TypedDict, total=False):
    a: str
    b: Annotated[bool, "flag b"]


@dataclasses.dataclass
class Node:
    value: str
    children: list[Node]


def schema_of(func: Callable[..., Any]) -> dict[str, Any]:
    return schema_spec_to_json_schema(spec_from_signature(func))


def props_of(func: Callable[..., Any]) -> dict[str, Any]:
    out: dict[str, Any] = schema_of(func)["properties"]
    return out


def definition_error(func: Callable[..., Any]) -> str:
    with pytest.raises(ToolDefinitionError) as info:
        spec_from_signature(func)
    return str(info.value)


# -- annotation mapping ---------------------------------------------------------


def test_scalars_map_to_dsl_types() -> None:
    def f(s: str, i: int, x: float, b: bool) -> None: ...

    assert schema_of(f) == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "number"},
            "x": {"type": "number"},
            "b": {"type": "boolean"},
        },
        "required": ["s", "i", "x", "b"],
    }


def test_spec_values_are_schema_props_that_pass_check_spec() -> None:
    def f(a: int, tags: list[str], p: Point) -> None: ...

    spec = spec_from_signature(f)
    assert all(isinstance(v, SchemaProp) for v in spec.values())
    assert check_spec(spec, tool_name="f") == spec


@pytest.mark.parametrize(
    "annotation",
    [list[str], List[str], Sequence[str], typing.Sequence[str]],
    ids=["list", "List", "abc.Sequence", "typing.Sequence"],
)
def test_lists_map_to_arrays_with_items(annotation: Any) -> None:
    def f(tags): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"tags": annotation}
    assert props_of(f) == {"tags": {"type": "array", "items": {"type": "string"}}}


@pytest.mark.parametrize(
    "annotation", [list, List, collections.abc.Sequence, list[Any]]
)
def test_bare_list_maps_to_array_without_items(annotation: Any) -> None:
    def f(xs): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"xs": annotation}
    assert props_of(f) == {"xs": {"type": "array"}}


@pytest.mark.parametrize(
    "annotation",
    [dict, dict[str, Any], dict[str, int], Mapping, Mapping[str, str], typing.Dict],
)
def test_dicts_map_to_objects(annotation: Any) -> None:
    def f(d): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"d": annotation}
    assert props_of(f) == {"d": {"type": "object"}}


def test_nested_list_of_lists() -> None:
    def f(grid: list[list[int]]) -> None: ...

    assert props_of(f)["grid"] == {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}},
    }


def test_typed_dict_maps_to_object_with_required_keys() -> None:
    def f(opts: Options, loose: Loose) -> None: ...

    props = props_of(f)
    assert props["opts"] == {
        "type": "object",
        "properties": {
            "depth": {"type": "number"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
        },
        "required": ["depth"],
    }
    assert props["loose"] == {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "boolean", "description": "flag b"},
        },
    }


def test_dataclass_maps_to_object_with_required_fields() -> None:
    def f(p: Point) -> None: ...

    assert props_of(f)["p"] == {
        "type": "object",
        "properties": {
            "x": {"type": "number", "description": "horizontal position"},
            "y": {"type": "number", "default": 0.0},
            "label": {"type": "string", "default": None},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["x"],
    }


def test_nested_dataclass_in_list() -> None:
    def f(shape: Shape) -> None: ...

    shape = props_of(f)["shape"]
    assert shape["required"] == ["name", "points"]
    assert shape["properties"]["points"]["items"]["required"] == ["x"]


def test_literal_maps_to_string_enum() -> None:
    def f(mode: Literal["a", "b"]) -> None: ...

    assert props_of(f) == {"mode": {"type": "string", "enum": ["a", "b"]}}


def test_str_enum_maps_to_string_enum_and_default_to_its_value() -> None:
    def f(color: Color = Color.GREEN) -> None: ...

    assert props_of(f) == {
        "color": {"type": "string", "enum": ["red", "green"], "default": "green"}
    }


@pytest.mark.parametrize(
    "annotation",
    [Optional[int], Union[int, None], int | None, Union[None, int]],
    ids=["Optional", "Union", "pipe", "None-first"],
)
def test_optional_is_not_required(annotation: Any) -> None:
    def f(n): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"n": annotation}
    assert schema_of(f) == {"type": "object", "properties": {"n": {"type": "number"}}}


def test_defaults_make_optional_and_are_emitted() -> None:
    def f(
        a: int = 3,
        b: str = "",
        c: bool = False,
        d: list[int] = [1, 2],  # noqa: B006
        e: str | None = None,
        g: dict[str, Any] = {"k": [1]},  # noqa: B006
    ) -> None: ...

    assert props_of(f) == {
        "a": {"type": "number", "default": 3},
        "b": {"type": "string", "default": ""},
        "c": {"type": "boolean", "default": False},
        "d": {"type": "array", "default": [1, 2], "items": {"type": "number"}},
        "e": {"type": "string", "default": None},
        "g": {"type": "object", "default": {"k": [1]}},
    }
    assert "required" not in schema_of(f)


def test_emitted_default_is_a_copy() -> None:
    default = [1]

    def f(d: list[int] = default) -> None: ...

    spec = spec_from_signature(f)
    default.append(2)
    assert spec["d"].default == [1]


def test_annotated_description_and_it_beats_the_docstring() -> None:
    def f(
        q: Annotated[str, "the query"],
        n: Annotated[int, 42, "count"] = 1,
        o: Annotated[Optional[int], "maybe"] = None,
        p: Optional[Annotated[int, "inner"]] = None,
    ) -> None:
        """Do it.

        Args:
            q: from the docstring
            n: from the docstring
        """

    props = props_of(f)
    assert props["q"] == {"type": "string", "description": "the query"}
    assert props["n"]["description"] == "count"
    assert props["o"]["description"] == "maybe"
    assert props["p"]["description"] == "inner"


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


@pytest.mark.parametrize("header", ["Arguments:", "Parameters:"])
def test_google_header_variants(header: str) -> None:
    def f(a: str) -> None: ...

    f.__doc__ = f"Summary.\n\n{header}\n    a: The a.\n"
    assert props_of(f)["a"]["description"] == "The a."


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

    def h() -> None:
        pass

    assert docstring_summary(f) == "Search the web for things."
    assert docstring_summary(g) == "One line."
    assert docstring_summary(h) == ""
    assert docstring_summary(functools.partial(f)) == "Search the web for things."


# -- unsupported annotations ----------------------------------------------------

_USE = "use str, int, float, bool, list, dict, a TypedDict, a dataclass or Literal"


def test_unsupported_class_message_names_function_parameter_and_type() -> None:
    def search(when: datetime.datetime) -> None: ...

    assert definition_error(search) == (
        '@tool search(): parameter "when" has unsupported type datetime.datetime; '
        + _USE
    )


@pytest.mark.parametrize(
    ("annotation", "shown"),
    [
        (set[int], "set[int]"),
        (bytes, "bytes"),
        (Callable[[int], int], "collections.abc.Callable[[int], int]"),
        (tuple[int, ...], "tuple[int, ...]"),
        (Any, "typing.Any"),
        (Number, f"{Number.__module__}.Number"),
    ],
)
def test_unsupported_types(annotation: Any, shown: str) -> None:
    def f(x): ...  # type: ignore[no-untyped-def]

    f.__annotations__ = {"x": annotation}
    message = definition_error(f)
    assert message.startswith(f'@tool f(): parameter "x" has unsupported type {shown}')


def test_union_of_two_types() -> None:
    def f(x: int | str) -> None: ...

    assert definition_error(f) == (
        '@tool f(): parameter "x" has unsupported type int | str; '
        "a union is supported only as X | None"
    )


def test_literal_with_non_string_values() -> None:
    def f(x: Literal["a", 1]) -> None: ...

    assert definition_error(f) == (
        "@tool f(): parameter \"x\" has unsupported type typing.Literal['a', 1]; "
        "Literal values must be strings"
    )


def test_dict_with_non_string_keys() -> None:
    def f(x: dict[int, str]) -> None: ...

    assert "JSON object keys are strings" in definition_error(f)


@dataclasses.dataclass
class Event:
    when: datetime.datetime


def test_unsupported_nested_field_names_the_path() -> None:
    def f(events: list[Event]) -> None: ...

    message = definition_error(f)
    assert message.startswith(
        '@tool f(): parameter "events[].when" has unsupported type datetime.datetime'
    )


def test_recursive_dataclass_is_rejected() -> None:
    def f(n: Node) -> None: ...

    assert "recursive types cannot be described" in definition_error(f)


def test_var_positional_is_rejected() -> None:
    def f(*args: int) -> None: ...

    assert definition_error(f) == (
        '@tool f(): parameter "*args" is not supported; declare named parameters'
    )


def test_missing_annotation() -> None:
    def f(x, y: int) -> None: ...  # type: ignore[no-untyped-def]

    assert (
        definition_error(f)
        == f'@tool f(): parameter "x" has no type annotation; {_USE}'
    )


@pytest.mark.parametrize("default", [(1,), {1, 2}, b"x", float("nan"), object()])
def test_non_json_default(default: object) -> None:
    def f(x: list[int] = default) -> None: ...  # type: ignore[assignment]

    message = definition_error(f)
    assert message.startswith(f'@tool f(): parameter "x" has default {default!r}')
    assert "not lossless JSON" in message


def test_unresolvable_string_annotation() -> None:
    def f(x: "Missing") -> None: ...  # type: ignore[name-defined]  # noqa: F821

    message = definition_error(f)
    assert message.startswith("@tool f(): cannot resolve type hints")
    assert "Missing" in message


# -- injection ------------------------------------------------------------------


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
    assert body({"q": "x", "execution": 1, "signal": 2}, execution) == "x"
    assert seen["execution"] is execution
    assert seen["signal"] is signal
    assert body({"q": "y"}, None) == "y"
    assert seen == {"execution": None, "signal": None}


# -- binding --------------------------------------------------------------------


def test_bind_drops_extra_keys_and_keeps_function_defaults() -> None:
    def f(a: str, b: int = 7) -> tuple[str, int]:
        return a, b

    body = bind_to_signature(f)
    assert body({"a": "x", "zzz": 1}, None) == ("x", 7)
    assert body(snapshot_json({"a": "x", "b": 2}), None) == ("x", 2)


def test_bind_passes_extras_to_var_keyword() -> None:
    def f(a: str, **rest: Any) -> dict[str, Any]:
        return {"a": a, **rest}

    body = bind_to_signature(f)
    assert body({"a": "x", "b": 1, "c": [2]}, None) == {"a": "x", "b": 1, "c": [2]}
    assert schema_of(f) == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
    }


def test_bind_fills_none_for_optional_without_default() -> None:
    def f(a: int | None, b: Optional[str]) -> tuple[Any, Any]:
        return a, b

    assert bind_to_signature(f)({}, None) == (None, None)


def test_bind_integer_check() -> None:
    def f(n: int, m: int = 0) -> tuple[int, int]:
        return n, m

    body = bind_to_signature(f)
    result = body({"n": 3.0, "m": 10**30}, None)
    assert result == (3, 10**30)
    assert type(result[0]) is int
    with pytest.raises(ToolArgsError) as info:
        body({"n": 2.5, "m": "x"}, None)
    assert info.value.violations == (
        '"n" must be an integer',
        '"m" must be an integer',
    )
    with pytest.raises(ToolArgsError):
        body({"n": float("inf")}, None)


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
    with pytest.raises(ToolArgsError) as info:
        body({"shape": {"name": "s", "points": [{"x": 1.5}]}, "pts": []}, None)
    assert info.value.violations == ('"shape.points[0].x" must be an integer',)


def test_bind_converts_enums_and_typed_dicts() -> None:
    def f(color: Color, opts: Options, colors: list[Color] = []) -> Any:  # noqa: B006
        return color, opts, colors

    body = bind_to_signature(f)
    color, opts, colors = body(
        {"color": "red", "opts": {"depth": 2.0, "x": 1}, "colors": ["green"]}, None
    )
    assert color is Color.RED
    assert opts == {"depth": 2, "x": 1}
    assert type(opts["depth"]) is int
    assert colors == [Color.GREEN]
    with pytest.raises(ToolArgsError) as info:
        body({"color": "blue", "opts": {"depth": 1}}, None)
    assert info.value.violations == ('"color" must be one of ["red","green"]',)


def test_bind_dict_values_are_converted() -> None:
    def f(counts: dict[str, int], pts: dict[str, Point]) -> Any:
        return counts, pts

    counts, pts = bind_to_signature(f)(
        {"counts": {"a": 1.0}, "pts": {"p": {"x": 1}}}, None
    )
    assert counts == {"a": 1}
    assert pts == {"p": Point(x=1)}
    with pytest.raises(ToolArgsError) as info:
        bind_to_signature(f)({"counts": {"a": 1.5}, "pts": {}}, None)
    assert info.value.violations == ('"counts.a" must be an integer',)


def test_bind_reports_missing_required() -> None:
    def f(a: str) -> str:
        return a

    with pytest.raises(ToolArgsError) as info:
        bind_to_signature(f)({}, None)
    assert info.value.violations == ('missing required property "a"',)


def test_bind_positional_only_parameters() -> None:
    def f(a: str, b: int = 2, /, c: str = "c") -> tuple[str, int, str]:
        return a, b, c

    body = bind_to_signature(f)
    assert body({"a": "x"}, None) == ("x", 2, "c")
    assert body({"a": "x", "b": 5.0, "c": "z"}, None) == ("x", 5, "z")


def test_bind_does_not_copy_args_for_plain_calls() -> None:
    seen: list[Any] = []

    def f(tags: list[str], meta: dict[str, Any]) -> None:
        seen.extend([tags, meta])

    args = snapshot_json({"tags": ["a"], "meta": {"k": 1}})
    bind_to_signature(f)(args, None)
    assert seen[0] is args["tags"]
    assert seen[1] is args["meta"]


async def test_async_functions_return_awaitables() -> None:
    async def f(a: int, execution: ToolExecution) -> int:
        await asyncio.sleep(0)
        return a * 2

    assert props_of(f) == {"a": {"type": "number"}}
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
        "n": {"type": "number", "default": 1},
    }
    assert bind_to_signature(tools.search)({"q": "x"}, None) == ("x", 1)
    assert docstring_summary(tools.search) == "Search for q."
    part = functools.partial(tools.search, n=3)
    assert bind_to_signature(part)({"q": "y"}, None) == ("y", 3)
    assert props_of(tools) == {"z": {"type": "boolean"}}
    assert bind_to_signature(tools)({"z": True}, None) is True


def test_signature_schema_validates_like_the_function_expects() -> None:
    def f(q: str, p: Point, mode: Literal["a", "b"] = "a") -> None: ...

    spec = spec_from_signature(f)
    assert validate_args(spec, {"q": "x", "p": {"x": 1}}) == []
    assert validate_args(spec, {"p": {"y": 1}, "mode": "c"}) == [
        'missing required property "q"',
        'missing required property "p.x"',
        '"mode" must be one of ["a","b"]',
    ]


def test_spec_defaults_are_absent_without_a_default() -> None:
    def f(a: str) -> None: ...

    assert spec_from_signature(f)["a"].default is ABSENT
