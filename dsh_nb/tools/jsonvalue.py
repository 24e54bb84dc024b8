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
from typing import Any, Final, NoReturn, SupportsIndex

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
    __ior__ = _readonly  # type: ignore[assignment]
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
    __iadd__ = _readonly  # type: ignore[assignment]
    __imul__ = _readonly  # type: ignore[assignment]
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

    def __hash__(self) -> int:  # lists are unhashable; keep it that way
        raise TypeError("unhashable type: 'FrozenList'")

    def __mul__(self, n: SupportsIndex) -> list[Any]:
        return list(self) * n


_SCALARS: Final = frozenset({str, int, bool, type(None)})
_DICTS: Final = frozenset({dict, FrozenDict})
_LISTS: Final = frozenset({list, FrozenList})


def snapshot_json(value: object) -> Any:
    """Copy ``value`` as detached, deep-frozen lossless JSON in one pass.

    Raises :class:`NotJsonError` naming the offending path. Shared (acyclic)
    references become independent copies; the input is never mutated.
    """
    try:
        return _snap(value, "$", set())
    except RecursionError:
        raise NotJsonError("$ is nested too deeply to copy") from None


def _snap(value: object, path: str, active: set[int]) -> Any:
    t = type(value)
    if t in _SCALARS:
        return value
    if t is float:
        f: float = value  # type: ignore[assignment]
        if f != f or f in (math.inf, -math.inf):
            raise NotJsonError(f"{path} is not a finite number")
        if f == 0.0 and math.copysign(1.0, f) < 0:
            raise NotJsonError(f"{path} is negative zero")
        return value
    if t in _DICTS:
        ident = id(value)
        if ident in active:
            raise NotJsonError(f"{path} is circular")
        active.add(ident)
        out = {}
        for k, v in value.items():  # type: ignore[attr-defined]
            if type(k) is not str:
                raise NotJsonError(f"{path} has a non-string key {k!r}")
            out[k] = _snap(v, f"{path}.{k}", active)
        active.discard(ident)
        return FrozenDict(out)
    if t in _LISTS:
        ident = id(value)
        if ident in active:
            raise NotJsonError(f"{path} is circular")
        active.add(ident)
        items = [
            _snap(v, f"{path}[{i}]", active)
            for i, v in enumerate(value)  # type: ignore[call-overload]
        ]
        active.discard(ident)
        return FrozenList(items)
    raise NotJsonError(f"{path} is a {t.__name__}, not JSON data")


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
