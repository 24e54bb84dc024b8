"""Lossless JSON snapshots, deep freezing and the ABSENT sentinel.

Every value that crosses a pipeline stage (arguments, final results) is copied
once through :func:`snapshot_json` so no stage can mutate what another sees.
What counts as lossless JSON here: exact ``dict`` with ``str`` keys, exact
``list``, ``str``, ``int`` (any size), ``bool``, ``None`` and finite ``float``
other than ``-0.0``. Tuples, sets, bytes, dict/list subclasses, NaN/inf,
non-str keys and cycles are rejected, because they would not round-trip.
Our own :class:`FrozenDict`/:class:`FrozenList` are accepted too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, Final, NoReturn

from dsh_nb.tools.shown import shown

__all__ = [
    "ABSENT",
    "FrozenDict",
    "FrozenList",
    "NotJsonError",
    "compact_json",
    "format_number",
    "is_json_data",
    "snapshot_json",
    "to_plain",
]


class _AbsentType:
    """The type of :data:`ABSENT`: a key that is not there, unlike JSON null."""

    _instance: _AbsentType | None = None

    def __new__(cls) -> _AbsentType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Final = _AbsentType()
"""Marks a field as absent where ``None`` already means JSON ``null``."""


class NotJsonError(ValueError):
    """A value is not lossless JSON; the message says where and why."""


def _readonly(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is immutable (deep-frozen pipeline value)")


class FrozenDict(dict[str, Any]):
    """A deep-frozen JSON object that still equals (and serialises as) a dict."""

    __slots__ = ()
    __setitem__ = _readonly
    __delitem__ = _readonly
    __ior__ = _readonly
    clear = _readonly
    pop = _readonly
    popitem = _readonly
    setdefault = _readonly
    update = _readonly

    def __reduce__(self) -> tuple[Callable[..., FrozenDict], tuple[dict[str, Any]]]:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: object) -> FrozenDict:
        return self

    def __repr__(self) -> str:
        return dict.__repr__(self)


class FrozenList(list[Any]):
    """A deep-frozen JSON array that still equals (and serialises as) a list."""

    __slots__ = ()
    __setitem__ = _readonly
    __delitem__ = _readonly
    __iadd__ = _readonly
    __imul__ = _readonly
    append = _readonly
    extend = _readonly
    insert = _readonly
    pop = _readonly
    remove = _readonly
    reverse = _readonly
    sort = _readonly
    clear = _readonly

    def __reduce__(self) -> tuple[Callable[..., FrozenList], tuple[list[Any]]]:
        return (FrozenList, (list(self),))

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: object) -> FrozenList:
        return self

    def __repr__(self) -> str:
        return list.__repr__(self)


_SCALARS: Final[frozenset[type]] = frozenset({str, int, bool, type(None)})
_DICTS: Final[tuple[type, ...]] = (dict, FrozenDict)
_LISTS: Final[tuple[type, ...]] = (list, FrozenList)


MAX_DEPTH: Final = 256
"""Deepest nesting accepted: deeper values are refused, never half-copied.

A bound keeps every later walk (``to_json``, ``json.dumps``, validators)
far from Python's recursion limit, and it catches cycles for free.
"""

_INT_LIMIT: Final = 10**4300
"""Ints may have up to 4,300 digits: past that ``json.dumps`` refuses them."""


def snapshot_json(value: object) -> Any:
    """Copy ``value`` as detached, deep-frozen lossless JSON in one pass.

    Raises :class:`NotJsonError` naming the offending path. Shared (acyclic)
    references become independent copies; the input is never mutated.
    """
    try:
        return _snap(value, 0)
    except (_Rejected, RecursionError):
        raise NotJsonError(_locate(value, "$", set(), 0)) from None


class _Rejected(Exception):
    """Raised by the fast walk; :func:`_locate` then finds and names the path."""


def _bad_float(f: float) -> bool:
    return (
        f != f or f in (math.inf, -math.inf) or (f == 0.0 and math.copysign(1.0, f) < 0)
    )


def _plain_scalar(v: Any, tv: type) -> bool:
    return (
        tv is str
        or tv is bool
        or v is None
        or (tv is int and -_INT_LIMIT < v < _INT_LIMIT)
    )


def _snap(value: Any, depth: int) -> Any:
    # The hot path of every call: no path strings, no call per plain scalar,
    # and no cycle bookkeeping (a cycle simply exceeds MAX_DEPTH).
    t = type(value)
    if _plain_scalar(value, t):
        return value
    if t is float:
        if _bad_float(value):
            raise _Rejected
        return value
    if depth >= MAX_DEPTH:
        raise _Rejected
    if t is dict or t is FrozenDict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise _Rejected
            tv = type(v)
            if (
                tv is str
                or tv is bool
                or v is None
                or (tv is int and -_INT_LIMIT < v < _INT_LIMIT)
            ):
                out[k] = v
            else:
                out[k] = _snap(v, depth + 1)
        return FrozenDict(out)
    if t is list or t is FrozenList:
        return FrozenList(
            [v if _plain_scalar(v, type(v)) else _snap(v, depth + 1) for v in value]
        )
    raise _Rejected


def _locate(value: Any, path: str, active: set[int], depth: int) -> str:
    """Walk again, slowly, to name the first thing that is not JSON."""
    t = type(value)
    if t is int:
        return (
            "" if -_INT_LIMIT < value < _INT_LIMIT else f"{path} has over 4,300 digits"
        )
    if t in _SCALARS:
        return ""
    if t is float:
        if value != value or value in (math.inf, -math.inf):
            return f"{path} is not a finite number"
        return f"{path} is negative zero" if _bad_float(value) else ""
    if t in _DICTS or t in _LISTS:
        if id(value) in active:
            return f"{path} is circular"
        if depth >= MAX_DEPTH:
            return f"{path} is nested deeper than {MAX_DEPTH} levels"
        active.add(id(value))
        pairs = value.items() if t in _DICTS else enumerate(value)
        for k, v in pairs:
            if t in _DICTS and type(k) is not str:
                return f"{path} has a non-string key {shown(k)}"
            child = f"{path}.{k}" if t in _DICTS else f"{path}[{k}]"
            found = _locate(v, child, active, depth + 1)
            if found:
                return found
        active.discard(id(value))
        return ""
    return f"{path} is a {t.__name__}, not JSON data"


def is_json_data(value: object) -> bool:
    """Return whether ``value`` is lossless JSON (never raises)."""
    try:
        snapshot_json(value)
    except NotJsonError:
        return False
    return True


def to_plain(value: Any) -> Any:
    """Return a mutable plain dict/list copy of a JSON value."""
    t = type(value)
    if t is FrozenDict or t is dict:
        return {k: to_plain(v) for k, v in value.items()}
    if t is FrozenList or t is list:
        return [to_plain(v) for v in value]
    return value


def _integral(value: Any) -> Any:
    t = type(value)
    if t is float and value.is_integer():
        return int(value)
    if t is FrozenDict or t is dict:
        return {k: _integral(v) for k, v in value.items()}
    if t is FrozenList or t is list:
        return [_integral(v) for v in value]
    return value


def compact_json(value: Any) -> str:
    """Render JSON compactly, as the contract's messages do (``1`` not ``1.0``)."""
    return json.dumps(_integral(value), separators=(",", ":"), ensure_ascii=False)


def format_number(value: float) -> str:
    """Format a number as prose does: ``100`` not ``100.0``, ``0.5`` as is."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
