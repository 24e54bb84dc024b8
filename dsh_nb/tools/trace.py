"""Traces: who decided each stage of one call, and how long it took.

A teaching aid for the cards, not the call's outcome (that is
:mod:`dsh_nb.tools.outcome`). The stage driver calls a :class:`Recorder`
only while a trace observer is registered; without one it skips tracing
entirely.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dsh_nb.tools._waterfall import describe
from dsh_nb.tools.execution import (
    Ask,
    Block,
    Deny,
    PostToolDecision,
    PreToolDecision,
    ToolExecutionResult,
)

__all__ = ["Recorder", "TraceRecord"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceRecord:
    """Who decided what at one stage of one call, and how long it took."""

    stage: str
    actor: str
    decision: str
    duration_ms: float


def _describe_pre(decision: PreToolDecision) -> str:
    if isinstance(decision, Deny):
        return "deny: " + decision.reason
    if isinstance(decision, Ask):
        return "ask" + (": " + decision.reason if decision.reason else "")
    return "allow"


def _describe_post(decision: PostToolDecision) -> str:
    if isinstance(decision, Block):
        return "block"
    changed = [
        name
        for name, value in (
            ("content", decision.content),
            ("additionalContext", decision.additional_context),
        )
        if value is not None
    ]
    return "accept" + (" (replaces " + ", ".join(changed) + ")" if changed else "")


def _describe_result(result: ToolExecutionResult) -> str:
    if result.error is not None:
        return f"error {result.error.code}"
    return "error" if result.is_error else "ok"


def _actor(fn: Callable[..., Any] | None, default: str) -> str:
    return default if fn is None else describe(fn)


class Recorder:
    """Collects one call's trace records as the driver reports stages.

    ``who`` is the waterfall engine's decider cell: the engine leaves in
    it the listener whose value won, or None when the stage default did.
    """

    __slots__ = ("records", "started", "who")

    def __init__(self) -> None:
        self.records: list[TraceRecord] = []
        self.who: list[Callable[..., Any] | None] = [None]
        self.started = 0.0

    def begin(self) -> list[Callable[..., Any] | None]:
        """Start timing a stage; returns the decider cell for its waterfall."""
        self.who[0] = None
        self.started = time.perf_counter()
        return self.who

    def _add(self, stage: str, actor: str, decision: str) -> None:
        elapsed = (time.perf_counter() - self.started) * 1000.0
        self.records.append(
            TraceRecord(
                stage=stage, actor=actor, decision=decision, duration_ms=elapsed
            )
        )

    def pre(self, decision: PreToolDecision) -> None:
        self._add(
            "pre-execute", _actor(self.who[0], "default"), _describe_pre(decision)
        )

    def approval(self, reason: str | None) -> None:
        self._add("approval", "approval", reason or "allowed-once")

    def guard(self, guard: Callable[..., Any], reason: str) -> None:
        self._add("guard", describe(guard), "deny: " + reason)

    def execute(self, result: ToolExecutionResult, tool: str) -> None:
        self._add("execute", _actor(self.who[0], tool), _describe_result(result))

    def post(self, decision: PostToolDecision) -> None:
        self._add(
            "post-execute", _actor(self.who[0], "default"), _describe_post(decision)
        )
