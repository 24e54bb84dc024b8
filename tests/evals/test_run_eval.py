"""run_eval through the official SDKs: the report finds the true rates."""

from __future__ import annotations

from typing import Any

import pytest
import responder as rsp
from evalkit import sdk_client

from dsh_nb.evals import EvalReport, run_eval
from dsh_nb.models.replay_server import ReplayServer

PROVIDERS = ["openai", "anthropic"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_report_finds_the_true_rates(
    provider: str, server: ReplayServer
) -> None:
    report = await run_eval(
        rsp.cases(),
        model="replay-model",
        client=sdk_client(provider, server),
        provider=provider,
        registry=rsp.registry(),
        trials=10,
        concurrency=8,
        progress=False,
    )
    assert len(report.trials) == rsp.TRUE["trials"]
    summary = report.summary()
    n = rsp.TRUE["trials"]
    for metric in ("selected", "args_valid_first_try", "args_correct", "passed"):
        assert (summary[metric].successes, summary[metric].n) == (
            rsp.TRUE[metric],
            n,
        ), metric
    assert (summary["recovered"].successes, summary["recovered"].n) == rsp.TRUE[
        "recovered"
    ]
    rate = summary["passed"]
    assert rate.low < rate.value < rate.high
    tools = report.by_tool()
    assert tools["get_weather"]["passed"].successes == 18
    assert tools["get_weather"]["passed"].n == 60
    assert tools["(no call)"]["selected"].successes == 16
    # Steps: right/wrong_value/wrong_tool/extra: 2; fixes: 3; no call: 1.
    requests = len(server.requests)
    assert sum(t.steps for t in report.trials) == requests
    assert sum(t.usage.input_tokens for t in report.trials) == 10 * requests
    assert len(report.failures()) == n - rsp.TRUE["passed"]


async def test_a_trial_reads_its_journal(server: ReplayServer) -> None:
    report = await run_eval(
        rsp.cases()[:1],
        model="replay-model",
        client=sdk_client("openai", server),
        registry=rsp.registry(),
        trials=10,
        progress=False,
    )
    by_plan: dict[str, list[Any]] = {}
    for trial in report.trials:
        ids = [m for m in trial.messages if m.get("role") == "assistant"]
        first = ids[0].get("tool_calls") or [{"id": "call-no_call-0"}]
        by_plan.setdefault(first[0]["id"].split("-")[1], []).append(trial)
    fix = by_plan["missing_fix"][0]
    assert not fix.args_valid_first_try and fix.recovered is True
    assert [c.code for c in fix.calls] == ["INVALID_ARGS", None]
    assert fix.calls[1].result["content"][0]["text"].startswith("ok (dry run")
    stuck = by_plan["wrong_type"][0]
    assert stuck.recovered is False and stuck.steps == 3
    assert by_plan["right"][0].recovered is None and by_plan["right"][0].passed


@pytest.mark.parametrize("max_steps", [1, 3])
async def test_recovered_needs_a_later_step(max_steps: int) -> None:
    """Only a later step can recover; a no-call case that called never does."""
    responder = rsp.Responder({"no_call": ("stray_bad",)})
    with ReplayServer(responder) as server:
        report = await run_eval(
            rsp.cases(),
            model="replay-model",
            client=sdk_client("openai", server),
            registry=rsp.registry(),
            trials=10,
            max_steps=max_steps,
            progress=False,
        )
    recovered = report.summary()["recovered"]
    # Refused first steps: 3 of 10 per call case, every no-call trial.
    assert recovered.n == 6 * 3 + 2 * 10
    assert recovered.successes == (0 if max_steps == 1 else 6 * 2)
    no_call = [t for t in report.trials if t.case_id.startswith("hello")]
    assert all(t.recovered is False for t in no_call)


async def test_save_load_and_html(server: ReplayServer, tmp_path: Any) -> None:
    report = await run_eval(
        rsp.cases(),
        model="replay-model",
        client=sdk_client("openai", server),
        registry=rsp.registry(),
        trials=5,
        progress=False,
    )
    path = tmp_path / "report.json"
    report.save(path)
    loaded = EvalReport.load(path)
    assert loaded.summary() == report.summary()
    assert loaded.to_json() == report.to_json()
    html = loaded._repr_html_()
    assert "<details" in html and "get_weather" in html
    assert html.count("dsh-EvalFailure") == len(report.failures())
