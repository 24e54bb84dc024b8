"""The values a tool's context hands to its door: progress, lines, questions.

Frozen, so a door (a card, an MCP session, a chat) can keep them, and
plain, so each door maps them to its own wire: MCP's
``notifications/progress`` and ``notifications/message``, a card's bar
and log lines, the journal's events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

__all__ = [
    "LEVELS",
    "Answer",
    "AnswerAction",
    "LogLine",
    "Progress",
    "Question",
    "SampleRequest",
    "SamplingUnavailable",
    "ToolContextError",
    "level_of",
]

AnswerAction = Literal["accept", "decline", "cancel"]

#: The log levels, as MCP (RFC 5424) names them, least severe first.
LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_ALIASES: Final = {"warn": "warning", "fatal": "critical", "exception": "error"}


def level_of(level: object) -> str:
    """A level's MCP name; ``ValueError`` naming the choices otherwise."""
    if isinstance(level, str):
        name = level.lower()
        name = _ALIASES.get(name, name)
        if name in LEVELS:
            return name
    raise ValueError(f"log level must be one of {', '.join(LEVELS)}; got {level!r}")


def python_level(levelno: int) -> str:
    """The MCP level of a ``logging`` record's number."""
    if levelno >= 50:
        return "critical"
    if levelno >= 40:
        return "error"
    if levelno >= 30:
        return "warning"
    if levelno >= 20:
        return "info"
    return "debug"


class ToolContextError(RuntimeError):
    """``current_tool_context()`` outside a call, or a context used after it."""


class SamplingUnavailable(RuntimeError):
    """``ctx.sample`` where the call's door has no model to ask, or will not
    ask it (a notebook's approval refused, no model configured, a failed
    request); the message says which, and what to set."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A person's answer to ``ctx.ask``.

    ``action`` is ``"accept"`` (``value`` holds the answer, of the type
    asked for), ``"decline"`` (they said no, or nobody could be asked) or
    ``"cancel"`` (they dismissed it, or the call was aborted meanwhile).
    """

    action: AnswerAction
    value: Any = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a call has come: ``done`` of ``total`` (unknown if None)."""

    done: float
    total: float | None = None
    message: str | None = None

    @property
    def fraction(self) -> float | None:
        if self.total is None or self.total <= 0:
            return None
        return max(0.0, min(1.0, self.done / self.total))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"progress": self.done}
        if self.total is not None:
            out["total"] = self.total
        if self.message is not None:
            out["message"] = self.message
        return out


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line a call logged or printed.

    ``source`` is ``"log"`` (``ctx.log``), ``"stdout"``/``"stderr"`` (what
    it printed), ``"logging"`` (a ``logging`` record, ``logger`` naming
    it), ``"warning"`` (a warning it raised) or ``"dsh"`` (the bound's own
    "… N more lines").
    """

    level: str
    text: str
    source: str = "log"
    logger: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"level": self.level, "text": self.text}
        out["source"] = self.source
        if self.logger is not None:
            out["logger"] = self.logger
        return out


@dataclass(frozen=True, slots=True)
class Question:
    """What ``ctx.ask`` puts to a person: a message and a flat form.

    ``schema`` is a JSON Schema object whose properties are primitives
    (MCP elicitation's ``requestedSchema``); ``single`` says the form has
    one field, ``value``.
    """

    message: str
    schema: dict[str, Any] = field(hash=False)
    single: bool = True


@dataclass(frozen=True, slots=True)
class SampleRequest:
    """What ``ctx.sample`` asks of a model."""

    prompt: str
    system: str | None = None
    max_tokens: int | None = None
