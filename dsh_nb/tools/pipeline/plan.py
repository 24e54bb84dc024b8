"""What a registry lays out for calls: one call's plan, its registrations.

A :class:`CallPlan` is everything one call runs through: the listeners,
fixed when it starts, and the lookups the stages make on the way (the
tool, the guards, the approval service, the worker threads). A registry
makes the plan (:meth:`~dsh_nb.tools.registry.ToolRegistry.plan`) and the
stage driver runs it, as pluggy hands its engine a copied list of hook
implementations and never the plugin manager: the driver imports nothing
from ``registry.py``. Each seam's listeners run in waterfall order (first
registered outermost, a ``prepend`` in front, contract §4.4), only those
that fire for the calling scope. A listener added or disposed while a
call runs changes later calls' plans, never this one's.

:class:`Registration` is one listener or guard as it was registered,
listed by :meth:`~dsh_nb.tools.registry.ToolRegistry.registrations` (the
export replays them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from dsh_nb.tools.definition import ToolDefinition
    from dsh_nb.tools.pipeline.approval import ApprovalService
    from dsh_nb.tools.pipeline.trace import TraceRecord
    from dsh_nb.tools.values.execution import ToolExecution, ToolExecutionResult

__all__ = [
    "CallPlan",
    "Registration",
    "ResultObserver",
    "Seam",
    "ToolGuard",
    "TraceObserver",
]

Seam = Literal["pre_execute", "execute", "post_execute", "result", "trace", "guard"]
ToolGuard = Callable[["ToolExecution"], "str | None"]
ResultObserver = Callable[["ToolExecution", "ToolExecutionResult"], None]
TraceObserver = Callable[
    ["ToolExecution", "ToolExecutionResult", "Sequence[TraceRecord]"], None
]


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
    # The lookups below are made when their stage runs, not when the call
    # starts (contract: a guard added while a call awaits approval applies
    # to it; the approval service is looked up on every call).
    lookup: Callable[[str, Any], ToolDefinition | None] = field(
        default=lambda name, scope: None, compare=False
    )
    """``lookup(name, scope)``: the tool a dispatch runs, or None."""
    guards: Callable[[Any], tuple[Callable[..., Any], ...]] = field(
        default=lambda scope: (), compare=False
    )
    """``guards(scope)``: the guards the call must pass, as of the guard stage."""
    approval: Callable[[], ApprovalService | None] = field(
        default=lambda: None, compare=False
    )
    """``approval()``: the approval service as of the approval stage, or None."""
    threads: Executor | None = field(default=None, compare=False)
    """Worker threads for sync bodies, or None to run them inline."""
    max_result_rows: Callable[[], int] = field(default=lambda: 100, compare=False)
    """``max_result_rows()``: the registry's bound on the rows a model reads."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Registration:
    """One listener or guard as registered: its seam, the function, its scope."""

    seam: Seam
    fn: Callable[..., Any]
    scope: object | None = None
