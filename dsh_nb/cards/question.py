"""A question for a person, as one line of text, and how to read the answer.

Approvals and a tool's own questions (``ctx.ask``) reach a person through
one channel, which may be a row of buttons or the kernel's stdin (VS Code,
Colab, the classic Notebook, ``jupyter console``). A :class:`Question` holds
what every channel needs: the text, the answers it takes (each with the
words a person may type), and what an empty line means. This module only
draws the line and reads a typed answer; it imports nothing from Jupyter,
so the parsing is tested as it is.

Everything tool-controlled in the line is bounded and made visible: a
control or bidi character shows as ``[U+…]`` (newlines and tabs too: the
question is one line), so a tool cannot forge a second line or reorder
what the person approves.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from dsh_nb.cards.escape import visible

__all__ = [
    "APPROVAL_CHOICES",
    "MAX_ASKS",
    "Choice",
    "PersonAnswer",
    "Question",
    "approval_question",
    "arguments_line",
    "converse",
    "one_line",
]

MAX_ASKS: Final = 4
"""The first ask and three more after answers that were not understood."""

_VALUE_CHARS: Final = 60
_ARGS_CHARS: Final = 240
_TEXT_CHARS: Final = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """One answer: its ``value``, its button ``label``, the words that pick it."""

    value: str
    label: str
    words: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PersonAnswer:
    """How a question ended.

    ``action`` is ``accept`` (``value`` holds the answer), ``decline`` (the
    person said no, or gave no answer that was understood), ``cancel``
    (timeout, stop button, the call aborted) or ``unavailable`` (nobody can
    be asked: a headless run). ``note`` says why, for people.
    """

    action: Literal["accept", "decline", "cancel", "unavailable"]
    value: Any = None
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    """What to ask a person, for any channel.

    Parameters
    ----------
    text
        The question, shown as one line (bounded, controls made visible).
    choices
        The answers, for a question with fixed answers; empty for a free
        answer, which ``parse`` turns into a value.
    empty
        The choice value an empty line picks; None: an empty line declines.
    parse
        For a free answer: the typed text to a value; raising ``ValueError``
        (or ``TypeError``) with a message asks again.
    """

    text: str
    choices: tuple[Choice, ...] = ()
    empty: str | None = None
    parse: Callable[[str], Any] | None = None

    def line(self) -> str:
        """The one line a stdin prompt shows, answers listed at its end."""
        if not self.choices:
            return f"{one_line(self.text, _TEXT_CHARS)} "
        listed = ", ".join("/".join(c.words) + f" = {c.label}" for c in self.choices)
        return f"{one_line(self.text, _TEXT_CHARS)} [{listed}]: "

    def read(self, typed: str) -> PersonAnswer | str:
        """Read one typed answer: the answer, or why it was not understood."""
        word = typed.strip()
        if word == "\x04":  # a frontend's end of input
            word = ""
        if self.choices:
            lowered = word.lower()
            if not lowered:
                if self.empty is None:
                    return PersonAnswer(action="decline", note="no answer")
                return PersonAnswer(action="accept", value=self.empty)
            for choice in self.choices:
                if lowered in choice.words:
                    return PersonAnswer(action="accept", value=choice.value)
            words = ", ".join(w for c in self.choices for w in c.words[:1])
            return (
                f"{one_line(word, _VALUE_CHARS)!r} is not one of the answers ({words})"
            )
        if not word:
            return PersonAnswer(action="decline", note="no answer")
        if self.parse is None:
            return PersonAnswer(action="accept", value=word)
        try:
            return PersonAnswer(action="accept", value=self.parse(word))
        except (ValueError, TypeError) as exc:
            return one_line(str(exc) or f"{word!r} is not understood", _VALUE_CHARS)


APPROVAL_CHOICES: Final = (
    Choice(value="allow-once", label="allow once", words=("y", "yes", "once")),
    Choice(
        value="allow-session", label="allow for this session", words=("s", "session")
    ),
    Choice(value="reject", label="reject", words=("n", "no", "r", "reject")),
)


def one_line(text: str, limit: int) -> str:
    """``text`` on one line: controls as ``[U+…]``, cut at ``limit`` chars."""
    shown = visible(text).replace("\n", "[U+000A]").replace("\t", "[U+0009]")
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def arguments_line(arguments: Any) -> str:
    """A call's arguments as ``key=value, …``, each value and the whole bounded."""
    if not isinstance(arguments, Mapping):
        return one_line(_text(arguments), _ARGS_CHARS)
    if not arguments:
        return "no arguments"
    parts = [
        f"{one_line(str(key), _VALUE_CHARS)}={one_line(_text(value), _VALUE_CHARS)}"
        for key, value in arguments.items()
    ]
    return one_line(", ".join(parts), _ARGS_CHARS)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value  # as people read it; one_line() shows its controls
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def approval_question(
    tool_name: str, *, reason: str | None = None, arguments: Any = None
) -> Question:
    """The approval as a question: tool, reason and arguments on one line."""
    text = f"Approve tool call? {one_line(tool_name, _VALUE_CHARS)}"
    if reason:
        text += f": {one_line(reason, _VALUE_CHARS * 2)}"
    if arguments is not None:
        text += f" | {arguments_line(arguments)}"
    return Question(text=text, choices=APPROVAL_CHOICES, empty="reject")


async def converse(
    question: Question, read: Callable[[str], Awaitable[str]]
) -> PersonAnswer:
    """Ask ``question`` through ``read`` (one line out, one line back).

    An answer that is not understood asks again, saying why, at most
    ``MAX_ASKS - 1`` more times; then the question is declined.
    """
    why = ""
    for _ in range(MAX_ASKS):
        answer = question.read(await read(why + question.line()))
        if isinstance(answer, PersonAnswer):
            return answer
        why = f"{answer}. "
    return PersonAnswer(
        action="decline", note=f"no answer understood after {MAX_ASKS} tries"
    )
