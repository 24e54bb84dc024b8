"""Traces: who decided each stage of one call, and how long it took.

A teaching aid for the cards, not the call's outcome (that is
:mod:`dsh_nb.tools.values.outcome`). The stage driver calls a :class:`Recorder`
only while a trace observer is registered; without one it skips tracing
entirely.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Any, Final, overload

from dsh_nb.tools.pipeline.waterfall import UNSETTLED, describe
from dsh_nb.tools.values.execution import (
    Ask,
    Block,
    Deny,
    PostToolDecision,
    PreToolDecision,
    ToolExecutionResult,
)

__all__ = ["Recorder", "Trace", "TraceRecord"]


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


_DESCRIBE: Final[dict[str, Callable[[Any], str]]] = {
    "pre-execute": _describe_pre,
    "post-execute": _describe_post,
    "execute": _describe_result,
}


class Trace(Sequence[TraceRecord]):
    """One call's trace records, built on first read.

    The driver keeps only raw facts: clock marks (a float: a stage starts
    here) and, per stage, ``(stage, deciding listener, decision, ended)``;
    a stage starts at the latest mark or where the one before it ended.
    Naming listeners and describing decisions waits until an observer
    actually reads a record, so an observer that only keeps the trace for
    later (the notebook's card) costs little.
    """

    __slots__ = ("_built", "_raw")

    def __init__(self, raw: list[Any]) -> None:
        self._raw = raw
        self._built: tuple[TraceRecord, ...] | None = None

    def _records(self) -> tuple[TraceRecord, ...]:
        built = self._built
        if built is None:
            records = []
            started = 0.0
            for entry in self._raw:
                if type(entry) is float:
                    started = entry
                else:
                    stage, actor, decision, ended = entry
                    records.append(_build(stage, actor, decision, started, ended))
                    started = ended
            built = self._built = tuple(records)
        return built

    def __len__(self) -> int:
        return len(self._records())

    @overload
    def __getitem__(self, index: int) -> TraceRecord: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[TraceRecord, ...]: ...
    def __getitem__(self, index: int | slice) -> TraceRecord | tuple[TraceRecord, ...]:
        return self._records()[index]

    def __iter__(self) -> Iterator[TraceRecord]:
        return iter(self._records())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Trace):
            other = other._records()
        return self._records() == other

    def __hash__(self) -> int:
        return hash(self._records())

    def __repr__(self) -> str:
        return f"Trace({list(self._records())!r})"


def _build(
    stage: str, actor: Any, decision: Any, started: float, ended: float
) -> TraceRecord:
    if not isinstance(actor, str):
        actor = describe(actor)
    if not isinstance(decision, str):
        decision = _DESCRIBE[stage](decision)
    return TraceRecord(
        stage=stage,
        actor=actor,
        decision=decision,
        duration_ms=(ended - started) * 1000.0,
    )


class Recorder(Trace):
    """One call's trace, filled in by the driver as the stages end.

    It is the very :class:`Trace` the trace observers receive: the driver
    keeps raw facts per stage (its end on the clock, the deciding
    listener, the decision) and records are built on first read. It is also the
    waterfall engine's :class:`~dsh_nb.tools.pipeline.waterfall.Decider`: the
    engine leaves in ``fn`` the listener whose value won, or None when
    the stage default did.

    Made when the first stage starts (the clock starts with it); ``begin``
    restarts the clock, ``end`` closes a stage and the next one starts
    where it ended: one clock read per stage boundary.
    """

    __slots__ = ("fn", "value")

    def __init__(self) -> None:
        self._raw = [perf_counter()]
        self._built = None
        self.fn: Callable[..., Any] | None = None
        self.value: Any = UNSETTLED

    def begin(self) -> Recorder:
        """Restart the clock for a stage; returns the decider for its waterfall.

        The decider is already clear: creation and :meth:`end` leave it so.
        """
        self._raw.append(perf_counter())
        return self

    def end(self, stage: str, default: object, decision: object) -> None:
        """Close ``stage``: decided by the listener in ``fn``, else ``default``.

        ``decision`` is what the stage settled to (a str, or a decision or
        result described when the record is read).
        """
        fn = self.fn
        self._raw.append(
            (stage, default if fn is None else fn, decision, perf_counter())
        )
        self.fn = None
        # ``value`` is left as it is: the next stage's values are of another
        # kind (decisions, then a result, then a post decision), so a stale
        # one is never the very value a level settles to.
