"""Typed ``magic_arguments`` helpers shared by every ``Magics`` class here.

IPython's ``magic_arguments`` is untyped; the stubs below are its real
signatures. ``parse_argstring`` turns a line that cannot be split (an
unclosed quote) into a one-line ``UsageError`` instead of a traceback.
:class:`subcommands` gives a magic argparse sub-commands (``%tools serve``),
each declaring its flags with ``@argument`` on its own handler, as a magic
does; the magic's help lists every sub-command's usage and options.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from IPython.core.error import UsageError
from IPython.core.magic_arguments import ArgDecorator, MagicHelpFormatter

_F = TypeVar("_F", bound=Callable[..., Any])

if TYPE_CHECKING:

    class _Decorator(Protocol):
        def __call__(self, fn: _F, /) -> _F: ...

    # IPython's magic_arguments is untyped; these are its real signatures.
    def magic_arguments() -> _Decorator: ...
    def argument(*args: Any, **kwargs: Any) -> _Decorator: ...
    def arg_split(s: str, posix: bool = ..., strict: bool = ...) -> list[str]: ...

else:
    from IPython.core.magic_arguments import argument, magic_arguments
    from IPython.utils.process import arg_split

__all__ = [
    "argument",
    "magic_arguments",
    "parse_argstring",
    "parse_known",
    "subcommands",
    "unrecognized",
]


def _split(line: str, magic: str) -> list[str]:
    try:
        words = arg_split(line)
    except ValueError as exc:
        # IPython's splitter raises ValueError for an unclosed quote, which
        # would show as a traceback; ``magic`` (``%tool_policy``) names it.
        reason = str(exc).lower() or "cannot be split into words"
        raise UsageError(
            f"{magic} {line.strip()}: {reason}; close the quote or escape it"
        ) from None
    return words


def parse_argstring(magic_func: Callable[..., Any], line: str, magic: str) -> Any:
    """Parse a magic line; a line that cannot be split is a ``UsageError``."""
    parser: Any = getattr(magic_func, "parser")  # noqa: B009 - set by IPython
    return parser.parse_args(_split(line, magic))


def parse_known(
    magic_func: Callable[..., Any], line: str, magic: str
) -> tuple[Any, list[str]]:
    """Parse a magic line, keeping the words no option claims.

    A sub-command decides what its leftover words mean (``%tools export``
    reads them as more names, and calls an unknown flag by its name).
    """
    parser: Any = getattr(magic_func, "parser")  # noqa: B009 - set by IPython
    known: tuple[Any, list[str]] = parser.parse_known_args(_split(line, magic))
    return known


def unrecognized(extras: list[str]) -> UsageError:
    """argparse's own words for leftover words, as ``parse_argstring`` says."""
    return UsageError(f"unrecognized arguments: {' '.join(extras)}")


class subcommands(ArgDecorator):
    """Give a magic sub-commands, each with the flags its handler declares.

    ``@subcommands(serve=serve, connect=connect)`` adds ``serve`` and
    ``connect`` as argparse sub-parsers, built from the ``@argument``
    decorators on ``serve`` and ``connect`` themselves. The parsed
    namespace's ``run`` is the chosen handler (None without a
    sub-command), so the magic calls it instead of routing by hand.
    """

    def __init__(self, **commands: Callable[..., Any]) -> None:
        self.commands = commands

    def __call__(self, func: _F) -> _F:
        decorated: _F = super().__call__(func)  # type: ignore[no-untyped-call]
        return decorated

    def add_to_parser(self, parser: Any, group: Any) -> None:
        """Add one sub-parser per handler; list each in the magic's help."""
        subs = parser.add_subparsers(
            dest="command", metavar="COMMAND", title="sub-commands"
        )
        parser.set_defaults(run=None)
        helps = []
        for name, handler in self.commands.items():
            doc = inspect.getdoc(handler) or ""
            sub = subs.add_parser(
                name,
                help=doc.split("\n", 1)[0],
                description=doc,
                formatter_class=MagicHelpFormatter,
            )
            for decorator in getattr(handler, "decorators", [])[::-1]:
                decorator.add_to_parser(sub, None)
            sub.set_defaults(run=handler)
            helps.append(sub.format_help().rstrip())
        # The magic's docstring is its manual: every sub-command's options.
        parser.epilog = "\n\n".join(helps)
