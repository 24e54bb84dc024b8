"""``shown()``: a short, contained ``repr`` of a value a user handed us.

Logs, journals and cards sometimes name a value that is not JSON (an
argument object, a raised value). ``repr()`` of such a value runs user code:
it may raise anything (``SystemExit`` included), recurse 10,000 levels, or
build a 100 MB string. :func:`shown` bounds all three: ``reprlib`` limits
depth and size, anything raised becomes ``<unprintable TYPE>``, and the
text is escaped so it can always be encoded.
"""

from __future__ import annotations

import reprlib
from typing import Final

from dsh_nb.tools.surrogates import escape_surrogates

__all__ = ["shown"]


class _Bounded(reprlib.Repr):
    """``reprlib`` with every size bounded, for containers of any type."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxlevel = 4
        self.maxdict = self.maxlist = self.maxtuple = self.maxset = 8
        self.maxfrozenset = self.maxdeque = self.maxarray = 8
        self.maxstring = self.maxlong = self.maxother = limit

    def repr_instance(self, x: object, level: int) -> str:
        try:
            text = repr(x)
        except BaseException:  # noqa: BLE001 - a hostile __repr__ is contained
            return f"<unprintable {_type_name(x)}>"
        if len(text) > self.maxother:
            return text[: self.maxother - 3] + "..."
        return text


def _type_name(value: object) -> str:
    try:
        return type(value).__name__
    except BaseException:  # noqa: BLE001 - type(x).__name__ cannot really fail
        return "object"


_LIMIT: Final = 80


def shown(value: object, limit: int = _LIMIT) -> str:
    """A repr of ``value`` of at most about ``limit`` characters; never raises."""
    try:
        text = _Bounded(limit).repr(value)
    except BaseException:  # noqa: BLE001 - RecursionError, SystemExit, ...
        text = f"<unprintable {_type_name(value)}>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return escape_surrogates(text)
