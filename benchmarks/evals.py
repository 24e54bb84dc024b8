"""What ``run_eval`` costs on top of the model, next to the bare SDK.

``python benchmarks/evals.py [--trials N] [--report-trials M]``.

The model is a loopback ``ReplayServer`` in a **separate process**, so this
process's CPU time is the client's alone. It answers every request after
20 ms with one tool call (``add``, right arguments). Three rows send the
same N requests at concurrency 20, through the official
``openai.AsyncOpenAI`` client (non-streamed), in the same run, alternating:

- bare SDK: ``client.chat.completions.create`` under an
  ``asyncio.Semaphore(20)``, nothing else;
- Chat alone: a fresh ``Chat`` per request (``max_steps=1``, its call run
  through the registry), the same semaphore: what ``Chat`` costs;
- run_eval: N one-request trials (``max_steps=1``, ``concurrency=20``,
  dry run), graded from the journal, into an ``EvalReport``.

The ideal wall time is N x 20 ms / 20. ``added`` is a row's wall time minus
the bare SDK's (target for run_eval: at most +0.5 s for N = 1,000). The
harness's own CPU per trial is run_eval's CPU minus Chat alone's, over N.

The same two CPU figures are then taken again with no HTTP at all: a
client object whose ``create`` returns one prebuilt SDK ``ChatCompletion``,
so the SDK's transport and the server's load drop out and what is left is
``Chat`` and the harness (rounds alternate; the medians are printed).

Then a report of ``M`` trials (default 10,000; a tenth fail, so failures
have conversations) is saved and rendered: its JSON file under 50 MB and
its HTML under 2 MB are the targets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common  # noqa: F401 - keeps this folder off the front of sys.path

DELAY = 0.02
CONCURRENCY = 20


def serve() -> None:
    """The model process: answer every request with one ``add`` call."""
    from http.server import ThreadingHTTPServer

    from dsh_nb.models.replay_server import ReplayServer

    # socketserver's listen backlog is 5: a burst of 50 new connections
    # (the report run) would be refused, as a real API behind a proxy is not.
    ThreadingHTTPServer.request_queue_size = 256
    from dsh_nb.models.scripted import ToolCallSpec, Turn

    def answer(request: Any) -> Turn:
        text = request.body["messages"][-1]["content"]
        wrong = isinstance(text, str) and text.endswith("#wrong")
        args = {"a": 1, "b": 3 if wrong else 2}
        return Turn(
            tool_calls=(ToolCallSpec(name="add", arguments=json.dumps(args)),),
            delay=DELAY,
        )

    with ReplayServer(answer) as server:
        print(json.dumps({"url": server.openai_url, "token": server.token}))
        sys.stdout.flush()
        sys.stdin.read()  # until the parent closes it


def registry() -> Any:
    from dsh_nb.tools import ToolRegistry, tool

    @tool
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    reg = ToolRegistry()
    reg.register(add)
    return reg


def cases(n: int, wrong_every: int = 0) -> list[Any]:
    from dsh_nb.evals import Case, call

    out = []
    for i in range(n):
        wrong = wrong_every and i % wrong_every == 0
        prompt = f"case {i}: what is 1 + 2?" + (" #wrong" if wrong else "")
        out.append(Case(prompt, expect=call("add", a=1, b=2), id=f"c{i}"))
    return out


async def bare(client: Any, n: int, tools: list[Any]) -> None:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        async with gate:
            await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": f"case {i}: what is 1 + 2?"}],
                tools=tools,
            )

    await asyncio.gather(*(one(i) for i in range(n)))


async def chats(client: Any, n: int) -> None:
    from dsh_nb.models import Chat

    reg = registry()
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        async with gate:
            chat = Chat("m", client=client, registry=reg, max_steps=1, stream=False)
            await chat.send(f"case {i}: what is 1 + 2?")

    await asyncio.gather(*(one(i) for i in range(n)))


_CASES: dict[int, list[Any]] = {}


async def evals(client: Any, n: int) -> Any:
    from dsh_nb.evals import run_eval

    if n not in _CASES:  # built once: what is timed is the run, not the suite
        _CASES[n] = cases(n)
    return await run_eval(
        _CASES[n],
        model="m",
        client=client,
        registry=registry(),
        max_steps=1,
        concurrency=CONCURRENCY,
        progress=False,
    )


class _Prebuilt:
    """A client whose every answer is one prebuilt SDK response (no HTTP)."""

    def __init__(self) -> None:
        from openai.types.chat import ChatCompletion

        from dsh_nb.models.scripted import ToolCallSpec, Turn, openai_json

        turn = Turn(tool_calls=(ToolCallSpec(name="add", arguments='{"a":1,"b":2}'),))
        self.response = ChatCompletion.model_validate(openai_json(turn, "m", 1))
        self.chat = self
        self.completions = self

    async def create(self, **kwargs: Any) -> Any:
        return self.response


async def in_process(trials: int, rounds: int) -> None:
    client = _Prebuilt()
    _CASES.setdefault(trials, cases(trials))
    await chats(client, 100)
    await evals(client, 100)
    chat_cpu: list[float] = []
    eval_cpu: list[float] = []
    for _ in range(rounds):
        chat_cpu.append((await timed(chats(client, trials)))[1])
        eval_cpu.append((await timed(evals(client, trials)))[1])
    chat_ms = 1000 * sorted(chat_cpu)[len(chat_cpu) // 2] / trials
    eval_ms = 1000 * sorted(eval_cpu)[len(eval_cpu) // 2] / trials
    print()
    print(f"## No HTTP: {trials:,} trials against a prebuilt response")
    print(f"- Chat alone: {chat_ms:.3f} ms CPU per trial")
    print(f"- run_eval: {eval_ms:.3f} ms CPU per trial")
    print(f"- harness's own CPU per trial: {eval_ms - chat_ms:.3f} ms")


async def timed(coro: Any) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    value = await coro
    return time.perf_counter() - wall, time.process_time() - cpu, value


async def main(trials: int, report_trials: int, rounds: int) -> None:
    import openai

    from dsh_nb.models import wire

    model = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert model.stdout is not None
        where = json.loads(model.stdout.readline())
        client = openai.AsyncOpenAI(
            base_url=where["url"], api_key=where["token"], max_retries=0
        )
        tools = wire.to_openai_tools(registry().schemas())
        await bare(client, 50, tools)  # warm the connections and imports
        await chats(client, 50)
        await evals(client, 50)
        _CASES[trials] = cases(trials)
        rows: dict[str, list[tuple[float, float]]] = {
            "bare SDK": [],
            "Chat alone": [],
            "run_eval": [],
        }
        for _ in range(rounds):
            for name, make in (
                ("bare SDK", lambda: bare(client, trials, tools)),
                ("Chat alone", lambda: chats(client, trials)),
                ("run_eval", lambda: evals(client, trials)),
            ):
                wall, cpu, value = await timed(make())
                if name == "run_eval":
                    assert len(value.trials) == trials
                    assert value.summary()["passed"].successes == trials
                rows[name].append((wall, cpu))
        print_rows(rows, trials)
        await in_process(trials, max(rounds, 3))
        await report_size(client, report_trials)
        await client.close()
    finally:
        if model.stdin is not None:
            model.stdin.close()
        try:
            model.wait(timeout=10)
        except subprocess.TimeoutExpired:
            model.kill()
            model.wait()


def print_rows(rows: dict[str, list[tuple[float, float]]], trials: int) -> None:
    ideal = trials * DELAY / CONCURRENCY
    best = {name: min(v, key=lambda x: x[0]) for name, v in rows.items()}
    median = {
        name: sorted(v, key=lambda x: x[0])[len(v) // 2] for name, v in rows.items()
    }
    print(f"## {trials:,} one-request trials, 20 ms model, concurrency 20")
    print(
        f"- machine: {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print(f"- ideal wall time: {ideal:.2f} s; {len(rows['bare SDK'])} rounds each")
    print()
    print(
        "| row | median wall s | best wall s | added vs bare (median) | CPU s | CPU ms/trial |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    base = median["bare SDK"][0]
    for name in rows:
        wall, cpu = median[name]
        print(
            f"| {name} | {wall:.2f} | {best[name][0]:.2f} | {wall - base:+.2f} | "
            f"{cpu:.2f} | {1000 * cpu / trials:.2f} |"
        )
    own = (median["run_eval"][1] - median["Chat alone"][1]) / trials
    added = median["run_eval"][0] - base
    verdict = "met" if added <= 0.5 else "NOT met"
    print()
    print(f"run_eval added wall time: {added:+.2f} s (target <= +0.50 s: {verdict})")
    print(f"harness's own CPU per trial (run_eval - Chat alone): {1000 * own:.3f} ms")


async def report_size(client: Any, n: int) -> None:
    from dsh_nb.evals import EvalReport, run_eval

    wall = time.perf_counter()
    report = await run_eval(
        cases(n, wrong_every=10),
        model="m",
        client=client,
        registry=registry(),
        max_steps=1,
        concurrency=50,
        progress=False,
    )
    took = time.perf_counter() - wall
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.json"
        started = time.perf_counter()
        report.save(path)
        saved = time.perf_counter() - started
        size = path.stat().st_size
        started = time.perf_counter()
        loaded = EvalReport.load(path)
        load_s = time.perf_counter() - started
        assert len(loaded.trials) == n
    started = time.perf_counter()
    html = report._repr_html_()
    html_s = time.perf_counter() - started
    html_bytes = len(html.encode())
    failures = len(report.failures())
    kinds = sorted({str(t.error)[:120] for t in report.trials if not t.answered})
    print()
    print(
        f"## A report of {n:,} trials ({failures:,} failures, "
        f"{report.errors:,} of them request errors)"
    )
    for kind in kinds:
        print(f"- request error: {kind}")
    print(f"- run: {took:.1f} s at concurrency 50")
    print(
        f"- saved JSON: {size / 1e6:.1f} MB (target < 50 MB: "
        f"{'met' if size < 50e6 else 'NOT met'}); save {saved:.2f} s, "
        f"load {load_s:.2f} s"
    )
    print(
        f"- HTML: {html_bytes / 1e6:.2f} MB (target < 2 MB: "
        f"{'met' if html_bytes < 2e6 else 'NOT met'}); rendered in {html_s:.2f} s"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--report-trials", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    if options.serve:
        serve()
    else:
        asyncio.run(main(options.trials, options.report_trials, options.rounds))
