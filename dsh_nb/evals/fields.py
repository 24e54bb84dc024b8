"""Checked reads of a saved report's JSON: a wrong field is a ValueError.

A saved report or a recording is a file anyone can edit. ``int(x)`` and
``bool(x)`` accept too much (``bool("false")`` is True) and fail in too
many ways (``KeyError``, ``TypeError``, ``OverflowError``), and a value
that loads but has the wrong shape fails later, while the report is drawn.
These readers accept exactly the JSON type a field has and raise one
``ValueError`` that names the field; the loaders add the file and where.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "MAX_DEPTH",
    "check_depth",
    "need_bool",
    "need_int",
    "need_number",
    "need_str",
    "optional_bool",
    "optional_object",
    "optional_str",
    "list_of_objects",
]

#: How deep a saved value may nest (deeper fails to load, not to draw).
MAX_DEPTH: Final = 200


def _get(data: Mapping[str, Any], key: str) -> Any:
    if key not in data:
        raise ValueError(f"{key!r} is missing")
    return data[key]


def need_int(data: Mapping[str, Any], key: str, default: int | None = None) -> int:
    value = data.get(key, default) if default is not None else _get(data, key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key!r} must be a non-negative integer, not {value!r:.60}")
    if value > 2**53:
        raise ValueError(f"{key!r} is too large: {value!r:.60}")
    return value


def need_number(data: Mapping[str, Any], key: str) -> float:
    value = _get(data, key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key!r} must be a number, not {value!r:.60}")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{key!r} is too large") from None
    if not math.isfinite(number):
        raise ValueError(f"{key!r} must be finite, not {value!r:.60}")
    return number


def need_bool(data: Mapping[str, Any], key: str) -> bool:
    value = _get(data, key)
    if not isinstance(value, bool):
        raise ValueError(f"{key!r} must be true or false, not {value!r:.60}")
    return value


def optional_bool(data: Mapping[str, Any], key: str) -> bool | None:
    value = data.get(key)
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"{key!r} must be true, false or null, not {value!r:.60}")
    return value


def need_str(data: Mapping[str, Any], key: str) -> str:
    value = _get(data, key)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string, not {value!r:.60}")
    return value


def optional_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string or null, not {value!r:.60}")
    return value


def optional_object(data: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise ValueError(f"{key!r} must be an object or null, not {value!r:.60}")
    return value


def list_of_objects(data: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError(f"{key!r} must be a list of objects")
    return value


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Refuse a value nested deeper than ``limit`` (iteratively: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            raise ValueError(f"a value is nested deeper than {limit} levels")
        stack.extend((child, depth + 1) for child in children)
