"""Tables, arrays, iterators and odd numbers a signature tool returns.

Each rule of ``dsh_nb.tools.signature.tabular`` and ``_prepare`` (and of
docs/signature-tools.md's tabular section) is checked on what a model
reads of a result from ``ToolRegistry.execute`` (``result_text``), and a
property test round-trips random DataFrames through that text.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_nb.tools import ToolExecutionInput, ToolRegistry, tool
from dsh_nb.tools.modeltext import result_text

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")
hpd = pytest.importorskip("hypothesis.extra.pandas")


async def call(func: Any, registry: ToolRegistry | None = None, **args: Any) -> Any:
    registry = ToolRegistry(sync_tools="thread") if registry is None else registry
    definition = tool(func)
    remove = registry.register(definition)
    run = ToolExecutionInput(call_id="c1", name=definition.name, arguments=args)
    try:
        result = await registry.execute(run)
    finally:
        remove()
    assert not result.is_error, result.content
    return definition, result


async def model_json(func: Any, registry: ToolRegistry | None = None) -> Any:
    return json.loads(result_text((await call(func, registry))[1]))


def returning(value: Any, annotation: Any = None) -> Any:
    def get():  # type: ignore[no-untyped-def]
        """Return the value."""
        return value

    if annotation is not None:
        get.__annotations__ = {"return": annotation}
    return get


# -- pandas -------------------------------------------------------------------


async def test_a_dataframe_is_columns_rows_and_a_count() -> None:
    frame = pd.DataFrame(
        {
            "x": [1.5, None, 3.0],
            "when": pd.to_datetime(
                ["2026-03-01", None, "2026-03-02 00:00:00.000000001"], format="ISO8601"
            ),
            "kind": pd.Categorical(["a", None, "b"]),
            "big": [2**63 - 1, 2**53 + 1, -(2**63)],
            "n": pd.array([1, None, 3], dtype="Int64"),
            "gap": pd.to_timedelta([1, None, 90061], unit="s"),
        }
    )
    assert await model_json(returning(frame)) == {
        "columns": ["x", "when", "kind", "big", "n", "gap"],
        "data": [
            [1.5, "2026-03-01T00:00:00", "a", 2**63 - 1, 1, "PT1S"],
            [None, None, None, 2**53 + 1, None, None],
            [3.0, "2026-03-02T00:00:00.000000001", "b", -(2**63), 3, "P1DT3661S"],
        ],
        "rows": 3,
    }


async def test_rows_past_the_bound_are_cut_and_the_json_says_so() -> None:
    registry = ToolRegistry()
    registry.max_result_rows = 5
    frame = pd.DataFrame({"i": range(1000)})
    got = await model_json(returning(frame), registry)
    assert got["data"] == [[0], [1], [2], [3], [4]]
    assert (got["rows"], got["shown_rows"]) == (1000, 5)
    default = await model_json(returning(frame))
    assert (len(default["data"]), default["shown_rows"]) == (100, 100)


def test_max_result_rows_refuses_what_is_not_a_positive_int() -> None:
    registry = ToolRegistry()
    for bad in (0, -1, 1.5, "10", True):
        with pytest.raises(ValueError, match="max_result_rows must be a positive"):
            registry.max_result_rows = bad  # type: ignore[assignment]
    assert registry.max_result_rows == 100


async def test_a_meaningful_index_is_kept_as_leading_columns() -> None:
    frame = pd.DataFrame({"price": [1.0, 2.0]}, index=pd.Index(["a", "b"], name="sku"))
    assert await model_json(returning(frame)) == {
        "columns": ["sku", "price"],
        "data": [["a", 1.0], ["b", 2.0]],
        "rows": 2,
        "index": ["sku"],
    }
    counts = pd.Series(["x", "y", "x"]).value_counts()
    got = await model_json(returning(counts))
    assert got["columns"] == ["index", "count"] and got["index"] == ["index"]
    assert got["data"] == [["x", 2], ["y", 1]]
    # a filtered frame's leftover index (0, 2) carries meaning too
    kept = await model_json(returning(pd.DataFrame({"v": [5, 6, 7]}).iloc[[0, 2]]))
    assert kept["data"] == [[0, 5], [2, 7]]


async def test_series_index_and_empty_frames() -> None:
    assert await model_json(returning(pd.Series([1, 2], name="n"))) == {
        "columns": ["n"],
        "data": [[1], [2]],
        "rows": 2,
    }
    assert await model_json(returning(pd.Index([3, 4]))) == {
        "columns": ["value"],
        "data": [[3], [4]],
        "rows": 2,
    }
    assert await model_json(returning(pd.DataFrame())) == {
        "columns": [],
        "data": [],
        "rows": 0,
    }
    assert await model_json(returning(pd.Series([], dtype=float))) == {
        "columns": ["value"],
        "data": [],
        "rows": 0,
    }


async def test_a_dataframe_annotation_is_the_table_output_schema() -> None:
    import jsonschema

    def top(n: int = 2) -> pd.DataFrame:  # type: ignore[name-defined]
        """First rows."""
        return pd.DataFrame({"a": range(10)}).head(n)

    definition, result = await call(top)
    schema = definition.output_schema
    assert schema is not None and schema["required"] == ["columns", "data", "rows"]
    structured = result.meta["structuredContent"]
    jsonschema.validate(structured, schema)
    assert json.loads(result_text(result)) == structured


async def test_a_table_annotation_with_another_value_warns_and_sends_json() -> None:
    def wrong() -> pd.DataFrame:  # type: ignore[name-defined]
        """Not a frame."""
        return [1, 2]  # type: ignore[return-value]

    with pytest.warns(
        UserWarning, match="not the pandas.DataFrame its return annotation"
    ):
        _, result = await call(wrong, ToolRegistry())
    assert result_text(result) == "[1,2]" and "structuredContent" not in (
        result.meta or {}
    )


async def test_a_frame_inside_a_dict_is_the_same_table() -> None:
    frame = pd.DataFrame({"a": [1, None]})
    got = await model_json(returning({"summary": frame, "n": np.int64(2)}))
    assert got == {
        "summary": {"columns": ["a"], "data": [[1.0], [None]], "rows": 2},
        "n": 2,
    }


# -- numpy --------------------------------------------------------------------


async def test_numpy_arrays_are_nested_lists_until_cut() -> None:
    assert await model_json(returning(np.array([[1.5, np.nan], [3, 4]]))) == [
        [1.5, None],
        [3.0, 4.0],
    ]
    stamps = np.array(["2026-03-01T00:00:00.000000001", "NaT"], dtype="datetime64[ns]")
    assert await model_json(returning(stamps)) == [
        "2026-03-01T00:00:00.000000001",
        None,
    ]
    assert await model_json(returning(np.uint64(2**64 - 1))) == 2**64 - 1
    registry = ToolRegistry()
    registry.max_result_rows = 3
    got = await model_json(returning(np.arange(20).reshape(10, 2)), registry)
    assert got == {"shape": [10, 2], "data": [[0, 1], [2, 3], [4, 5]], "shown_rows": 3}


# -- polars and pyarrow, where installed ---------------------------------------


async def test_polars_frames_are_tables() -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"a": [1, None], "t": [dt.date(2026, 3, 1), None]})
    assert await model_json(returning(frame)) == {
        "columns": ["a", "t"],
        "data": [[1, "2026-03-01"], [None, None]],
        "rows": 2,
    }


async def test_pyarrow_tables_are_tables() -> None:
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"a": [1, None], "s": ["x", "y"]})
    assert await model_json(returning(table)) == {
        "columns": ["a", "s"],
        "data": [[1, "x"], [None, "y"]],
        "rows": 2,
    }


def test_no_library_is_imported_for_a_plain_value() -> None:
    from dsh_nb.tools.signature import tabular

    for name in ("polars", "pyarrow"):
        if name not in sys.modules:
            assert not tabular.is_tabular({"a": 1})
            assert name not in sys.modules


# -- iterators, big lists and numbers dsh_nb does not know ----------------------


async def test_an_endless_iterator_is_read_only_to_the_bound() -> None:
    registry = ToolRegistry(sync_tools="thread")
    registry.max_result_rows = 4
    got = await model_json(returning(itertools.count()), registry)
    assert got == {"data": [0, 1, 2, 3], "shown_rows": 4, "more": True}
    nested = await model_json(returning({"xs": itertools.count(5)}), registry)
    assert nested == {"xs": {"data": [5, 6, 7, 8], "shown_rows": 4, "more": True}}
    # one that ends in time is the list of its items
    assert await model_json(returning(iter(range(3))), registry) == [0, 1, 2]


async def test_an_endless_iterator_in_an_annotated_tool() -> None:
    def gen() -> list[int]:
        """Count."""
        return itertools.count()  # type: ignore[return-value]

    registry = ToolRegistry()
    registry.max_result_rows = 2
    with pytest.warns(UserWarning, match="refuses"):
        _, result = await call(gen, registry)
    assert json.loads(result_text(result)) == {
        "data": [0, 1],
        "shown_rows": 2,
        "more": True,
    }


async def test_a_big_list_is_json_without_a_walk_of_every_item() -> None:
    big = list(range(2_000_000))
    text = result_text((await call(returning(big)))[1])
    assert text.startswith("[0,1,2,") and text.endswith(",1999999]")


async def test_an_unknown_number_type_is_sent_as_its_own_str() -> None:
    mpmath = pytest.importorskip("mpmath")

    def logarithm() -> dict[str, float]:
        """BFCL's math API: it sets mp.dps to the precision asked for."""
        mpmath.mp.dps = 2
        return {"result": mpmath.log(20, 10)}

    before = mpmath.mp.dps
    try:
        value = logarithm()["result"]
        assert str(value) == "1.3" and float(value) != 1.3
        assert await model_json(logarithm) == {"result": 1.3}
        assert await model_json(returning({"r": value})) == {"r": 1.3}
        mpmath.mp.dps = 30
        pi = +mpmath.pi
        assert await model_json(returning([pi])) == [str(pi)]  # more than a float
        assert await model_json(returning(mpmath.mpf(12))) == 12.0
    finally:
        mpmath.mp.dps = before


