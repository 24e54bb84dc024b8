"""``%tool_eval`` in a real kernel: the report, the progress, an interrupt.

The model is the loopback responder of ``tests/evals`` (known error rates),
served from this process; the kernel reaches it through the ``DshChat``
settings, as a user's endpoint.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import KernelHarness

from dsh_nb.models.replay_server import ReplayServer

EVALS = Path(__file__).parent.parent / "evals"
sys.path.insert(0, str(EVALS))

from responder import TRUE, Responder  # noqa: E402


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer(Responder(delay=0.05)) as srv:
        yield srv


@pytest.fixture(scope="module")
def kernel(server: ReplayServer) -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run("%load_ext dsh_nb")
        harness.run('%config DshConfig.frontend = "headless"')
        harness.run(
            f"import os, sys\nsys.path.insert(0, {str(EVALS)!r})\n"
            f"os.environ['EVAL_KEY'] = {server.token!r}\n"
            "import dsh_nb, responder\n"
            "for d in responder.registry().view().values():\n"
            "    dsh_nb.registry().register(d)\n"
            "cases = responder.cases()\n"
        ).check()
        harness.run(
            f'%config DshChat.base_url = "{server.openai_url}"\n'
            '%config DshChat.api_key_env = "EVAL_KEY"\n'
            '%config DshChat.model = "replay-model"\n'
        ).check()
        yield harness


def test_tool_eval_shows_and_binds_the_report(kernel: KernelHarness) -> None:
    reply = kernel.run("%tool_eval cases --trials 10 -o rep", timeout=120).check()
    html = reply.data("text/html")
    assert any("dsh-EvalReport" in h for h in html)
    assert "tool_eval: 80/80 trials · passed 42%" in reply.stdout
    check = kernel.run(
        "s = rep.summary()\nprint(s['passed'].successes, s['selected'].successes, "
        "len(rep.trials))"
    ).check()
    assert check.stdout.split() == [
        str(TRUE["passed"]),
        str(TRUE["selected"]),
        "80",
    ]


def test_usage_errors_are_one_line(kernel: KernelHarness) -> None:
    for line, text in (
        ("%tool_eval nope", "no variable named 'nope'"),
        ("%tool_eval cases --trials 0", "--trials must be 1 or more"),
        ("%tool_eval cases -o 1x", "-o takes a variable name"),
        ("%tool_eval cases --replay /nonexistent.jsonl", "No such file"),
    ):
        reply = kernel.execute(line, check=False)
        assert reply.status == "error"
        assert reply.content["ename"] == "UsageError", reply.content
        assert text in reply.content["evalue"], (line, reply.content)
        assert reply.content["traceback"] == []


def test_an_interrupt_keeps_the_trials_done(kernel: KernelHarness) -> None:
    msg_id = kernel.execute_async(
        "%tool_eval cases --trials 10 --concurrency 2 -o part"
    )
    time.sleep(2.5)
    kernel.interrupt()
    reply = kernel.collect(msg_id, timeout=20)
    assert reply.status == "error"
    assert reply.content["ename"] == "UsageError", reply.content
    assert reply.content["evalue"].startswith("interrupted:")
    assert any(
        "interrupted: only the trials done" in h for h in reply.data("text/html")
    )
    done = int(kernel.run("print(len(part.trials))").check().stdout)
    assert 0 < done < 80
    assert f"interrupted: {done} of 80 trials" in reply.content["evalue"]
    # The kernel goes on: a new run completes.
    again = kernel.run("%tool_eval cases --trials 1 -o one", timeout=60).check()
    assert "8/8 trials" in again.stdout


def _counts(report: object) -> list[int]:
    summary = report.summary()  # type: ignore[attr-defined]
    return [summary[m].successes for m in ("selected", "args_correct", "passed")]


def test_a_kernel_recording_replays_in_a_script(
    kernel: KernelHarness, tmp_path: Path
) -> None:
    import asyncio

    from responder import cases, registry

    from dsh_nb.evals import run_eval

    path = tmp_path / "kernel.jsonl"
    out = kernel.run(
        f"%tool_eval cases --trials 2 --record {path} -o krec\n"
        "s = krec.summary()\n"
        "print(*[s[m].successes for m in ('selected', 'args_correct', 'passed')])",
        timeout=120,
    ).check()
    assert '<approval-policy value=\\"ask\\"/>' in path.read_text()
    report = asyncio.run(
        run_eval(
            cases(),
            model="replay-model",
            registry=registry(),  # a script's: no approval service
            trials=2,
            replay=str(path),
            progress=False,
        )
    )
    assert out.stdout.split()[-3:] == [str(n) for n in _counts(report)]


def test_a_script_recording_replays_in_the_kernel(
    kernel: KernelHarness, server: ReplayServer, tmp_path: Path
) -> None:
    import asyncio

    from evalkit import sdk_client
    from responder import cases, registry

    from dsh_nb.evals import run_eval

    path = tmp_path / "script.jsonl"
    report = asyncio.run(
        run_eval(
            cases(),
            model="replay-model",
            client=sdk_client("openai", server),
            registry=registry(),
            trials=2,
            record=str(path),
            progress=False,
        )
    )
    out = kernel.run(
        f"%tool_eval cases --trials 2 --replay {path} -o krep\n"
        "s = krep.summary()\n"
        "print(*[s[m].successes for m in ('selected', 'args_correct', 'passed')])",
        timeout=120,
    ).check()
    assert out.stdout.split()[-3:] == [str(n) for n in _counts(report)]


def test_a_practice_model_with_variants_and_flags(kernel: KernelHarness) -> None:
    """No key, no server: a function plays the model in the kernel."""
    out = kernel.run(
        "from dsh_nb.evals import oracle\n"
        "practice = oracle(cases)\n"
        "regs = {'A': responder.registry(), 'B': responder.registry()}\n"
        "%tool_eval cases --model practice --variants regs --max-steps 1 "
        "--execute dry --trials 2 -o vr\n"
        "print(vr.variants, vr.meta['maxSteps'], vr.meta['model'], "
        "vr.summary()['passed'].successes, len(vr.trials))",
        timeout=120,
    ).check()
    assert out.stdout.splitlines()[-1] == "('A', 'B') 1 oracle 32 32"
    bad = kernel.execute("%tool_eval cases --variants nope", check=False)
    assert bad.content["ename"] == "UsageError"
    assert "--variants takes the name of a dict" in bad.content["evalue"]
    bad = kernel.execute("%tool_eval cases --max-steps 0", check=False)
    assert "--max-steps must be 1 or more" in bad.content["evalue"]
