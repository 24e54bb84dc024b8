"""Property: a signature tool's exported schema and its runtime agree.

Over generated signatures of the types issue 11 lists (times, paths, enums,
``IntEnum``, ``Literal`` of ints, sets, tuples, unions, bounded ``Field``
numbers, patterns, dataclasses) and generated argument objects, an object
is valid under the exported JSON Schema exactly when the tool accepts it.
Strings for fields with a ``format`` are always well formed (JSON Schema
treats formats as annotations, so an ill-formed one is schema-valid but
refused, by design); everything else is arbitrary JSON, with no newline in
strings (Python's ``re``, which jsonschema uses, lets ``$`` match before a
final newline; JSON Schema's ECMA-262 patterns and pydantic do not). Every
emitted default is valid under its own property schema.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import inspect
from pathlib import Path
from typing import Annotated, Any, Literal

import jsonschema
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field

from dsh_nb.tools.definition import tool
from dsh_nb.tools.errors import ToolArgsError


class Agg(enum.Enum):
    MEAN = "mean"
    SUM = "sum"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: float
    y: int = 0


_text = st.text(st.characters(blacklist_characters="\n"), max_size=4)
_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False, width=32).filter(
        lambda f: not (f == 0 and str(f).startswith("-"))
    ),
    _text,
)
_json = st.recursive(
    _json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(_text, inner, max_size=3),
    ),
    max_leaves=6,
)
_not_strings = _json.filter(lambda v: not isinstance(v, str))
_whole_floats = st.integers(-100, 100).map(float)
_datetimes = st.datetimes(
    min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)
).map(lambda d: d.replace(microsecond=0).isoformat())

# (annotation, good values, wrong values) - wrong values may still be valid.
MENU: tuple[tuple[Any, st.SearchStrategy[Any], st.SearchStrategy[Any]], ...] = (
    (int, st.one_of(st.integers(-(2**40), 2**40), _whole_floats), _json),
    (float, st.floats(-1e6, 1e6), _json),
    (str, st.text(max_size=5), _json),
    (bool, st.booleans(), _json),
    (dt.datetime, _datetimes, _not_strings),
    (dt.date, st.dates().map(lambda d: d.isoformat()), _not_strings),
    (Path, st.text(max_size=5).filter(lambda s: "\x00" not in s), _json),
    (Agg, st.sampled_from(["mean", "sum"]), _json),
    (Level, st.sampled_from([1, 2, 1.0]), _json),
    (Literal[1, 2, 3], st.sampled_from([1, 2, 3]), _json),
    (Literal["a", 1], st.sampled_from(["a", 1]), _json),
    (set[int], st.lists(st.integers(-5, 5), max_size=4), _json),
    (tuple[int, str], st.tuples(st.integers(), st.text(max_size=3)).map(list), _json),
    (int | str, st.one_of(st.integers(), st.text(max_size=3)), _json),
    (list[float] | None, st.one_of(st.none(), st.lists(st.floats(-9, 9))), _json),
    (dict[str, int], st.dictionaries(st.text(max_size=3), st.integers()), _json),
    (Annotated[int, Field(ge=0, le=10)], st.integers(0, 10), _json),
    (Annotated[float, Field(gt=-1, lt=1)], st.floats(-0.9, 0.9), _json),
    (
        Annotated[str, Field(pattern=r"^[a-z]+$")],
        st.from_regex(r"[a-z]+", fullmatch=True),
        _json,
    ),
    (
        Annotated[list[int], Field(min_length=1, max_length=3)],
        st.lists(st.integers(), min_size=1, max_size=3),
        _json,
    ),
    (
        Point,
        st.fixed_dictionaries(
            {"x": st.floats(-9, 9)}, optional={"y": st.integers(-9, 9)}
        ),
        st.one_of(_json, st.fixed_dictionaries({"x": _json, "y": _json})),
    ),
)


@st.composite
def cases(draw: st.DrawFn) -> tuple[Any, dict[str, Any]]:
    picks = draw(st.lists(st.integers(0, len(MENU) - 1), max_size=4))
    params = []
    args: dict[str, Any] = {}
    for i, pick in enumerate(picks):
        annotation, good, wrong = MENU[pick]
        name = f"p{i}"
        params.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation
            )
        )
        choice = draw(st.integers(0, 5))
        if choice < 4:
            args[name] = draw(good)
        elif choice == 4:
            args[name] = draw(wrong)
    if draw(st.booleans()):
        args["extra"] = draw(_json)

    def body(**kwargs: Any) -> str:
        return "ok"

    body.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    body.__annotations__ = {p.name: p.annotation for p in params}
    return body, args


@given(case=cases())
def test_schema_valid_exactly_when_the_tool_accepts(
    case: tuple[Any, dict[str, Any]],
) -> None:
    body, args = case
    definition = tool(name="t", description="property")(body)
    schema = definition.parameters
    jsonschema.Draft202012Validator.check_schema(schema)
    schema_ok = jsonschema.Draft202012Validator(schema).is_valid(args)
    try:
        definition.execute(args, None)
    except ToolArgsError as exc:
        assert not schema_ok, (args, exc.violations, schema)
        assert exc.violations  # never an empty refusal
    else:
        assert schema_ok, (args, schema)


@given(
    default=st.sampled_from(
        [
            (int, 3),
            (dt.datetime, dt.datetime(2024, 1, 2, 3, 4)),
            (dt.timedelta, dt.timedelta(hours=5)),
            (Path, Path("data") / "x.csv"),
            (Agg, Agg.SUM),
            (Level, Level.HIGH),
            (set[str], {"b", "a"}),
            (tuple[int, int], (1, 2)),
            (Point, Point(x=1.5)),
            (int | None, None),
            (Annotated[int, Field(ge=1)], 1),
        ]
    )
)
def test_every_emitted_default_is_valid_under_its_schema(
    default: tuple[Any, Any],
) -> None:
    annotation, value = default

    def body(x: Any = value) -> str:
        return "ok"

    body.__annotations__ = {"x": annotation}
    definition = tool(body)
    prop = definition.parameters["properties"]["x"]
    assert jsonschema.Draft202012Validator(prop).is_valid(prop["default"]), prop
    assert definition.execute({"x": prop["default"]}, None) == "ok"
