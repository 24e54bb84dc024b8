"""Tables and arrays a tool returns, as bounded, exact JSON data.

A data scientist's tool returns a pandas ``DataFrame``; ``str(df)`` is
pandas' display, cut in the middle, with ``NaN`` and dtypes lost. This
module writes such values as JSON in one form, whichever door the call
came through, and only for libraries already imported (a value of a
library that is not imported cannot exist, so none is ever imported here):

- **a table** (pandas ``DataFrame``, ``Series``, ``Index``; polars
  ``DataFrame``, ``Series``; pyarrow ``Table``, ``RecordBatch``, ``Array``,
  ``ChunkedArray``) is ``{"columns": [...], "data": [[row], ...], "rows": N}``:
  a list of column names, the rows as lists, and how many rows there are.
  When ``N`` is more than the registry's ``max_result_rows``, only the
  first rows are written, and ``"shown_rows"`` says how many. A pandas
  index that carries meaning (named, or not the default ``0..n-1``) comes
  first as its own column(s), whose names ``"index"`` lists; a ``Series``
  is one column named by its name (else ``"value"``);
- **a numpy array** is its nested lists (``np.array([1, 2])`` is
  ``[1,2]``); one longer than ``max_result_rows`` along its first axis is
  ``{"shape": [...], "data": [first rows], "shown_rows": n}``;
- **a numpy scalar** is the Python number, bool or ISO 8601 string.

Every value is exact: ``NaN``, ``NaT``, ``None`` and ``pd.NA`` are
``null`` (so are infinities, as everywhere in dsh_nb's JSON), datetimes
and timedeltas are ISO 8601 (to the nanosecond), integers keep every
digit (JSON numbers have no 2^53 limit; Python writes them whole), a
categorical is its values, and anything else is written as pydantic
writes it, else its ``str()``.
"""

from __future__ import annotations

import datetime as dt
import math
import sys
from collections.abc import Callable
from typing import Any, Final

from dsh_nb.tools.audit.resultsize import MAX_RESULT_ROWS

__all__ = [
    "TABLE_SCHEMA",
    "is_tabular",
    "schema_for",
    "tabular_json",
]

# (module, class name) -> what the class is.
_TABLES: Final = {
    ("pandas", "DataFrame"),
    ("pandas", "Series"),
    ("polars", "DataFrame"),
    ("polars", "Series"),
    ("pyarrow", "Table"),
    ("pyarrow", "RecordBatch"),
    ("pyarrow", "ChunkedArray"),
}
_LIBRARIES: Final = frozenset({"pandas", "numpy", "polars", "pyarrow"})

TABLE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "columns": {"type": "array", "description": "the column names"},
        "data": {
            "type": "array",
            "items": {"type": "array"},
            "description": "the shown rows, each a list in column order",
        },
        "rows": {"type": "integer", "description": "how many rows there are"},
        "shown_rows": {
            "type": "integer",
            "description": "how many rows are shown, when fewer than rows",
        },
        "index": {
            "type": "array",
            "description": "the leading columns that are the table's index",
        },
    },
    "required": ["columns", "data", "rows"],
}
"""The output schema of a ``-> pd.DataFrame`` (or any table) tool.

A DataFrame's columns are only known when it is returned, so the schema
describes the form every table takes, not its columns."""


def _kind(cls: type) -> tuple[str, str]:
    return cls.__module__.split(".")[0], cls.__name__


def is_tabular(value: object) -> bool:
    """Whether ``value`` is a table, an array or a numpy scalar we convert."""
    module, name = _kind(type(value))
    if module not in _LIBRARIES:
        return False
    if (module, name) in _TABLES:
        return True
    if module == "pandas":
        return name.endswith("Index")
    if module == "pyarrow":
        return name.endswith("Array")
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, (np.ndarray, np.generic))


def schema_for(hint: Any) -> dict[str, Any] | None:
    """The output schema of a tabular return annotation, or None."""
    import typing

    cls = typing.get_origin(hint) or hint
    if not isinstance(cls, type):
        return None
    module, name = _kind(cls)
    if (module, name) in _TABLES or (module == "pandas" and name.endswith("Index")):
        return TABLE_SCHEMA
    return None


def tabular_json(value: Any, max_rows: int | None = None) -> Any:
    """``value`` (see :func:`is_tabular`) as JSON data, cut to ``max_rows``.

    ``max_rows`` defaults to the running call's registry's setting.
    """
    rows = MAX_RESULT_ROWS.get() if max_rows is None else max_rows
    module, name = _kind(type(value))
    if module == "pandas":
        return _pandas(value, name, rows)
    if module == "polars":
        return _polars(value, name, rows)
    if module == "pyarrow":
        return _pyarrow(value, name, rows)
    if getattr(value, "ndim", 0) == 0:
        return cell(value)
    return _array(value, rows)


def _table(
    columns: list[Any], data: list[list[Any]], total: int, index: list[Any]
) -> dict[str, Any]:
    out: dict[str, Any] = {"columns": [_label(c) for c in columns], "data": data}
    out["rows"] = total
    if len(data) < total:
        out["shown_rows"] = len(data)
    if index:
        out["index"] = [_label(c) for c in index]
    return out


def _rows(columns: list[list[Any]], count: int) -> list[list[Any]]:
    """Column lists turned into ``count`` row lists, each value made exact."""
    if not columns:
        return [[] for _ in range(count)]
    cells = [[cell(v) for v in c] for c in columns]
    return [list(row) for row in zip(*cells, strict=True)]


