"""``shown()``: the one short, contained ``repr`` of a value a user handed us.

Logs, journals, cards and error texts sometimes name a value that is not
JSON (an argument object, a raised value, a dict key, a rejected setting).
``repr()`` of such a value runs user code: it may raise anything
(``SystemExit`` included), recurse 10,000 levels, build a 100 MB string,
or return text no encoder will send. :func:`shown` bounds all of it:

- it never raises: anything raised becomes ``<unprintable TYPE>``;
- ``reprlib`` limits depth and container sizes, and the whole text is at
  most ``limit`` characters (an int too long to print included);
- a lone surrogate a ``__repr__`` returns is escaped the way ``repr``
  escapes one inside a ``str`` (``\\ud800``), so the text always encodes.

It sits at the bottom of ``tools`` (it imports nothing of ours), so the
lowest module that names a value, ``jsonvalue``, can use it too.
"""

from __future__ import annotations

import reprlib
from itertools import islice
from typing import Final

__all__ = ["shown"]

_LIMIT: Final = 80
_SHORTEST: Final = 8  # room for "<...>" and a few characters of the value


class _Bounded(reprlib.Repr):
    """``reprlib`` with every size bounded, for containers of any type."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxlevel = 4
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = 8
        self.maxfrozenset = self.maxdeque = self.maxarray = 8
        self.maxstring = self.maxlong = self.maxother = limit

    def repr_dict(self, x: dict[object, object], level: int) -> str:
        # reprlib sorts the keys; a message names a dict as it was written.
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = [
            f"{self.repr1(key, level - 1)}: {self.repr1(val, level - 1)}"
            for key, val in islice(x.items(), self.maxdict)
        ]
        if len(x) > self.maxdict:
            pieces.append("...")
        return "{" + ", ".join(pieces) + "}"

    def repr_instance(self, x: object, level: int) -> str:
        try:
            text = repr(x)
        except BaseException:  # noqa: BLE001 - a hostile __repr__ is contained
            return f"<unprintable {_type_name(x)}>"
        return _clip(text, self.maxother)


def _type_name(value: object) -> str:
    try:
        return str(type(value).__name__)
    except BaseException:  # noqa: BLE001 - type(x).__name__ cannot really fail
        return "object"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown(value: object, limit: int = _LIMIT) -> str:
    """Name ``value`` in at most ``limit`` characters; never raise.

    Parameters
    ----------
    value
        Anything: a hostile ``__repr__`` or a huge int is contained.
    limit
        The longest text returned (at least 8 is used).
    """
    limit = max(limit, _SHORTEST) if type(limit) is int else _LIMIT
    try:
        text = _Bounded(limit).repr(value)
        if not text.isascii():
            text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        return _clip(text, limit)
    except BaseException:  # noqa: BLE001 - RecursionError, SystemExit, ...
        return _clip(f"<unprintable {_type_name(value)}>", limit)
