"""The practice model: a Python function plays the model, offline, no key."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
import responder as rsp

from dsh_nb.evals import (
    Case,
    PracticeModel,
    PracticeRequest,
    call,
    no_call,
    noisy,
    oracle,
    run_eval,
)
from dsh_nb.models import Chat
from dsh_nb.models.scripted import ApiError

PROVIDERS = ["openai", "anthropic"]


@pytest.fixture
def no_network(monkeypatch: Any) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the practice model opened a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_oracle_passes_every_case(provider: str, no_network: None) -> None:
    cases = rsp.cases()
    report = await run_eval(
        cases,
        model=oracle(cases),
        provider=provider,
        registry=rsp.registry(),
        trials=3,
        progress=False,
    )
    summary = report.summary()
    assert summary["passed"].successes == summary["passed"].n == 24
    assert report.meta["model"] == "oracle"
    # Each call case: a call, then text once the tool answered.
    weather = [t for t in report.trials if t.case_id.startswith("weather")]
    assert {t.steps for t in weather} == {2}
    assert weather[0].calls[0].arguments == {"city": "Paris", "unit": "celsius"}


async def test_the_oracle_fills_any_and_one_of_from_the_schema(
    no_network: None,
) -> None:
    from dsh_nb.evals import ANY, maybe, one_of

    cases = [
        Case("Weather?", expect=call("get_weather", city=ANY, unit=one_of("celsius"))),
        Case("Time?", expect=call("get_time", city=maybe("Oslo"))),
        Case("Hello", expect=no_call()),
    ]
    report = await run_eval(
        cases, model=oracle(cases), registry=rsp.registry(), progress=False
    )
    assert [t.passed for t in report.trials] == [True, True, True]
    assert report.trials[0].calls[0].arguments == {
        "city": "example",
        "unit": "celsius",
    }


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_noisy_makes_the_mistakes_at_the_rates_chosen(
    provider: str, no_network: None
) -> None:
    cases = rsp.cases()[:6]  # the call cases
    rates = {
        "wrong_tool": 0.1,
        "wrong_argument": 0.2,
        "invalid_json": 0.15,
        "no_call": 0.05,
    }
    report = await run_eval(
        cases,
        model=noisy(cases, seed=7, **rates),
        provider=provider,
        registry=rsp.registry(),
        trials=60,
        concurrency=16,
        progress=False,
    )
    s = report.summary()
    truth = {
        "selected": 1 - rates["wrong_tool"] - rates["no_call"],
        "args_valid_first_try": 1 - rates["invalid_json"],
        "passed": 1 - sum(rates.values()),
    }
    for metric, value in truth.items():
        assert s[metric].low <= value <= s[metric].high, (metric, s[metric])
    # Invalid JSON is refused, then answered right: every one recovers.
    assert s["recovered"].n == 360 - s["args_valid_first_try"].successes
    assert s["recovered"].successes == s["recovered"].n > 0
    # The same seed gives the same report at any concurrency.
    again = await run_eval(
        cases,
        model=noisy(cases, seed=7, **rates),
        provider=provider,
        registry=rsp.registry(),
        trials=60,
        concurrency=1,
        progress=False,
    )
    assert again.summary() == report.summary()


def test_noisy_refuses_rates_that_are_not_rates() -> None:
    with pytest.raises(ValueError, match="add up to more than 1"):
        noisy([], wrong_tool=0.6, no_call=0.6)
    with pytest.raises(ValueError, match="between 0 and 1"):
        noisy([], invalid_json=-0.1)
    with pytest.raises(TypeError, match="list of Case"):
        oracle("not cases")  # type: ignore[arg-type]


async def test_a_function_of_the_request_plays_the_model(no_network: None) -> None:
    seen: list[PracticeRequest] = []

    async def model(request: PracticeRequest) -> Any:
        seen.append(request)
        if request.step > 1:
            assert request.results and not request.results[0]["is_error"]
            return "It is sunny."
        if "weather" in request.prompt:
            return [("get_weather", {"city": "Lima", "unit": "celsius"})]
        return "Hi!"

    cases = [
        Case("The weather in Lima?", expect=call("get_weather", city="Lima")),
        Case("Hi", expect=no_call(), system="Be brief."),
    ]
    report = await run_eval(
        cases, model=PracticeModel(model), registry=rsp.registry(), progress=False
    )
    assert [t.passed for t in report.trials] == [True, True]
    first = seen[0]
    assert first.tool_names == ["get_weather", "get_time"]
    assert first.tools[0]["parameters"]["required"] == ["city", "unit"]
    assert first.step == 1 and first.model == "practice"
    assert any(r.system == "Be brief." for r in seen)
    # The same model talks to a Chat, as any SDK client would.
    chat = Chat("practice", client=PracticeModel(model), stream=False)
    reply = await chat.send("hello")
    assert reply.text == "Hi!"


async def test_a_broken_practice_model_is_a_request_error(no_network: None) -> None:
    cases = rsp.cases()[:2]

    def busy(request: PracticeRequest) -> Any:
        return ApiError(status=429, message="slow down")

    def wrong(request: PracticeRequest) -> Any:
        return 42

    report = await run_eval(
        cases, model=PracticeModel(busy), registry=rsp.registry(), progress=False
    )
    assert [t.state for t in report.trials] == ["error", "error"]
    assert "answered 429" in str(report.trials[0].error)
    report = await run_eval(
        cases, model=PracticeModel(wrong), registry=rsp.registry(), progress=False
    )
    assert "returns text, a list of (name, arguments) calls" in str(
        report.trials[0].error
    )
    with pytest.raises(ValueError, match="is its own client"):
        await run_eval(cases, model=oracle(cases), client=object())
    with pytest.raises(TypeError, match="takes a function"):
        PracticeModel("gpt")  # type: ignore[arg-type]


async def test_a_practice_run_records_and_replays(tmp_path: Path) -> None:
    cases = rsp.cases()
    path = tmp_path / "practice.jsonl"
    live = await run_eval(
        cases,
        model=noisy(cases, wrong_argument=0.5),
        registry=rsp.registry(),
        trials=4,
        record=str(path),
        progress=False,
    )
    replayed = await run_eval(
        cases,
        model="noisy",
        registry=rsp.registry(),
        trials=4,
        replay=str(path),
        progress=False,
    )
    assert replayed.summary() == live.summary()


async def test_the_oracle_answers_bfcl_cases(no_network: None) -> None:
    pytest.importorskip("bfcl_eval")
    from dsh_nb.evals import bfcl

    cases = bfcl.load("simple_python", limit=30) + bfcl.load("irrelevance", limit=10)
    report = await run_eval(cases, model=oracle(cases), progress=False)
    assert report.summary()["selected"].successes == 40
