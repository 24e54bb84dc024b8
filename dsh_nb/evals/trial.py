"""One trial's verdict, read from the agent's journal, not from the text.

A trial is one fresh conversation. What the model called, with which
arguments, and what the pipeline answered is on the trial agent's
session log: the core's ``tool/call`` / ``tool/result`` pairs (the result
carries the error ``code``). Which request each call answered comes from
the step marks: the log's length as each request went out, noted by the
harness's chat view (the log is append-only, so positions never move).
:func:`measure` turns that log into a :class:`TrialResult`:

- ``selected``: the first step called the expected tools (see
  :func:`dsh_nb.evals.expect.grade`);
- ``args_valid_first_try``: no call of the first step was refused with
  ``INVALID_ARGS`` (or sent arguments that were not JSON);
- ``args_correct``: the first step's arguments match the expectation, and
  the pipeline accepted them (refused arguments are never correct);
- ``recovered``: None unless the first step had refused arguments; then
  whether a later step of the trial made calls the pipeline accepted, and
  the accepted calls of every step match the expectation (so with
  ``max_steps=1`` nothing recovers, and a case that expects no call never
  does: its model already called);
- ``passed``: ``selected and args_correct``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.evals import fields as f
from dsh_nb.models.usage import Usage
from dsh_nb.tools.audit import journal
from dsh_nb.tools.jsonvalue import to_plain

if TYPE_CHECKING:
    from dsh_nb.evals.expect import Expectation

__all__ = ["CallRecord", "TrialResult", "calls_of", "measure"]

INVALID: Final = "INVALID_ARGS"


@dataclass(frozen=True, slots=True, kw_only=True)
class CallRecord:
    """One tool call of a trial, as the journal has it.

    ``code`` is the result's error code (``INVALID_ARGS``,
    ``UNKNOWN_TOOL``, ...), None when it had none; ``stage`` is
    ``"arguments"`` for arguments that were not JSON.
    """

    step: int
    name: str
    arguments: Any
    status: str | None = None
    stage: str | None = None
    code: str | None = None
    approval: str | None = None
    result: Mapping[str, Any] | None = None

    @property
    def refused(self) -> bool:
        """The pipeline refused the arguments (so the body never saw them)."""
        return self.code == INVALID or self.stage == "arguments"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"step": self.step, "name": self.name}
        out["arguments"] = self.arguments
        for key in ("status", "stage", "code", "approval", "result"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CallRecord:
        """Read one saved call; a wrong field is a ``ValueError`` naming it."""
        return cls(
            step=f.need_int(data, "step"),
            name=f.need_str(data, "name"),
            arguments=data.get("arguments"),
            status=f.optional_str(data, "status"),
            stage=f.optional_str(data, "stage"),
            code=f.optional_str(data, "code"),
            approval=f.optional_str(data, "approval"),
            result=f.optional_object(data, "result"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TrialResult:
    """The verdict of one trial of one case (under one variant).

    ``error`` is set when a model request failed; a trial whose first
    request failed measured nothing (``answered`` is False) and is left
    out of every rate. ``latency`` is the trial's wall time in seconds;
    ``messages`` the conversation in the provider's wire form.
    """

    case_id: str
    trial: int
    variant: str | None
    selected: bool
    args_valid_first_try: bool
    args_correct: bool
    recovered: bool | None
    passed: bool
    steps: int
    latency: float
    usage: Usage = field(default_factory=Usage)
    calls: tuple[CallRecord, ...] = ()
    error: str | None = None
    answered: bool = True
    messages: tuple[Mapping[str, Any], ...] = ()
    #: A conversation's turns: ``{"turns", "stepsPerTurn", "broken"}``,
    #: ``broken`` being where it went wrong (see ``evals.conversation``).
    conversation: Mapping[str, Any] | None = None

    @property
    def state(self) -> str:
        """``"error"`` (a model request failed), ``"passed"`` or ``"failed"``.

        A request error is its own state: it says nothing about the tool,
        and a resumed run asks again (see :mod:`dsh_nb.evals.recording`).
        """
        if self.error is not None:
            return "error"
        return "passed" if self.passed else "failed"

    def first_step(self) -> tuple[CallRecord, ...]:
        """The calls the model made in answer to the first request."""
        return tuple(c for c in self.calls if c.step == 1)

    def to_json(self) -> dict[str, Any]:
        """The trial as plain JSON (wire names for usage)."""
        out: dict[str, Any] = {
            "caseId": self.case_id,
            "trial": self.trial,
            "variant": self.variant,
            "selected": self.selected,
            "argsValidFirstTry": self.args_valid_first_try,
            "argsCorrect": self.args_correct,
            "recovered": self.recovered,
            "passed": self.passed,
            "steps": self.steps,
            "latency": round(self.latency, 6),
            "usage": self.usage.to_json(),
            "calls": [c.to_json() for c in self.calls],
        }
        if self.error is not None:
            out["error"] = self.error
        if not self.answered:
            out["answered"] = False
        if self.messages:
            out["messages"] = list(self.messages)
        if self.conversation is not None:
            out["conversation"] = dict(self.conversation)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrialResult:
        """Read one saved trial; a wrong field is a ``ValueError`` naming it."""
        usage = f.optional_object(data, "usage") or {}
        calls = f.list_of_objects(data, "calls")
        answered = f.optional_bool(data, "answered")
        return cls(
            case_id=f.need_str(data, "caseId"),
            trial=f.need_int(data, "trial"),
            variant=f.optional_str(data, "variant"),
            selected=f.need_bool(data, "selected"),
            args_valid_first_try=f.need_bool(data, "argsValidFirstTry"),
            args_correct=f.need_bool(data, "argsCorrect"),
            recovered=f.optional_bool(data, "recovered"),
            passed=f.need_bool(data, "passed"),
            steps=f.need_int(data, "steps"),
            latency=f.need_number(data, "latency"),
            usage=Usage(
                input_tokens=f.need_int(usage, "inputTokens", 0),
                output_tokens=f.need_int(usage, "outputTokens", 0),
                reasoning_tokens=f.need_int(usage, "reasoningTokens", 0),
                cached_tokens=f.need_int(usage, "cachedTokens", 0),
                requests=f.need_int(usage, "requests", 0),
            ),
            calls=tuple(CallRecord.from_json(c) for c in calls),
            error=f.optional_str(data, "error"),
            answered=answered is not False,
            messages=tuple(f.list_of_objects(data, "messages")),
            conversation=f.optional_object(data, "conversation"),
        )


def calls_of(
    events: Sequence[Mapping[str, Any]], marks: Sequence[int] = ()
) -> list[CallRecord]:
    """Every call on a trial's log, each with its step and its answer.

    ``marks[k]`` is the log's length when request ``k + 1`` went out.
    """
    records: list[dict[str, Any]] = []
    # Ids repeat across steps on some servers ("call_0"): a result belongs
    # to the latest call of that id still waiting for one.
    waiting: dict[object, dict[str, Any]] = {}
    step = 0
    for index, event in enumerate(events):
        while step < len(marks) and marks[step] <= index:
            step += 1
        kind, data = event["type"], event["data"]
        if kind == journal.CALL:
            record = {
                "step": max(step, 1),
                "name": str(data.get("name") or ""),
                "arguments": to_plain(data.get("arguments")),
            }
            records.append(record)
            waiting[data.get("callId")] = record
        elif kind == journal.RESULT:
            record_ = waiting.pop(data.get("callId"), None)
            if record_ is None:
                continue
            result = to_plain(data.get("result"))
            error = result.get("error") if isinstance(result, dict) else None
            record_["status"] = data.get("status")
            record_["stage"] = data.get("stage")
            record_["approval"] = data.get("approval")
            record_["code"] = error.get("code") if isinstance(error, dict) else None
            record_["result"] = result
        elif kind == journal.CANCELLED:
            record_ = waiting.pop(data.get("callId"), None)
            if record_ is not None:
                record_["status"] = "cancelled"
    return [CallRecord(**r) for r in records]


def _actual(calls: Sequence[CallRecord]) -> list[Any]:
    from dsh_nb.evals.expect import ActualCall

    return [
        ActualCall(c.name, c.arguments if isinstance(c.arguments, Mapping) else {})
        for c in calls
    ]


def measure(
    expect: Expectation,
    events: Sequence[Mapping[str, Any]],
    marks: Sequence[int] = (),
    *,
    case_id: str,
    trial: int,
    variant: str | None,
    steps: int,
    latency: float,
    usage: Usage,
    error: str | None = None,
    answered: bool = True,
    messages: Sequence[Mapping[str, Any]] = (),
) -> TrialResult:
    """Grade one trial from its log (see the module doc for each metric)."""
    from dsh_nb.evals.expect import grade

    calls = calls_of(events, marks)
    first = [c for c in calls if c.step == 1]
    valid = not any(c.refused for c in first)
    graded = grade(expect, _actual(first))
    selected = bool(graded.selected) and answered
    correct = bool(graded.args_correct) and valid and answered
    recovered: bool | None = None
    if not valid:
        accepted = [c for c in calls if not c.refused]
        later = any(c.step > 1 for c in accepted)
        recovered = later and bool(grade(expect, _actual(accepted)).args_correct)
    return TrialResult(
        case_id=case_id,
        trial=trial,
        variant=variant,
        selected=selected,
        args_valid_first_try=valid,
        args_correct=correct,
        recovered=recovered,
        passed=selected and correct,
        steps=steps,
        latency=latency,
        usage=usage,
        calls=tuple(calls),
        error=error,
        answered=answered,
        messages=tuple(messages),
    )
