"""``Case(answers=...)``: a case's scripted answers to a tool's ``ctx.ask``.

The model is the practice model (a Python function, offline); the tool is
a real signature tool that asks which file to use, run for real through
``run_eval``'s runner, so the answer reaches its body through its
``ToolContext`` as a person's would in a notebook.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest

from dsh_nb.evals import Case, PracticeModel, PracticeRequest, call, run_eval
from dsh_nb.evals.conversation import TrialTools, Turn
from dsh_nb.evals.convrun import play_turns
from dsh_nb.tools import Answer, ToolContext, ToolRegistry, tool

QUESTION = "Which file should I use?"


@tool
async def pick(folder: str, ctx: ToolContext) -> str:
    """Summarise one file of a folder, asking which."""
    answer = await ctx.ask(QUESTION, type=Literal["a.csv", "b.csv"])
    if answer.accepted:
        return f"used {folder}/{answer.value}"
    return f"no file ({answer.action})"


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(pick)
    return registry


async def _model(request: PracticeRequest) -> Any:
    """Calls ``pick`` once, then repeats the tool's answer as its reply."""
    if request.step > 1:
        return str(request.results[0]["content"])
    return [("pick", {"folder": "data"})]


def _case(id: str, answers: Any) -> Case:
    return Case(
        f"Summarise a file ({id})",
        expect=call("pick", folder="data"),
        id=id,
        answers=answers,
    )


def _replies(report: Any) -> dict[str, str]:
    out = {}
    for trial in report.trials:
        tool_messages = [m for m in trial.messages if m["role"] == "tool"]
        out[trial.case_id] = str(tool_messages[0]["content"])
    return out


async def test_scripted_answers_reach_the_tool_in_a_real_run() -> None:
    asked: list[str] = []

    def by_text(question: Any) -> Any:
        asked.append(question.message)
        assert question.single and "enum" in str(question.schema)
        return "a.csv" if question.message == QUESTION else None

    cases = [
        _case("answered", {QUESTION: "b.csv"}),
        _case("unanswered", None),
        _case("other-question", {"Something else?": "b.csv"}),
        _case("cancelled", {QUESTION: Answer("cancel")}),
        _case("explicit", {QUESTION: Answer("accept", "a.csv")}),
        _case("misfit", {QUESTION: "c.csv"}),
        _case("callable", by_text),
    ]
    report = await run_eval(
        cases,
        model=PracticeModel(_model),
        registry=_registry(),
        execute="real",
        progress=False,
    )
    assert _replies(report) == {
        "answered": "used data/b.csv",
        "unanswered": "no file (decline)",
        "other-question": "no file (decline)",
        "cancelled": "no file (cancel)",
        "explicit": "used data/a.csv",
        "misfit": "no file (decline)",  # an answer that does not fit the type
        "callable": "used data/a.csv",
    }
    assert asked == [QUESTION]
    assert all(t.passed for t in report.trials)


async def test_a_dry_run_never_reaches_the_question() -> None:
    asked: list[object] = []
    case = _case("dry", lambda q: asked.append(q) or "a.csv")
    report = await run_eval(
        [case], model=PracticeModel(_model), registry=_registry(), progress=False
    )
    assert _replies(report)["dry"].startswith("ok (dry run")
    assert asked == []


async def test_a_conversation_hears_its_answers_every_turn() -> None:
    def tools() -> TrialTools:
        picked: list[str] = []

        @tool(name="pick")
        async def pick_and_keep(folder: str, ctx: ToolContext) -> str:
            answer = await ctx.ask(QUESTION, type=Literal["a.csv", "b.csv"])
            picked.append(str(answer.value) if answer.accepted else answer.action)
            return f"picked {picked[-1]}"

        registry = ToolRegistry()
        registry.register(pick_and_keep)
        return TrialTools(registry, state=picked)

    def both(answers: Any) -> Case:
        return Case(
            ["Summarise a file.", Turn("And again.")],
            expect=[call("pick"), call("pick")],
            tools=tools,
            id="conv" if answers else "conv-unanswered",
            answers=answers,
            end_state=lambda picked: picked == ["a.csv", "a.csv"],
        )

    report = await run_eval(
        [both({QUESTION: "a.csv"}), both(None)],
        model=PracticeModel(_model),
        execute="real",
        progress=False,
    )
    answered, unanswered = report.trials
    contents = [str(m["content"]) for m in answered.messages if m["role"] == "tool"]
    assert contents == ["picked a.csv", "picked a.csv"]
    assert answered.passed and not unanswered.passed
    # Graded with no model: play_turns hears the same answers.
    turns = [[("pick", {"folder": "data"})], [("pick", {"folder": "x"})]]
    assert await play_turns(both({QUESTION: "a.csv"}), turns) is None
    broken = await play_turns(both(None), turns)
    assert broken is not None and "end state" in broken.why


def test_malformed_answers_are_a_clear_error() -> None:
    with pytest.raises(TypeError, match=r"answers=.*message text"):
        _case("bad", {1: "a.csv"})
    with pytest.raises(TypeError, match=r"answers=.*not int"):
        _case("bad", 3)
    frozen = _case("ok", {QUESTION: "a.csv"})
    assert frozen.answers is not None and dict(frozen.answers) == {QUESTION: "a.csv"}
    with pytest.raises(TypeError):
        frozen.answers[QUESTION] = "b.csv"  # type: ignore[index]
