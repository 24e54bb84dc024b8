"""Lone surrogates: text Python holds but no encoder will send.

A ``str`` may hold U+D800..U+DFFF on its own (half an emoji from a model,
``os.fsdecode`` of a bad file name, ``"\\ud800"`` in code). UTF-8 cannot
encode it, so a display, a log line or a request that carries one raises
``UnicodeEncodeError`` far from where it came in. The one rule, applied
wherever text leaves the process (the card's parts and metadata, the
journal, the wire to a model): each surrogate code point becomes the
visible marker ``[U+D800]``, the same marker the card's HTML, Markdown and
plain parts already show. Values handed back to Python code are not
changed; what a caller passed or a tool returned is theirs.

Where a value *comes in* as text meant to be sent on (a model's tool-call
arguments), :func:`first_surrogate` names where it is, so the caller can
answer with an error instead of guessing what was meant.
"""

from __future__ import annotations

import re
from typing import Any, Final, TypeVar

from dsh_nb.tools.jsonvalue import FrozenDict, FrozenList

__all__ = [
    "MAX_DEPTH",
    "escape_surrogates",
    "escape_tree",
    "first_surrogate",
    "has_surrogate",
]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")

MAX_DEPTH: Final = 300
"""Deepest level :func:`escape_tree` walks; a deeper subtree is replaced.

Pipeline values are at most 256 levels deep (``jsonvalue.MAX_DEPTH``) and
a card wraps them in a few more, so only foreign values reach this; the
bound keeps the walk (one frame a level) clear of Python's recursion limit.
"""

_TOO_DEEP: Final = f"[nested deeper than {MAX_DEPTH} levels]"

_T = TypeVar("_T")


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (ASCII is checked in O(1))."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def _mark(match: re.Match[str]) -> str:
    return f"[U+{ord(match.group()):04X}]"


def escape_surrogates(text: str) -> str:
    """Replace each surrogate code point with ``[U+XXXX]``; else return ``text``."""
    if not has_surrogate(text):
        return text
    return _SURROGATE.sub(_mark, text)


def escape_tree(value: _T) -> _T:
    """Escape surrogates in every string and key of a JSON-like value.

    Dicts, lists and tuples are walked (frozen ones stay frozen); other
    values are returned as they are. A value with nothing to escape is
    returned itself, not copied, so the common case costs one scan.
    """
    out: _T = _escape(value, 0)
    return out


def _escape(value: Any, depth: int) -> Any:
    t = type(value)
    if t is str:
        return escape_surrogates(value)
    if t not in _CONTAINERS:
        return value
    if depth >= MAX_DEPTH:
        return _TOO_DEEP
    if t is dict or t is FrozenDict:
        changed = False
        items = []
        for k, v in value.items():
            nk = escape_surrogates(k) if type(k) is str else k
            nv = _escape(v, depth + 1)
            changed = changed or nk is not k or nv is not v
            items.append((nk, nv))
        if not changed:
            return value
        return FrozenDict(items) if t is FrozenDict else dict(items)
    escaped = []
    changed = False
    for v in value:
        nv = _escape(v, depth + 1)
        changed = changed or nv is not v
        escaped.append(nv)
    if not changed:
        return value
    if t is FrozenList:
        return FrozenList(escaped)
    return tuple(escaped) if t is tuple else escaped


_CONTAINERS: Final = frozenset({dict, FrozenDict, list, FrozenList, tuple})


def first_surrogate(value: object) -> str | None:
    """The JSON path of the first string or key holding a surrogate, or None.

    Iterative, so any depth is fine; only exact JSON containers are walked.
    """
    stack: list[tuple[object, str]] = [(value, "$")]
    while stack:
        item, path = stack.pop()
        t = type(item)
        if t is str:
            if has_surrogate(item):  # type: ignore[arg-type]
                return path
        elif t is dict or t is FrozenDict:
            pairs = list(item.items())  # type: ignore[attr-defined]
            for k, _ in pairs:
                if type(k) is str and has_surrogate(k):
                    return f"{path} (a key)"
            for k, v in reversed(pairs):
                stack.append((v, f"{path}.{k}"))
        elif t is list or t is FrozenList or t is tuple:
            items = list(item)  # type: ignore[call-overload]
            for i in range(len(items) - 1, -1, -1):
                stack.append((items[i], f"{path}[{i}]"))
    return None
