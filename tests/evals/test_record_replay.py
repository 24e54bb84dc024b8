"""record= writes every request, response and verdict; replay= needs no network."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
import responder as rsp
from evalkit import sdk_client

from dsh_nb.evals import ReplayError, run_eval
from dsh_nb.models.replay_server import ReplayServer

PROVIDERS = ["openai", "anthropic"]


def verdicts(report: Any) -> list[dict[str, Any]]:
    out = []
    for trial in report.trials:
        data = trial.to_json()
        data.pop("latency")
        out.append(data)
    return out


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_replay_regrades_with_no_network(
    provider: str, server: ReplayServer, tmp_path: Path, monkeypatch: Any
) -> None:
    path = tmp_path / "run.jsonl"
    live = await run_eval(
        rsp.cases(),
        model="replay-model",
        client=sdk_client(provider, server),
        provider=provider,
        registry=rsp.registry(),
        trials=10,
        record=str(path),
        progress=False,
    )
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "start" and kinds[-1] == "end"
    assert kinds.count("exchange") == len(server.requests)
    assert kinds.count("verdict") == 80
    assert server.token not in path.read_text()  # no key is ever recorded
    server.stop()

    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("replay opened a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    replayed = await run_eval(
        rsp.cases(),
        model="replay-model",
        provider=provider,
        registry=rsp.registry(),
        trials=10,
        replay=str(path),
        progress=False,
    )
    assert verdicts(replayed) == verdicts(live)
    assert replayed.summary() == live.summary()
    assert replayed.meta["replayed"] is True
    # Latency is the recorded model time, not the replay's microseconds.
    assert sum(t.latency for t in replayed.trials) >= 0.5 * sum(
        t.latency for t in live.trials
    )
    again = await run_eval(
        rsp.cases(),
        model="replay-model",
        provider=provider,
        registry=rsp.registry(),
        trials=10,
        replay=str(path),
        progress=False,
    )
    assert again.to_json() == replayed.to_json()  # byte for byte, every time


async def test_a_changed_tool_cannot_be_replayed(
    server: ReplayServer, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    await run_eval(
        rsp.cases()[:2],
        model="replay-model",
        client=sdk_client("openai", server),
        registry=rsp.registry(),
        record=str(path),
        progress=False,
    )
    from dsh_nb.tools import ToolRegistry, tool

    @tool
    def get_weather(city: str) -> str:
        """A different description."""
        return ""

    other = ToolRegistry()
    other.register(get_weather)
    with pytest.raises(ReplayError, match="differs from the recording in: tools"):
        await run_eval(
            rsp.cases()[:2],
            model="replay-model",
            registry=other,
            replay=str(path),
            progress=False,
        )
    with pytest.raises(
        ReplayError, match="has no answer for case 'weather-Paris' trial 2"
    ):
        await run_eval(
            rsp.cases()[:2],
            model="replay-model",
            registry=rsp.registry(),
            trials=2,
            replay=str(path),
            progress=False,
        )
    with pytest.raises(ValueError, match="pass provider='openai'"):
        await run_eval(
            rsp.cases()[:2],
            model="replay-model",
            provider="anthropic",
            registry=rsp.registry(),
            replay=str(path),
            progress=False,
        )
    broken = tmp_path / "broken.jsonl"
    broken.write_text(path.read_text().splitlines()[0] + "\n\n[1]\n")
    with pytest.raises(ValueError, match=f"^{broken}:3: a line must be an object"):
        await run_eval(
            rsp.cases()[:1],
            model="m",
            registry=rsp.registry(),
            replay=str(broken),
            progress=False,
        )
    bad = tmp_path / "not.jsonl"
    bad.write_text('{"type": "x"}\n')
    with pytest.raises(ValueError, match="is not an evaluation recording"):
        await run_eval(
            rsp.cases()[:1],
            model="m",
            registry=rsp.registry(),
            replay=str(bad),
            progress=False,
        )


async def test_a_failed_request_is_recorded_and_replayed(tmp_path: Path) -> None:
    from dsh_nb.models.scripted import ApiError

    path = tmp_path / "run.jsonl"
    with ReplayServer([ApiError(status=429, message="slow down")]) as srv:
        live = await run_eval(
            rsp.cases()[:1],
            model="replay-model",
            client=sdk_client("openai", srv),
            registry=rsp.registry(),
            record=str(path),
            progress=False,
        )
    (trial,) = live.trials
    assert not trial.answered and "429" in (trial.error or "")
    assert live.errors == 1 and live.summary()["passed"].n == 0
    replayed = await run_eval(
        rsp.cases()[:1],
        model="replay-model",
        registry=rsp.registry(),
        replay=str(path),
        progress=False,
    )
    assert replayed.trials[0].error == trial.error


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("direction", ["kernel-to-script", "script-to-kernel"])
async def test_the_approval_marker_does_not_break_replay(
    provider: str, direction: str, server: ReplayServer, tmp_path: Path
) -> None:
    """A kernel's registry has an approval service (its system prompt says
    ``<approval-policy value="ask"/>``); a script's has none."""
    from dsh_nb.tools import ApprovalService

    def registry(with_service: bool) -> Any:
        reg = rsp.registry()
        if with_service:
            reg.approval = ApprovalService("ask")
        return reg

    kernel_first = direction == "kernel-to-script"
    path = tmp_path / "run.jsonl"
    cases = rsp.cases()
    cases[0] = type(cases[0])(
        cases[0].prompt, expect=cases[0].expect, id=cases[0].id, system="Be brief."
    )
    live = await run_eval(
        cases,
        model="replay-model",
        client=sdk_client(provider, server),
        provider=provider,
        registry=registry(kernel_first),
        trials=2,
        record=str(path),
        progress=False,
    )
    marker = '<approval-policy value=\\"ask\\"/>'
    assert (marker in path.read_text()) is kernel_first
    replayed = await run_eval(
        cases,
        model="replay-model",
        provider=provider,
        registry=registry(not kernel_first),
        trials=2,
        replay=str(path),
        progress=False,
    )
    assert verdicts(replayed) == verdicts(live)
    # The "never" policy's sentence tells the model something: it counts.
    never = registry(True)
    assert never.approval is not None
    never.approval = ApprovalService("never")
    if kernel_first:
        return
    with pytest.raises(ReplayError, match="differs from the recording in: "):
        await run_eval(
            cases,
            model="replay-model",
            provider=provider,
            registry=never,
            trials=2,
            replay=str(path),
            progress=False,
        )
