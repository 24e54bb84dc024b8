"""A malformed evaluation file fails as one ValueError naming the file and line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import responder as rsp

from dsh_nb.evals import EvalReport, bfcl, run_eval
from dsh_nb.evals.recording import FORMAT

START = json.dumps({"type": "start", "format": FORMAT, "provider": "openai"})
GOOD = {
    "type": "exchange",
    "variant": None,
    "case": "weather-Paris",
    "trial": 1,
    "step": 1,
    "request": {},
    "response": {},
    "elapsed": 0.1,
}
DEEP = "[" * 100_000 + "]" * 100_000


def bad(**change: Any) -> str:
    line = {**GOOD, **change}
    return json.dumps({k: v for k, v in line.items() if v != "DROP"})


@pytest.mark.parametrize(
    "line",
    [
        bad(case="DROP"),
        bad(trial="1"),
        bad(trial=True),
        bad(step=10**400),
        bad(step=1e400),
        bad(variant=7),
        bad(error=[1]),
        bad(response=None),
        bad(elapsed="fast"),
        json.dumps({"type": "verdict", "result": [1]}),
        json.dumps({"type": "verdict", "result": {"caseId": 3, "trial": 1}}),
        DEEP,
        '{"type": "exchange"',
    ],
)
async def test_a_bad_recording_line_names_its_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(START + "\n" + json.dumps(GOOD) + "\n\n" + line + "\n")
    with pytest.raises(ValueError, match=f"^{path}:4: "):
        await run_eval(
            rsp.cases()[:1],
            model="m",
            registry=rsp.registry(),
            replay=str(path),
            progress=False,
        )


def test_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    from dsh_nb.evals.recording import Recording

    with pytest.raises(
        ValueError, match="is a FIFO \\(named pipe\\), not a regular file"
    ):
        Recording.load(fifo)
    with pytest.raises(
        ValueError, match="is a FIFO \\(named pipe\\), not a regular file"
    ):
        EvalReport.load(fifo)


def saved() -> dict[str, Any]:
    trial = {
        "caseId": "a",
        "trial": 1,
        "variant": None,
        "selected": True,
        "argsValidFirstTry": True,
        "argsCorrect": True,
        "recovered": None,
        "passed": True,
        "steps": 1,
        "latency": 0.1,
        "usage": {},
        "calls": [{"step": 1, "name": "t", "arguments": {}}],
        "messages": [{"role": "user", "content": "hi"}],
    }
    return {
        "format": "dsh-eval-report/1",
        "meta": {},
        "variants": None,
        "cases": [{"id": "a", "prompt": "hi", "expect": "t()", "expected": ["t"]}],
        "trials": [trial],
    }


@pytest.mark.parametrize(
    ("where", "key", "value", "says"),
    [
        ("trials", "passed", "false", "trials[0]: 'passed' must be true or false"),
        ("trials", "trial", 10**400, "trials[0]: 'trial' is too large"),
        ("trials", "latency", 1e400, "trials[0]: 'latency' must be finite"),
        ("trials", "caseId", None, "trials[0]: 'caseId' must be a string"),
        ("trials", "calls", [{"step": 1, "name": "t", "result": [1]}], "'result'"),
        ("trials", "messages", ["text"], "'messages' must be a list of objects"),
        ("trials", "usage", {"inputTokens": "9"}, "'inputTokens'"),
        ("cases", "displayNames", [1], "cases[0]: 'displayNames' must be an obj"),
        ("cases", "tags", "abc", "cases[0]: 'tags' must be a list of strings"),
    ],
)
def test_a_bad_saved_report_names_the_part(
    tmp_path: Path, where: str, key: str, value: Any, says: str
) -> None:
    data = saved()
    data[where][0][key] = value
    path = tmp_path / "report.json"
    path.write_text(
        json.dumps(data)
        if value != 1e400
        else json.dumps(data).replace("Infinity", "1e400")
    )
    with pytest.raises(ValueError, match=f"^{path}: ") as info:
        EvalReport.load(path)
    assert says in str(info.value)


def test_a_good_saved_report_draws_and_a_deep_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(saved()))
    assert "dsh-EvalReport" in EvalReport.load(path)._repr_html_()
    deep = saved()
    deep["trials"][0]["calls"][0]["arguments"] = json.loads("[" * 500 + "]" * 500)
    path.write_text(json.dumps(deep))
    with pytest.raises(ValueError, match="nested deeper than"):
        EvalReport.load(path)
    path.write_text(DEEP)
    with pytest.raises(ValueError, match="nested too deep"):
        EvalReport.load(path)


@pytest.mark.parametrize(
    "line",
    [
        "[1]",
        '{"id": 3}',
        DEEP,
        '{"id": "simple_python_0", "question": 5, "function": []}',
        '{"id": "simple_python_0", "question": [[]], "function": [{"name": 1}]}',
        '{"id": "simple_python_0", "question": [[]], "function": "x"}',
    ],
)
def test_a_bad_bfcl_line_names_its_line(tmp_path: Path, line: str) -> None:
    (tmp_path / "possible_answer").mkdir()
    (tmp_path / "BFCL_v4_irrelevance.json").write_text("\n" + line + "\n")
    with pytest.raises(ValueError, match=r"BFCL_v4_irrelevance\.json:2: "):
        bfcl.load("irrelevance", data_dir=tmp_path)
