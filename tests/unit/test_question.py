"""A question for a person: its one line and how a typed answer is read."""

from __future__ import annotations

import asyncio

import pytest

from dsh_nb.cards.question import (
    MAX_ASKS,
    PersonAnswer,
    Question,
    approval_question,
    converse,
)
from dsh_nb.notebook import frontend


def test_the_approval_line_names_tool_reason_and_bounded_arguments() -> None:
    q = approval_question(
        "rm\u202e", reason="it\ndeletes", arguments={"path": "a\tb", "n": 3}
    )
    line = q.line()
    assert line.startswith("Approve tool call? rm[U+202E]: it[U+000A]deletes | ")
    assert "path=a[U+0009]b, n=3" in line
    assert line.endswith("n/no/r/reject = reject]: ")
    long = approval_question("t", arguments={"x": "y" * 10_000}).line()
    assert len(long) < 500 and "…" in long


@pytest.mark.parametrize(
    ("typed", "value"),
    [
        ("y", "allow-once"),
        ("YES", "allow-once"),
        ("once", "allow-once"),
        ("s", "allow-session"),
        (" Session ", "allow-session"),
        ("n", "reject"),
        ("no", "reject"),
        ("r", "reject"),
        ("reject", "reject"),
        ("", "reject"),
        ("\x04", "reject"),
    ],
)
def test_every_documented_word(typed: str, value: str) -> None:
    assert approval_question("t").read(typed) == PersonAnswer(
        action="accept", value=value
    )


def test_an_unknown_word_says_why_and_shows_controls() -> None:
    why = approval_question("t").read("\x1b[2Jok")
    assert why == "'[U+001B][2Jok' is not one of the answers (y, s, n)"


def test_converse_asks_again_at_most_three_times() -> None:
    typed = iter(["a", "b", "c", "d", "y"])
    shown: list[str] = []

    async def read(line: str) -> str:
        shown.append(line)
        return next(typed)

    answer = asyncio.run(converse(approval_question("t"), read))
    assert len(shown) == MAX_ASKS == 4
    assert answer.action == "decline" and "4 tries" in answer.note
    assert shown[1].startswith("'a' is not one of the answers")


def test_a_free_question_parses_and_asks_again_on_an_error() -> None:
    typed = iter(["many", "12"])

    async def read(_line: str) -> str:
        return next(typed)

    question = Question(text="How many rows?", parse=int)
    assert asyncio.run(converse(question, read)) == PersonAnswer(
        action="accept", value=12
    )
    assert question.read("") == PersonAnswer(action="decline", note="no answer")


def test_choose_channel_per_mode() -> None:
    assert frontend.choose_channel("interactive", stdin=True) == "widgets"
    assert frontend.choose_channel("HEADLESS", stdin=True) == "headless"
    assert frontend.choose_channel("stdin", stdin=True) == "stdin"
    assert frontend.choose_channel("stdin", stdin=False) == "headless"
    assert frontend.choose_channel("auto", stdin=True) == "stdin"
    assert frontend.choose_channel("auto", stdin=False) == "headless"
    with pytest.raises(ValueError, match=r"\"stdin\".*DshConfig\.frontend"):
        frontend.choose_channel("console")


def test_allows_stdin_reads_the_request() -> None:
    def request(allow: object, msg_type: str = "execute_request") -> dict[str, object]:
        return {"header": {"msg_type": msg_type}, "content": {"allow_stdin": allow}}

    assert frontend.allows_stdin(request(True)) is True
    assert frontend.allows_stdin(request(False)) is False
    assert frontend.allows_stdin(request("yes")) is False
    assert frontend.allows_stdin(request(True, "comm_msg")) is False
