"""A finished call's outcome, as the pipeline saw it happen.

The result says what the model reads; the outcome says what happened: the
call ran (``done``, or ``error`` when the tool or a listener failed), was
refused (``denied``), ran out of time (``timeout``) or was called off
(``cancelled``), which stage decided that, and what the person answered
when approval was asked. The driver records it as the stages run, so no
caller (a card, a replay, a model loop, a server) guesses it again from
the result's text, a trace or the session log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

__all__ = [
    "ApprovalOutcome",
    "STAGES",
    "STATUSES",
    "Stage",
    "Status",
    "ToolOutcome",
    "DONE",
    "outcome_of",
]

ApprovalOutcome = Literal["allowed-once", "rejected", "cancelled", "unavailable"]
"""What the approval seam answered (the person, the policy, or nobody)."""
Status = Literal["done", "denied", "error", "timeout", "cancelled"]
Stage = Literal[
    "input",
    "arguments",
    "pre-execute",
    "approval",
    "guard",
    "execute",
    "post-execute",
    "result",
]
STATUSES: Final[tuple[Status, ...]] = get_args(Status)
STAGES: Final[tuple[Stage, ...]] = get_args(Stage)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutcome:
    """What happened to one call, and which stage decided it.

    Attributes
    ----------
    status
        ``done``, ``denied``, ``error``, ``timeout`` or ``cancelled``.
    stage
        The stage that settled the status: ``input`` (the call object
        itself was unreadable), ``arguments`` (not lossless JSON),
        ``pre-execute``, ``approval``, ``guard``, ``execute`` (the tool
        or a ``tools/execute`` wrapper), ``post-execute`` or ``result``
        (the final result was not lossless JSON).
    approval
        The approval outcome when the approval service was asked
        (``allowed-once``, ``rejected``, ``cancelled``, ``unavailable``),
        else None.
    body_running
        True when the call settled (a timeout) while the tool's body was
        still running in a worker thread; its late return is discarded.
    """

    status: Status
    stage: Stage
    approval: ApprovalOutcome | None = None
    body_running: bool = False

    def to_json(self) -> dict[str, Any]:
        """The journal's form: ``status``, ``stage``, then set extras."""
        out: dict[str, Any] = {"status": self.status, "stage": self.stage}
        if self.approval is not None:
            out["approval"] = self.approval
        if self.body_running:
            out["bodyRunning"] = True
        return out


_made: dict[tuple[str, str, str | None, bool], ToolOutcome] = {}


def outcome_of(
    status: str, stage: str, approval: str | None, body_running: bool = False
) -> ToolOutcome:
    """The (shared, frozen) outcome for these facts; one per combination.

    Outcomes are values, so every call with the same facts gets the same
    instance: the driver builds none on the common path.
    """
    key = (status, stage, approval, body_running)
    made = _made.get(key)
    if made is None:
        made = _made[key] = ToolOutcome(
            status=status,  # type: ignore[arg-type]
            stage=stage,  # type: ignore[arg-type]
            approval=approval,  # type: ignore[arg-type]
            body_running=body_running,
        )
    return made


DONE: Final = outcome_of("done", "execute", None)
"""The common outcome: done by the tool, no approval asked (shared)."""
