"""``python -m dsh_nb eval`` as a subprocess: exit codes, JUnit, offline replay."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import responder as rsp

from dsh_nb.evals import EvalReport
from dsh_nb.models.replay_server import ReplayServer

ROOT = Path(__file__).resolve().parents[2]
EVALS = Path(__file__).resolve().parent
SUITE = """
import responder
cases = responder.cases()
registry = responder.registry()
def other():
    from dsh_nb.tools import ToolRegistry, tool

    @tool
    def get_weather(city: str) -> str:
        '''Another description.'''
        return ''

    reg = ToolRegistry()
    reg.register(get_weather)
    return reg
other_registry = other()
"""
BLOCK = """
import socket
def _refuse(*args, **kwargs):
    raise OSError("the network is blocked in this test")
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    (folder / "suite.py").write_text(SUITE)
    (folder / "blocked").mkdir()
    (folder / "blocked" / "sitecustomize.py").write_text(BLOCK)
    return folder


def run(
    work: Path, *args: str, key: str = "", blocked: bool = False
) -> subprocess.CompletedProcess[str]:
    paths = [str(ROOT), str(EVALS), str(work)]
    if blocked:
        paths.insert(0, str(work / "blocked"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(paths),
        "OPENAI_API_KEY": key,
    }
    return subprocess.run(
        [sys.executable, "-m", "dsh_nb", "eval", *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def recorded(work: Path) -> Iterator[Path]:
    """One live run through the CLI, recorded: 34 of 80 trials pass."""
    path = work / "run.jsonl"
    with ReplayServer(rsp.Responder()) as server:
        done = run(
            work,
            "suite:cases",
            "--tools",
            "suite:registry",
            "--model",
            "replay-model",
            "--base-url",
            server.openai_url,
            "--trials",
            "10",
            "--record",
            str(path),
            "--min-pass",
            "40%",
            key=server.token,
        )
    assert done.returncode == 0, done.stderr
    assert "PASS: 42.5% of 80 trials passed (--min-pass 40.0%)" in done.stdout
    yield path


def test_replay_offline_gates_and_writes_junit(work: Path, recorded: Path) -> None:
    junit, saved = work / "junit.xml", work / "report.json"
    done = run(
        work,
        "suite:cases",
        "--tools",
        "suite:registry",
        "--trials",
        "10",
        "--replay",
        str(recorded),
        "--min-pass",
        "0.5",
        "--junit",
        str(junit),
        "--json",
        str(saved),
        blocked=True,
    )
    assert done.returncode == 1, done.stderr
    # A text summary with intervals, and the verdict.
    assert "passed: 42% [" in done.stdout or "passed: 43% [" in done.stdout
    assert "FAIL: 42.5% of 80 trials passed (--min-pass 50.0%)" in done.stdout
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuite"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "8",
        "6",
        "0",
    )
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {c.id for c in rsp.cases()}
    failure = cases["weather-Paris"].find("failure")
    assert failure is not None and failure.get("message") == "3 of 10 trials passed"
    assert "asked: CASE-0: what is the weather in Paris" in (failure.text or "")
    assert cases["hello-6"].find("failure") is None
    assert len(EvalReport.load(saved).trials) == 80
    again = run(
        work,
        "suite:cases",
        "--tools",
        "suite:registry",
        "--trials",
        "10",
        "--replay",
        str(recorded),
        "--min-pass",
        "0.4",
        blocked=True,
    )
    assert again.returncode == 0, again.stderr


def test_the_block_is_real(work: Path) -> None:
    """Without --replay, the blocked run cannot reach any model."""
    with ReplayServer(rsp.Responder()) as server:
        done = run(
            work,
            "suite:cases",
            "--tools",
            "suite:registry",
            "--model",
            "m",
            "--base-url",
            server.openai_url,
            key=server.token,
            blocked=True,
        )
    assert done.returncode == 1
    assert "stopped after 5 request errors in a row" in done.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["nope:cases", "--model", "m"], "no module named 'nope'"),
        (["suite:missing", "--model", "m"], "has no attribute 'missing'"),
        (["suite:registry", "--model", "m"], "is not a non-empty list of Case"),
        (["not-a-spec", "--model", "m"], "CASES is MODULE:ATTR"),
        (["suite:cases", "--min-pass", "2"], "a rate is between 0 and 1"),
        (["suite:cases", "--record", "a", "--replay", "b"], "not allowed with"),
        (["suite:cases", "--tools", "suite:registry"], "name the model"),
        (["suite:cases", "--model", "m", "--trials", "0"], "--trials must be"),
        (["suite:cases", "--replay", "missing.jsonl"], "No such file"),
    ],
)
def test_usage_errors_exit_2(work: Path, args: list[str], says: str) -> None:
    done = run(work, *args, blocked=True)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert says in done.stderr


def test_a_recording_that_cannot_answer_exits_2(work: Path, recorded: Path) -> None:
    done = run(
        work,
        "suite:cases",
        "--tools",
        "suite:other_registry",
        "--trials",
        "10",
        "--replay",
        str(recorded),
        blocked=True,
    )
    assert done.returncode == 2
    assert "differs from the recording in: tools" in done.stderr


def test_notebook_10_replays_from_the_command_line(work: Path) -> None:
    """The notebook's committed recording, its cases and both tool versions."""
    data = ROOT / "notebooks" / "data"
    junit = work / "flights.xml"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(work / "blocked"), str(ROOT)]),
    }
    done = subprocess.run(
        [
            *(sys.executable, "-m", "dsh_nb", "eval", "flights:cases"),
            *("--tools", "flights:variants", "--trials", "3"),
            *("--replay", "10-flights.jsonl", "--min-pass", "0.5"),
            *("--junit", str(junit)),
        ],
        cwd=data,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "[precise] passed: 88% [78%, 94%] (53/60)" in done.stdout
    assert "PASS: 62.5% of 120 trials passed" in done.stdout
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("20", "3")
