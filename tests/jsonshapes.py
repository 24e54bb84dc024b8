"""Values that are and are not lossless JSON, shared by the property suites.

``tests/unit/test_pipeline_properties.py`` (bounded, contract-level) and
``tests/reliability/fuzzkit.py`` (the broad fuzz) draw different mixes, but
build them from these pieces.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st


class DictSub(dict):  # type: ignore[type-arg]
    """A dict subclass: not lossless JSON, however plain its content."""


class ListSub(list):  # type: ignore[type-arg]
    """A list subclass: not lossless JSON, however plain its content."""


class Opaque:
    """An object JSON has no form for."""


def cyclic_dict() -> Any:
    d: dict[str, Any] = {"a": 1}
    d["self"] = d
    return d


def cyclic_list() -> Any:
    lst: list[Any] = [1]
    lst.append(lst)
    return lst


def indirect_cycle() -> Any:
    inner: list[Any] = []
    outer = {"inner": inner}
    inner.append(outer)
    return {"root": outer}


def nested(depth: int, as_dict: bool) -> Any:
    """A leaf under ``depth`` levels of one-key dicts or one-item lists."""
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


def _not_negative_zero(f: float) -> bool:
    return not (f == 0.0 and math.copysign(1.0, f) < 0)


finite_floats = st.floats(allow_nan=False, allow_infinity=False).filter(
    _not_negative_zero
)
"""Floats that are lossless JSON: finite, and not -0.0."""


def json_trees(
    scalars: st.SearchStrategy[Any], *, max_leaves: int
) -> st.SearchStrategy[Any]:
    """Lossless JSON: ``scalars`` nested in lists and str-keyed dicts."""
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text(max_size=6), children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


def _insert(t: tuple[Any, list[Any], int]) -> list[Any]:
    bad, items, at = t
    items = list(items)
    items.insert(min(at, len(items)), bad)
    return items


def _embed(t: tuple[str, Any, dict[str, Any]]) -> dict[str, Any]:
    key, bad, rest = t
    return {**rest, key: bad}


def buried(
    leaves: st.SearchStrategy[Any],
    json_values: st.SearchStrategy[Any],
    *,
    max_leaves: int,
) -> st.SearchStrategy[Any]:
    """Non-JSON ``leaves``, alone or buried in otherwise fine lists and dicts."""
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.tuples(
                children, st.lists(json_values, max_size=3), st.integers(0, 3)
            ).map(_insert),
            st.tuples(
                st.text(max_size=4),
                children,
                st.dictionaries(st.text(max_size=4), json_values, max_size=3),
            ).map(_embed),
        ),
        max_leaves=max_leaves,
    )
