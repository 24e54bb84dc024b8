"""What a registry lays out for calls: one call's plan, its registrations.

A :class:`CallPlan` is the listeners one call runs through, fixed when it
starts. A registry makes the plan (:meth:`~dsh_nb.tools.registry.ToolRegistry.plan`)
and the stage driver runs it: each seam's listeners in waterfall order
(first registered outermost, a ``prepend`` in front, contract §4.4), only
those that fire for the calling scope. A listener added or disposed while
a call runs changes later calls' plans, never this one's.

:class:`Registration` is one listener or guard as it was registered,
listed by :meth:`~dsh_nb.tools.registry.ToolRegistry.registrations` (the
export replays them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["CallPlan", "Registration", "Seam"]

Seam = Literal["pre_execute", "execute", "post_execute", "result", "trace", "guard"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPlan:
    """Each seam's listeners for one call, in the order they run."""

    pre_execute: tuple[Callable[..., Any], ...] = ()
    """``tools/pre-execute`` listeners, outermost first."""
    execute: tuple[Callable[..., Any], ...] = ()
    """``tools/execute`` wrappers around dispatch, outermost first."""
    post_execute: tuple[Callable[..., Any], ...] = ()
    """``tools/post-execute`` listeners, outermost first."""
    result: tuple[Callable[..., Any], ...] = ()
    """``tools/result`` observers, told once the call is frozen."""
    trace: tuple[Callable[..., Any], ...] = ()
    """Trace observers; while there are none the call is not traced."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Registration:
    """One listener or guard as registered: its seam, the function, its scope."""

    seam: Seam
    fn: Callable[..., Any]
    scope: object | None = None
