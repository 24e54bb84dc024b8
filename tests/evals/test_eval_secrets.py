"""The model's API key never reaches a report, a recording or a saved report."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import openai
import responder as rsp

from dsh_nb.evals import EvalReport, run_eval
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ApiError


async def test_a_401_quoting_the_key_is_redacted_everywhere(tmp_path: Path) -> None:
    key = "sk-eval-" + secrets.token_hex(12)

    def refuse(request: Any) -> Any:
        return ApiError(status=401, message=f"Incorrect API key provided: {key}")

    record = tmp_path / "run.jsonl"
    saved = tmp_path / "report.json"
    with ReplayServer(refuse, token=key) as server:
        client = openai.AsyncOpenAI(
            base_url=server.openai_url, api_key=key, max_retries=0
        )
        report = await run_eval(
            rsp.cases()[:2],
            model="m",
            client=client,
            registry=rsp.registry(),
            record=str(record),
            progress=False,
        )
    assert report.errors == 2
    assert "[secret]" in str(report.trials[0].error)
    report.save(saved)
    shown = [
        str(report),
        report._repr_html_(),
        record.read_text(),
        saved.read_text(),
        EvalReport.load(saved)._repr_html_(),
    ]
    for text in shown:
        assert key not in text
    assert "[secret]" in record.read_text() and "[secret]" in saved.read_text()