def _pandas(value: Any, name: str, max_rows: int) -> Any:
    pd = sys.modules["pandas"]
    if name.endswith("Index"):
        value = value.to_frame(index=False, name=_series_name(value.names))
        name = "DataFrame"
    elif name == "Series":
        value = value.to_frame(name=_series_name([value.name]))
    total = len(value)
    head = value.iloc[:max_rows]
    index = head.index
    meaningful = any(n is not None for n in index.names) or not (
        isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    )
    names: list[Any] = []
    columns: list[list[Any]] = []
    if meaningful:
        names = [
            n if n is not None else ("index" if index.nlevels == 1 else f"level_{i}")
            for i, n in enumerate(index.names)
        ]
        columns = [index.get_level_values(i).tolist() for i in range(index.nlevels)]
    columns += [head.iloc[:, i].tolist() for i in range(head.shape[1])]
    return _table(names + list(head.columns), _rows(columns, len(head)), total, names)


def _series_name(names: list[Any]) -> Any:
    return names[0] if len(names) == 1 and names[0] is not None else "value"


def _polars(value: Any, name: str, max_rows: int) -> Any:
    if name == "Series":
        value = value.to_frame(name=value.name or "value")
    head = value.head(max_rows)
    columns = [head.get_column(c).to_list() for c in head.columns]
    return _table(list(head.columns), _rows(columns, head.height), value.height, [])


def _pyarrow(value: Any, name: str, max_rows: int) -> Any:
    if name in ("Table", "RecordBatch"):
        head = value.slice(0, max_rows)
        columns = [head.column(i).to_pylist() for i in range(head.num_columns)]
        return _table(
            list(head.column_names), _rows(columns, head.num_rows), value.num_rows, []
        )
    head = value.slice(0, max_rows)
    return _table(["value"], _rows([head.to_pylist()], len(head)), len(value), [])


def _array(value: Any, max_rows: int) -> Any:
    np = sys.modules["numpy"]
    head = value[:max_rows]
    if head.dtype.kind == "M":
        data: Any = _nested(np.datetime_as_string(head).tolist(), _nat_text)
    elif head.dtype.kind == "m":
        data = _nested(head.tolist(), _timedelta_ns(head))
    else:
        data = _nested(head.tolist(), cell)
    if value.shape[0] <= max_rows:
        return data
    return {"shape": list(value.shape), "data": data, "shown_rows": max_rows}


def _nat_text(text: Any) -> Any:
    return None if text == "NaT" else text


def _timedelta_ns(head: Any) -> Callable[[Any], Any]:
    """A timedelta64 array's values: ints of its unit, written as ISO 8601."""
    import numpy as np

    unit = np.datetime_data(head.dtype)[0]
    scale = {"D": 86_400 * 10**9, "h": 3_600 * 10**9, "m": 60 * 10**9}.get(unit)
    scale = scale or {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}.get(unit, 0)

    def one(v: Any) -> Any:
        if isinstance(v, dt.timedelta):
            return _duration(
                (v.days * 86_400 + v.seconds) * 10**9 + v.microseconds * 1000
            )
        if type(v) is int and scale:
            return None if v == -(2**63) else _duration(v * scale)
        return cell(v)

    return one


def _nested(data: Any, each: Callable[[Any], Any]) -> Any:
    if isinstance(data, list):
        return [_nested(v, each) for v in data]
    return each(data)


def _label(label: Any) -> Any:
    """A column name as JSON: a str or int as it is, a tuple as a list."""
    if type(label) in (str, int):
        return label
    if isinstance(label, tuple):
        return [_label(v) for v in label]
    shown = cell(label)
    return shown if isinstance(shown, (str, int, float)) else str(label)


def _duration(ns: int) -> str:
    """Nanoseconds as an ISO 8601 duration, exact (pydantic's form to the ns)."""
    sign = "-" if ns < 0 else ""
    days, rest = divmod(abs(ns), 86_400 * 10**9)
    seconds, frac = divmod(rest, 10**9)
    tail = f".{frac:09d}".rstrip("0") if frac else ""
    day = f"{days}D" if days else ""
    time = f"T{seconds}{tail}S" if seconds or frac or not days else ""
    return f"{sign}P{day}{time}"


def cell(value: Any) -> Any:
    """One value of a table as exact JSON data (see the module's rules)."""
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    module, name = _kind(kind)
    if name in ("NaTType", "NAType") or (module == "pandas" and value is None):
        return None
    if module == "pandas" and name == "Timedelta":
        return _duration(value.value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _duration(
            (value.days * 86_400 + value.seconds) * 10**9 + value.microseconds * 1000
        )
    if module == "numpy":
        np = sys.modules["numpy"]
        if isinstance(value, np.datetime64):
            return _nat_text(str(np.datetime_as_string(value)))
        if isinstance(value, np.timedelta64):
            return _timedelta_ns(value.reshape(1))(value.astype("int64").item())
        if callable(getattr(value, "item", None)):
            return cell(value.item())
    if is_tabular(value):
        return tabular_json(value)
    from pydantic_core import to_jsonable_python

    try:
        return to_jsonable_python(value, fallback=_inner, inf_nan_mode="null")
    except (ValueError, RecursionError, TypeError):
        return str(value)


def _inner(value: Any) -> Any:
    if is_tabular(value) or type(value).__name__ in ("NaTType", "NAType"):
        return cell(value)
    return str(value)
