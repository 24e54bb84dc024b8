"""Scripted answers to a tool's questions during an evaluation case.

A tool that asks (``await ctx.ask("Which file?", type=...)``) has nobody
to ask in an evaluation: a script's calls are declined. A case that tests
the path after a *yes* gives its answers as data, ``Case(...,
answers={...})``, and every trial's calls hear them through the runner's
``talk`` seam (:class:`ScriptedAnswers`), as a notebook's calls hear a
person. Answers are keyed by the question's message text, exactly as the
tool asks it, because that is what a person reads; a callable
``answers(question)`` decides for questions whose text varies. A question
no answer matches is a ``decline``, as in any script.

A value is the answer to a one-field question (``ctx.ask(msg, type=int)``
is answered by ``3``), a dict the content of a form
(``ctx.ask(msg, type=Model)``, ``ctx.ask_form``), and an
:class:`~dsh_nb.tools.context.Answer` says ``decline`` or ``cancel`` (or
an accepted value) outright. The tool's context checks a value against the
type asked for: one that does not fit is a ``decline`` there, journalled
like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from dsh_nb.tools.context import Answer, Question

__all__ = ["ScriptedAnswers", "check_answers"]

#: What ``Case(answers=...)`` holds: message text to answer, or a callable.
Answers = Mapping[str, Any] | Callable[[Question], Any]


def check_answers(answers: object) -> Answers | None:
    """``Case(answers=...)`` checked and frozen; a clear error if malformed."""
    if answers is None:
        return None
    if isinstance(answers, Mapping):
        bad = [k for k in answers if not isinstance(k, str)]
        if bad:
            raise TypeError(
                "Case(answers=...) maps a question's message text (str) to its "
                f"answer, not {bad[0]!r}"
            )
        return MappingProxyType(dict(answers))
    if callable(answers):
        return answers
    raise TypeError(
        "Case(answers=...) is a dict of message text to answer, or a callable "
        f"answers(question), not {type(answers).__name__}"
    )


def _answer(got: object, question: Question) -> Answer:
    """What the script said, as the Answer the tool's context reads."""
    if got is None:
        return Answer("decline")
    if isinstance(got, Answer):
        if got.action == "accept" and question.single and not _is_content(got.value):
            return Answer("accept", {"value": got.value})
        return got
    if question.single and not _is_content(got):
        return Answer("accept", {"value": got})
    return Answer("accept", got)


def _is_content(value: object) -> bool:
    """A one-field form's content is ``{"value": ...}``; anything else is a value."""
    return isinstance(value, dict) and set(value) == {"value"}


class ScriptedAnswers:
    """A hearer that answers ``ctx.ask`` from a case's scripted answers.

    Passed as ``CallRunner(registry, talk=ScriptedAnswers(answers))``; it
    has only ``ask``, so progress and log lines still go to the journal
    alone and ``sample`` stays unavailable.
    """

    def __init__(self, answers: Answers) -> None:
        self.answers = answers
        #: The questions asked, in order (what a failing case's author reads).
        self.asked: list[Question] = []

    async def ask(self, ctx: object, question: Question) -> Answer:
        self.asked.append(question)
        if isinstance(self.answers, Mapping):
            got = self.answers.get(question.message)
        else:
            got = self.answers(question)
        return _answer(got, question)
