"""BFCL cases through run_eval: their own tools, the pipeline, BFCL's ids."""

from __future__ import annotations

import json
from typing import Any

import pytest
from evalkit import sdk_client

from dsh_nb.evals import bfcl, grade, run_eval
from dsh_nb.models.replay_server import RecordedRequest, ReplayServer
from dsh_nb.models.scripted import Reply, ToolCallSpec, Turn

pytest.importorskip("bfcl_eval")


def answering(cases: list[Any]) -> Any:
    """A model that sends each case's first possible answer."""
    by_prompt = {case.messages()[2]: case for case in cases}

    def answer(request: RecordedRequest) -> Reply:
        messages = request.body["messages"]
        if any(m["role"] == "assistant" for m in messages):
            return Turn(text="Done.")
        user = [m for m in messages if m["role"] == "user"][-1]["content"]
        calls = bfcl.reference_calls(by_prompt[user])
        return Turn(
            tool_calls=tuple(
                ToolCallSpec(name=c.name, arguments=json.dumps(dict(c.arguments)))
                for c in calls
            )
        )

    return answer


@pytest.mark.parametrize("category", ["simple_python", "parallel_multiple"])
async def test_possible_answers_pass_through_the_pipeline(category: str) -> None:
    # A few possible answers contradict their own document (see bfcl.md);
    # those fail graded directly, so they say nothing about the pipeline.
    cases = [
        case
        for case in bfcl.load(category, limit=15)
        if grade(case.expect, bfcl.reference_calls(case)).passed
    ]
    assert len(cases) >= 12
    with ReplayServer(answering(cases)) as server:
        report = await run_eval(
            cases,
            model="m",
            client=sdk_client("openai", server),
            progress=False,
        )
    failures = [
        (t.case_id, [(c.name, c.code, c.arguments) for c in t.first_step()])
        for t in report.failures()
    ]
    assert failures == []
    assert [t.case_id for t in report.trials] == [c.id for c in cases]
    assert report.summary()["args_valid_first_try"].successes == len(cases)
    shown = report.by_tool()
    assert any("." in name for name in shown) or category != "simple_python"
