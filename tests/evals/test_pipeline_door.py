"""A trial runs through the registry's pipeline: policies, dry bodies, limits."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import responder as rsp
from evalkit import sdk_client

from dsh_nb.evals import Case, EvalProgress, call, run_eval
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn
from dsh_nb.tools import (
    Agent,
    ApprovalService,
    Ask,
    ToolExecutionInput,
    ToolRegistry,
    tool,
)

RAN: list[str] = []


def counting() -> ToolRegistry:
    @tool
    def get_weather(city: str, unit: str = "celsius") -> str:
        """The weather."""
        RAN.append(city)
        return "sunny"

    @tool
    def get_time(city: str) -> str:
        """The time."""
        RAN.append(city)
        return "noon"

    reg = ToolRegistry()
    reg.register(get_weather)
    reg.register(get_time)
    return reg


def weather_turn(*names: str) -> Turn:
    return Turn(
        tool_calls=tuple(
            ToolCallSpec(name=n, arguments=json.dumps({"city": "Oslo"})) for n in names
        )
    )


CASE = Case("CASE-2: weather in Oslo?", expect=call("get_weather", city="Oslo"))


@pytest.mark.parametrize(("execute", "ran"), [("dry", []), ("real", ["Oslo"])])
async def test_dry_runs_no_body_real_does(execute: str, ran: list[str]) -> None:
    RAN.clear()
    reg = counting()
    with ReplayServer([weather_turn("get_weather"), Turn(text="ok")]) as srv:
        report = await run_eval(
            [CASE],
            model="m",
            client=sdk_client("openai", srv),
            registry=reg,
            execute=execute,
            progress=False,
        )
    assert RAN == ran
    (trial,) = report.trials
    assert trial.passed
    text = trial.calls[0].result["content"][0]["text"]
    assert text == (
        "sunny" if execute == "real" else "ok (dry run: the tool was not run)"
    )
    # The run's hooks are gone: another caller of the registry runs bodies.
    RAN.clear()
    run = await reg.run(
        ToolExecutionInput(
            call_id="x",
            name="get_weather",
            arguments={"city": "Rome"},
            agent=Agent("a"),
        )
    )
    assert run.result.text == "sunny" and RAN == ["Rome"]


async def test_policies_guards_and_approvals_apply() -> None:
    reg = counting()
    reg.approval = ApprovalService()
    reg.on_pre_execute(
        lambda ex, next_: (
            Ask("weather needs approval") if ex.name == "get_weather" else next_()
        )
    )
    reg.guard(lambda ex: "no time today" if ex.name == "get_time" else None)
    with ReplayServer(
        [weather_turn("get_weather", "get_time"), Turn(text="ok")]
    ) as srv:
        report = await run_eval(
            [CASE],
            model="m",
            client=sdk_client("openai", srv),
            registry=reg,
            progress=False,
        )
        system = srv.requests[0].body["messages"][0]
    (trial,) = report.trials
    weather, time_ = trial.calls
    assert (weather.status, weather.approval) == ("done", "allowed-once")
    assert time_.status == "denied"
    assert "no time today" in time_.result["content"][0]["text"]
    assert not trial.selected  # an extra call
    assert system["role"] == "system"  # the approval section, as Chat sends it
    # A "never" policy still rejects in a dry run.
    reg.approval = ApprovalService(policy="never")
    with ReplayServer([weather_turn("get_weather"), Turn(text="ok")]) as srv:
        report = await run_eval(
            [CASE],
            model="m",
            client=sdk_client("openai", srv),
            registry=reg,
            progress=False,
        )
    assert report.trials[0].calls[0].status == "denied"
    assert report.trials[0].calls[0].approval == "rejected"


async def test_unknown_tools_and_bad_json_are_journaled() -> None:
    turn = Turn(
        tool_calls=(
            ToolCallSpec(name="get_wether", arguments='{"city": "Oslo"}'),
            ToolCallSpec(name="get_weather", arguments='{"city": '),
        )
    )
    with ReplayServer([turn, Turn(text="ok")]) as srv:
        report = await run_eval(
            [CASE],
            model="m",
            client=sdk_client("openai", srv),
            registry=counting(),
            progress=False,
        )
    (trial,) = report.trials
    unknown, broken = trial.calls
    assert unknown.code == "UNKNOWN_TOOL" and not unknown.refused
    assert broken.stage == "arguments" and broken.refused
    assert not trial.selected and not trial.args_valid_first_try
    assert trial.recovered is False


class Counting:
    """The real SDK client, counting the requests in flight."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.now = 0
        self.most = 0
        self.chat = self
        self.completions = self

    async def create(self, **kwargs: Any) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            return await self.real.chat.completions.create(**kwargs)
        finally:
            self.now -= 1


async def test_concurrency_bounds_the_requests_in_flight() -> None:
    with ReplayServer(rsp.Responder(delay=0.05)) as srv:
        client = Counting(sdk_client("openai", srv))
        report = await run_eval(
            rsp.cases(),
            model="m",
            client=client,
            registry=rsp.registry(),
            trials=5,
            concurrency=4,
            progress=False,
        )
    assert len(report.trials) == 40
    assert client.most == 4


async def test_an_interrupt_keeps_the_trials_done(tmp_path: Path) -> None:
    progress = EvalProgress()
    path = tmp_path / "run.jsonl"
    reg = rsp.registry()
    with ReplayServer(rsp.Responder(delay=0.05)) as srv:
        task = asyncio.ensure_future(
            run_eval(
                rsp.cases(),
                model="m",
                client=sdk_client("openai", srv),
                registry=reg,
                trials=10,
                concurrency=2,
                record=str(path),
                progress=progress,
            )
        )
        while len(progress.results) < 5:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    done = len(progress.results)
    assert 5 <= done < 80
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[-1] == {"type": "end", "trials": done, "interrupted": True}
    assert sum(x["type"] == "verdict" for x in lines) == done
    assert not reg._execute.for_scope(None)  # the dry hook is gone


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"trials": 0}, "trials must be a positive int"),
        ({"concurrency": 1.5}, "concurrency must be a positive int"),
        ({"execute": "wet"}, 'execute must be "dry" or "real"'),
        ({"provider": "x"}, "provider must be"),
        ({"model": ""}, "needs model="),
        ({"record": "a", "replay": "b"}, "not both"),
        ({"variants": {"a": ToolRegistry()}}, "registry= or variants="),
        ({"registry": None}, "brings no tools and the run has no registry"),
        ({"progress": "yes"}, "progress must be"),
    ],
)
async def test_bad_options_are_named(kwargs: dict[str, Any], message: str) -> None:
    options: dict[str, Any] = {
        "model": "m",
        "client": object(),
        "registry": ToolRegistry(),
        "progress": False,
        **kwargs,
    }
    with pytest.raises((ValueError, TypeError), match=message):
        await run_eval([CASE], **options)


async def test_bad_cases_are_named() -> None:
    with pytest.raises(TypeError, match="list of Case"):
        await run_eval(CASE, model="m", client=object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"cases\[1\] is a str"):
        await run_eval([CASE, "x"], model="m", client=object())  # type: ignore[list-item]
    twice = Case("x", expect=call("a"), id="same")
    with pytest.raises(ValueError, match="two cases have the id 'same'"):
        await run_eval(
            [twice, twice], model="m", client=object(), registry=ToolRegistry()
        )
    own = Case("x", expect=call("a"), tools=[], id="own")
    with pytest.raises(ValueError, match="brings its own tools"):
        await run_eval(
            [own], model="m", client=object(), variants={"a": ToolRegistry()}
        )
