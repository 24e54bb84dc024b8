"""Where a tool's behaviour came from: the function its author wrote.

A :class:`~dsh_nb.tools.definition.ToolDefinition` keeps only the wrapper
that validates and calls; ``%tools export`` needs the function behind it,
to copy the source its author wrote. ``@tool`` and ``define_tool`` note it
on the wrapper (an attribute, like ``functools.wraps``'s ``__wrapped__``,
which would change what ``inspect.signature`` says of the wrapper).
"""

from __future__ import annotations

from typing import Final

__all__ = ["ORIGIN", "note_origin", "origin_of"]

ORIGIN: Final = "__dsh_origin__"


def note_origin(run: object, fn: object) -> None:
    """Remember on ``run`` that it wraps the author's ``fn``."""
    try:
        setattr(run, ORIGIN, fn)
    except (AttributeError, TypeError):  # a callable that takes no attributes
        pass


def origin_of(definition: object) -> object | None:
    """The function the author wrote for ``definition``, or None."""
    return getattr(getattr(definition, "execute", None), ORIGIN, None)
