"""Property: a signature tool's exported schema and its runtime agree.

Over generated signatures of the types signature tools accept (times,
dates, durations, UUIDs, decimals, paths, enums, ``IntEnum``, ``Literal``
of ints, sets, tuples, unions, ``X | None``, bounded ``Field`` numbers,
patterns, dataclasses, parameters with defaults) and generated argument
objects, an object is valid under the exported JSON Schema, **with
``format`` asserted by jsonschema's own format checker**, exactly when the
tool accepts it. Strings for fields with a format are drawn from well-formed
values of every advertised form and from near misses models send (a Unix
time in digits, ``20260301``, an offset without its colon, a UUID without
hyphens, ``1 day``). Everything else is arbitrary JSON, ``null`` included
(refused for a parameter whose default is not ``None``, as its schema says),
with no newline in strings (Python's ``re``, which jsonschema uses, lets
``$`` match before a final newline; JSON Schema's ECMA-262 patterns and
pydantic do not). Every emitted default is valid under its own property
schema.

One gap is known and pinned below: an offset-less datetime whose day is
past its month's end (``2023-02-29T10:00``) matches the advertised pattern,
which cannot count days per month, and the tool refuses it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import inspect
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal
from uuid import UUID

import jsonschema
import pytest
from hypothesis import assume, given, settings
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
_whole_floats = st.integers(-100, 100).map(float)
_moments = st.datetimes(
    min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)
)
_zones = st.sampled_from(["Z", "z", "+01:00", "-05:30", "+00:00"])
_datetimes = st.one_of(
    _moments.map(lambda d: d.replace(microsecond=0).isoformat()),  # naive
    _moments.map(lambda d: d.isoformat(timespec="minutes")),  # no seconds
    _moments.map(lambda d: d.isoformat(sep=" ")),
    st.tuples(_moments, _zones).map(lambda p: p[0].isoformat() + p[1]),
    st.dates().map(lambda d: d.isoformat()),  # a date alone: midnight
)
_times = st.one_of(
    st.times().map(lambda t: t.isoformat()),
    st.times().map(lambda t: t.isoformat(timespec="minutes")),
    st.tuples(st.times(), _zones).map(lambda p: p[0].isoformat() + p[1]),
)
_durations = st.sampled_from(
    ["P1D", "PT1H", "PT0.5S", "P2W", "-P1DT2H", "P1Y2M3DT4H5M6S", "P0.5D", "PT90M"]
)
_uuids = st.uuids().map(str)
_decimals = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.integers(-999, 999),
    st.floats(-1e6, 1e6),
)
_near_misses = st.sampled_from(
    [
        "1700000000",
        "20260301",
        "2026-03-01T09:30:00+0100",
        "2026-13-01",
        "2026-02-30",
        "2026-03-01T24:00:00Z",
        "2026-03-01T09:30:60Z",
        "2026-03-01T09",
        "09:30:60",
        "0930",
        "1 day",
        "10:00:00",
        "P1DT",
        "P",
        "12345678123456781234567812345678",
        "{12345678-1234-5678-1234-567812345678}",
        "NaN",
        "1_000",
        "twelve",
        "",
    ]
)
_strings_or_json = st.one_of(_near_misses, _json)

# (annotation, good values, wrong values) - wrong values may still be valid.
MENU: tuple[tuple[Any, st.SearchStrategy[Any], st.SearchStrategy[Any]], ...] = (
    (int, st.one_of(st.integers(-(2**40), 2**40), _whole_floats), _json),
    (float, st.floats(-1e6, 1e6), _json),
    (str, st.text(max_size=5), _json),
    (bool, st.booleans(), _json),
    (dt.datetime, _datetimes, _strings_or_json),
    (dt.datetime | None, st.one_of(st.none(), _datetimes), _strings_or_json),
    (dt.date, st.dates().map(lambda d: d.isoformat()), _strings_or_json),
    (dt.time, _times, _strings_or_json),
    (dt.timedelta, _durations, _strings_or_json),
    (UUID, _uuids, _strings_or_json),
    (Decimal, _decimals, _strings_or_json),
    (int | None, st.one_of(st.none(), st.integers()), _json),
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


# Python defaults for some annotations: such a parameter may also be absent.
DEFAULTS: dict[Any, Any] = {
    int: 3,
    str: "x",
    bool: False,
    dt.datetime: dt.datetime(2024, 1, 1, 9, 30),
    dt.datetime | None: None,
    dt.timedelta: dt.timedelta(hours=1),
    Path: Path("data"),
    Agg: Agg.SUM,
    int | None: 5,
}


@st.composite
def cases(draw: st.DrawFn) -> tuple[Any, dict[str, Any]]:
    picks = draw(st.lists(st.integers(0, len(MENU) - 1), max_size=4))
    params = []
    args: dict[str, Any] = {}
    for i, pick in enumerate(picks):
        annotation, good, wrong = MENU[pick]
        name = f"p{i}"
        default = inspect.Parameter.empty
        if annotation in DEFAULTS and draw(st.booleans()):
            default = DEFAULTS[annotation]
        params.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=annotation,
                default=default,
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


def _with_formats(schema: Any) -> jsonschema.Draft202012Validator:
    checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
    return jsonschema.Draft202012Validator(schema, format_checker=checker)


def _past_month_end(value: object) -> bool:
    """An offset-less datetime string on a day its month does not have."""
    if not isinstance(value, str) or len(value) < 16 or value[10] not in "Tt ":
        return False
    try:
        dt.date.fromisoformat(value[:10])
    except ValueError:
        return value[8:10] in ("29", "30", "31")
    return False


@settings(max_examples=300)
@given(case=cases())
def test_schema_valid_exactly_when_the_tool_accepts(
    case: tuple[Any, dict[str, Any]],
) -> None:
    body, args = case
    definition = tool(name="t", description="property")(body)
    schema = definition.parameters
    jsonschema.Draft202012Validator.check_schema(schema)
    schema_ok = _with_formats(schema).is_valid(args)
    assume(not any(_past_month_end(v) for v in args.values()))  # the known gap
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


def test_the_one_known_gap_is_a_day_past_the_month_end() -> None:
    def since(when: dt.datetime) -> str:
        return when.isoformat()

    definition = tool(since)
    validator = _with_formats(definition.parameters)
    for text in ("2023-02-29T10:00", "2024-04-31 10:00:00"):
        assert validator.is_valid({"when": text})
        with pytest.raises(ToolArgsError):
            definition.execute({"when": text}, None)
    for text in ("2023-02-29T10:00Z", "2023-02-29"):  # with a format: agreed
        assert not validator.is_valid({"when": text})
        with pytest.raises(ToolArgsError):
            definition.execute({"when": text}, None)