# -- the property: random frames through the model's JSON and back -------------

_FRAMES = hpd.data_frames(
    columns=[
        hpd.column("f", dtype=float, elements=st.floats(allow_infinity=False)),
        hpd.column("i", dtype="int64"),
        hpd.column("u", dtype="uint64"),
        hpd.column(
            "t",
            dtype=object,
            elements=st.one_of(
                st.none(),
                st.datetimes(
                    min_value=dt.datetime(1700, 1, 1), max_value=dt.datetime(2250, 1, 1)
                ),
            ),
        ),
        hpd.column("ns", dtype="int64", elements=st.integers(0, 999)),
        hpd.column("s", dtype=object, elements=st.one_of(st.none(), st.text())),
        hpd.column("c", dtype=object, elements=st.sampled_from(["a", "b", None])),
    ],
    index=hpd.range_indexes(max_size=30),
)


@given(_FRAMES)
def test_random_frames_round_trip_through_the_model_json(frame: Any) -> None:
    import asyncio

    frame["t"] = pd.to_datetime(frame["t"]) + pd.to_timedelta(frame.pop("ns"), "ns")
    frame["c"] = frame["c"].astype("category")
    got = asyncio.run(model_json(returning(frame)))
    assert got["rows"] == len(frame) and "shown_rows" not in got
    back = pd.DataFrame(got["data"], columns=got["columns"])
    back = back.reindex(columns=list(frame.columns))  # an empty frame's columns
    back["f"] = back["f"].astype(float)
    back["i"] = back["i"].astype("int64")
    back["u"] = back["u"].astype("uint64")
    back["t"] = pd.to_datetime(back["t"], format="ISO8601").astype(frame["t"].dtype)
    back["s"] = back["s"].astype(object).where(back["s"].notna(), None)
    back["c"] = back["c"].astype(frame["c"].dtype)
    pd.testing.assert_frame_equal(back, frame, check_index_type=False)
