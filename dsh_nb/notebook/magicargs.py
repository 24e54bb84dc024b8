"""Typed ``magic_arguments`` helpers shared by every ``Magics`` class here.

IPython's ``magic_arguments`` is untyped; the stubs below are its real
signatures. ``parse_argstring`` turns a line that cannot be split (an
unclosed quote) into a one-line ``UsageError`` instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from IPython.core.error import UsageError

if TYPE_CHECKING:
    _F = TypeVar("_F", bound=Callable[..., Any])

    class _Decorator(Protocol):
        def __call__(self, fn: _F, /) -> _F: ...

    # IPython's magic_arguments is untyped; these are its real signatures.
    def magic_arguments() -> _Decorator: ...
    def argument(*args: Any, **kwargs: Any) -> _Decorator: ...
    def _parse_argstring(magic_func: Callable[..., Any], argstring: str) -> Any: ...

else:
    from IPython.core.magic_arguments import argument, magic_arguments
    from IPython.core.magic_arguments import parse_argstring as _parse_argstring

__all__ = ["argument", "magic_arguments", "parse_argstring"]


def parse_argstring(magic_func: Callable[..., Any], line: str, magic: str) -> Any:
    """Parse a magic line; a line that cannot be split is a ``UsageError``.

    IPython's splitter raises ``ValueError`` for an unclosed quote, which
    would show as a traceback; ``magic`` (``%tool_policy``) names the line.
    """
    try:
        return _parse_argstring(magic_func, line)
    except ValueError as exc:
        reason = str(exc).lower() or "cannot be split into words"
        raise UsageError(
            f"{magic} {line.strip()}: {reason}; close the quote or escape it"
        ) from None
