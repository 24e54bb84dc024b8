"""record= to an existing file resumes it: what was answered is not asked again."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import responder as rsp
from evalkit import sdk_client

from dsh_nb.evals import EvalProgress, run_eval
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ApiError
from dsh_nb.tools.audit.privatefile import PrivateFileError


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def verdicts(report: Any) -> list[dict[str, Any]]:
    out = []
    for trial in report.trials:
        data = trial.to_json()
        data.pop("latency")
        data.pop("messages", None)
        out.append(data)
    return out


async def test_a_rerun_asks_only_what_was_not_answered(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    cases = rsp.cases()
    # First run: every 4th request fails (a flaky endpoint).
    flaky = rsp.Responder()
    count = {"n": 0}

    def sometimes(request: Any) -> Any:
        count["n"] += 1
        if count["n"] % 4 == 0:
            return ApiError(status=503, message="busy")
        return flaky(request)

    with ReplayServer(sometimes) as srv:
        first = await run_eval(
            cases,
            model="replay-model",
            client=sdk_client("openai", srv),
            registry=rsp.registry(),
            trials=5,
            concurrency=1,
            record=str(path),
            max_request_errors=100,
            progress=False,
        )
    failed = {(t.case_id, t.trial) for t in first.trials if t.state == "error"}
    assert failed, "the flaky endpoint made no error"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # Second run, same file: only the trials that errored are asked.
    steady = rsp.Responder()
    with ReplayServer(steady) as srv:
        second = await run_eval(
            cases,
            model="replay-model",
            client=sdk_client("openai", srv),
            registry=rsp.registry(),
            trials=5,
            concurrency=1,
            record=str(path),
            progress=False,
        )
        asked = {json.dumps(r.body["messages"][0]["content"]) for r in srv.requests}
    assert second.errors == 0 and len(second.trials) == 40
    assert second.meta["resumed"] == 40 - len(failed)
    # Nothing answered the first time was asked again.
    first_steps = [r for r in srv.requests if len(r.body["messages"]) <= 2]
    assert len(first_steps) == len(failed)
    assert asked
    kept = [t for t in second.trials if (t.case_id, t.trial) not in failed]
    again = {(t.case_id, t.trial): t for t in first.trials}
    assert verdicts(type(second)(kept, cases=second.cases)) == verdicts(
        type(second)([again[(t.case_id, t.trial)] for t in kept], cases=second.cases)
    )
    # The file now holds the whole run: it replays with no network.
    kinds = [line["type"] for line in lines(path)]
    assert kinds.count("verdict") == 40 and kinds.count("start") == 1
    replayed = await run_eval(
        cases,
        model="replay-model",
        registry=rsp.registry(),
        trials=5,
        replay=str(path),
        progress=False,
    )
    assert verdicts(replayed) == verdicts(second)


async def test_an_interrupted_run_finishes_on_the_rerun(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    cases = rsp.cases()
    progress = EvalProgress()
    with ReplayServer(rsp.Responder(delay=0.02)) as srv:
        task = asyncio.ensure_future(
            run_eval(
                cases,
                model="replay-model",
                client=sdk_client("openai", srv),
                registry=rsp.registry(),
                trials=10,
                concurrency=4,
                record=str(path),
                progress=progress,
            )
        )
        while len(progress.results) < 20:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    done = len(progress.results)
    assert 20 <= done < 80
    assert lines(path)[-1] == {"type": "end", "trials": done, "interrupted": True}
    with ReplayServer(rsp.Responder()) as srv:
        report = await run_eval(
            cases,
            model="replay-model",
            client=sdk_client("openai", srv),
            registry=rsp.registry(),
            trials=10,
            record=str(path),
            progress=False,
        )
        firsts = [r for r in srv.requests if len(r.body["messages"]) <= 2]
    assert len(report.trials) == 80 and report.meta["resumed"] == done
    assert len(firsts) == 80 - done


async def test_a_resume_needs_the_same_settings(
    server: ReplayServer, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    await run_eval(
        rsp.cases()[:1],
        model="replay-model",
        client=sdk_client("openai", server),
        registry=rsp.registry(),
        record=str(path),
        progress=False,
    )
    with pytest.raises(ValueError, match="was recorded with model 'replay-model'"):
        await run_eval(
            rsp.cases()[:1],
            model="other-model",
            client=sdk_client("openai", server),
            registry=rsp.registry(),
            record=str(path),
            progress=False,
        )
    before = path.read_text()
    link = tmp_path / "link.jsonl"
    target = tmp_path / "elsewhere.txt"
    target.write_text("not mine\n")
    link.symlink_to(target)
    # A link is refused before it is read or replaced, as a journal's is.
    with pytest.raises(PrivateFileError, match="is a symbolic link"):
        await run_eval(
            rsp.cases()[:1],
            model="replay-model",
            client=sdk_client("openai", server),
            registry=rsp.registry(),
            record=str(link),
            progress=False,
        )
    assert target.read_text() == "not mine\n" and path.read_text() == before
