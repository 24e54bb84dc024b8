"""A result that is a table, drawn as one: header, rows, and the row count.

A tool's DataFrame reaches the model as JSON in one form
(:mod:`dsh_nb.tools.signature.tabular`: ``{"columns", "data", "rows"}``);
a list of records with the same keys is a table too. A person would rather
look at a table than read either, so the card draws one (numbers
right-aligned, ``null`` an empty cell, "5 of 1,000 rows") with the text the
model read one click away, under it. The labextension's
``tables.ts`` follows the same rules; this is the ``text/html`` card's.
Everything drawn is escaped, and only the card's own tags are used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from dsh_nb.cards.escape import esc
from dsh_nb.cards.markup import BG_ALT, BORDER, CODE_FONT, FG_MUTED, el, pre

__all__ = ["MAX_DRAWN_ROWS", "TableShape", "table_html", "table_of"]

MAX_DRAWN_ROWS: Final = 500
"""Rows a card draws of a list of records; the JSON holds them all."""
_MAX_TEXT: Final = 2_000_000  # a longer text is not parsed for a table
_TABLE_KEYS: Final = frozenset({"columns", "data", "rows", "shown_rows", "index"})
_CELL: Final = f"padding:1px 6px;border-bottom:1px solid {BORDER};text-align:left"
_NUM: Final = f"{_CELL};text-align:right;font-family:{CODE_FONT}"
_HEAD: Final = f"{_CELL};font-weight:600;background:{BG_ALT}"
_SUMMARY: Final = f"cursor:pointer;color:{FG_MUTED};margin:2px 0"


@dataclass(frozen=True, slots=True)
class TableShape:
    """A table read from a result's text: what the card draws."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    total: int
    index: int = 0  # leading columns that are the index

    @property
    def caption(self) -> str:
        """``"5 of 1,000 rows"``, or ``"3 rows"`` when all are shown."""
        noun = "row" if self.total == 1 else "rows"
        if len(self.rows) < self.total:
            return f"{len(self.rows):,} of {self.total:,} {noun}"
        return f"{self.total:,} {noun}"


def _label(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def table_of(text: str) -> TableShape | None:
    """The table ``text`` holds (the tabular form, or same-key records)."""
    if len(text) > _MAX_TEXT or text.lstrip()[:1] not in ("{", "["):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        return _tabular(value)
    if isinstance(value, list):
        return _records(value)
    return None


def _tabular(value: dict[str, Any]) -> TableShape | None:
    columns, data, total = value.get("columns"), value.get("data"), value.get("rows")
    if not (value.keys() <= _TABLE_KEYS and isinstance(columns, list)):
        return None
    if not isinstance(data, list) or type(total) is not int or total < len(data):
        return None
    if not all(isinstance(r, list) and len(r) == len(columns) for r in data):
        return None
    index = value.get("index")
    count = len(index) if isinstance(index, list) else 0
    rows = tuple(tuple(r) for r in data[:MAX_DRAWN_ROWS])
    return TableShape(tuple(_label(c) for c in columns), rows, total, count)


def _records(value: list[Any]) -> TableShape | None:
    if not value or not all(isinstance(r, dict) and r for r in value):
        return None
    keys = list(value[0])
    first = set(keys)
    if any(r.keys() != first for r in value):
        return None
    rows = tuple(tuple(r[k] for k in keys) for r in value[:MAX_DRAWN_ROWS])
    return TableShape(tuple(keys), rows, len(value))


def _cell(value: Any, head: bool = False) -> str:
    if value is None:
        return el("td", "", f"{_CELL};background:{BG_ALT}", "dsh-ToolCard-null")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return el("td", esc(json.dumps(value)), _NUM, "dsh-ToolCard-number")
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return el("td", esc(shown), _HEAD if head else _CELL)


def table_html(shape: TableShape, model_text: str) -> str:
    """The table, its row count, and the model's text folded under it."""
    head = "".join(_cell(c, head=True) for c in shape.columns)
    body = [el("tr", head)]
    for row in shape.rows:
        cells = [
            _cell(v) if i >= shape.index or v is None else _cell(v, head=True)
            for i, v in enumerate(row)
        ]
        body.append(el("tr", "".join(cells)))
    table = el(
        "table",
        el("tbody", "".join(body)),
        "border-collapse:collapse;margin:2px 0;font-size:12px;display:block;"
        "overflow-x:auto;max-height:420px;overflow-y:auto",
        "dsh-ToolCard-table",
    )
    count = el(
        "div", esc(shape.caption), f"color:{FG_MUTED};margin:2px 0", "dsh-ToolCard-rows"
    )
    summary = el("summary", "what the model read", _SUMMARY)
    raw = el("details", summary + pre(esc(model_text)), "", "dsh-ToolCard-modeltext")
    return table + count + raw
