"""A return value made safe and exact to serialise, before pydantic sees it.

pydantic's serialiser reads any iterator to its end: ``itertools.count()``
grows a buffer until the process aborts, in a worker thread nobody can
stop. And its float validation takes any number with ``__float__``, so an
``mpmath.mpf`` that prints ``1.3`` reaches the model as ``1.30078125``. So
before a value is validated or written:

- an **iterator** (a generator, ``map``, ``itertools.count()``) is read
  for at most ``max_result_rows`` items: one that ends in time is the list
  of its items; one that does not is
  ``{"data": [first items], "shown_rows": n, "more": true}``, and the rest
  is never read;
- a **table or array** (:mod:`dsh_nb.tools.signature.tabular`) is its
  JSON form;
- a **number type dsh_nb does not know** (not ``int``, ``float``,
  ``Decimal``, ``Fraction``, numpy's) is written as its own ``str()``: a
  JSON number where a float has exactly those digits, else a string.

Containers (dict, list, tuple) are searched for these to a budget of
nodes, so a 100-million-item list costs one bounded look, not a walk: an
iterator nested past the budget is the one case left to pydantic. Only
containers that hold something to change are copied.
"""

from __future__ import annotations

import decimal
import fractions
import math
import numbers
from collections import abc
from typing import Any, Final

from dsh_nb.tools.audit.resultsize import MAX_RESULT_ROWS
from dsh_nb.tools.signature.tabular import is_tabular, tabular_json

__all__ = ["number_text", "prepared"]

_BUDGET: Final = 10_000  # container items looked at per value
_PLAIN: Final = frozenset(
    {str, int, float, bool, type(None), bytes, decimal.Decimal, fractions.Fraction}
)
_KNOWN_NUMBERS: Final = frozenset({"numpy", "pandas", "builtins", "decimal"})


def prepared(value: Any) -> Any:
    """``value`` with its iterators, tables and unknown numbers settled."""
    budget = [_BUDGET]
    return _one(value, budget, MAX_RESULT_ROWS.get())


def _one(value: Any, budget: list[int], rows: int) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict or kind is list or kind is tuple:
        return _container(value, budget, rows)
    if is_tabular(value):
        return tabular_json(value, rows)
    if _unknown_number(value):
        return number_text(value)
    if isinstance(value, abc.Iterator) and not isinstance(value, (str, bytes)):
        return _iterator(value, budget, rows)
    return value


def _container(value: Any, budget: list[int], rows: int) -> Any:
    if budget[0] <= 0:
        return value
    budget[0] -= len(value)
    if type(value) is dict:
        changed = False
        out: dict[Any, Any] = {}
        for k, v in value.items():
            new = _one(v, budget, rows)
            changed = changed or new is not v
            out[k] = new
            if budget[0] <= 0 and not changed:
                return value
        return out if changed else value
    items: list[Any] | None = None
    for i, v in enumerate(value):
        new = _one(v, budget, rows)
        if new is not v:
            if items is None:
                items = list(value)
            items[i] = new
        if budget[0] <= 0 and items is None:
            return value
    if items is None:
        return value
    return items if type(value) is list else tuple(items)


def _iterator(value: Any, budget: list[int], rows: int) -> Any:
    taken: list[Any] = []
    for item in value:
        if len(taken) == rows:
            data = _container(taken, budget, rows)
            return {"data": data, "shown_rows": rows, "more": True}
        taken.append(item)
    return _container(taken, budget, rows)


def _unknown_number(value: object) -> bool:
    if not isinstance(value, numbers.Number):
        return False
    return type(value).__module__.split(".")[0] not in _KNOWN_NUMBERS


def number_text(value: object) -> Any:
    """A number as its ``str()`` says: a number with those digits, else text."""
    text = str(value)
    if text.lstrip("-").isdigit() and text.isascii():
        return int(text)
    try:
        number = float(text)
    except (ValueError, OverflowError):
        return text
    return number if math.isfinite(number) and repr(number) == text else text
