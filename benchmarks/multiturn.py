"""What a conversation trial costs in CPU, next to a one-request trial.

``python benchmarks/multiturn.py [--trials N] [--rounds R] [--passk]``.

No HTTP: the client is an object whose ``chat.completions.create`` builds
an SDK ``ChatCompletion`` from the request (a call for the last user turn,
then a sentence once the tool's result is back), so what is measured is
``Chat``, the pipeline and the harness. Rows, each ``N`` trials at
concurrency 8, alternating over ``R`` rounds (medians printed):

- one request: a single-turn case ("Add two apples."), its tools a shared
  registry of a cart's methods, ``execute="real"``: 2 requests a trial;
- conversation: the same cart as a 3-turn case, a fresh cart per trial
  from its factory, every turn checked, the end state checked: 6 requests;
- BFCL multi-turn: ``multi_turn_base`` cases answered with their ground
  truth (fresh BFCL instances per trial, BFCL's per-turn state and response
  check against the ground truth run on a fresh copy).

CPU is ``time.process_time()`` for the whole ``run_eval`` (this process
only; there is no server process). Per trial and per request.

``--passk`` prints instead a pass^k table from a noisy model on the first
40 ``multi_turn_base`` cases, k = 4: at each turn the model answers the
ground truth, except that with probability ``p`` it leaves the turn's last
call out (fixed by a hash of the case, the trial's arrival and the turn).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import _common  # noqa: F401 - keeps this folder off the front of sys.path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "evals"))


_COUNT = iter(range(1, 10**9))


def _tag(messages: list[dict[str, Any]]) -> str:
    """The conversation's tag, from an earlier answer; a new one at its start."""
    for m in messages:
        if m["role"] == "assistant":
            for c in m.get("tool_calls") or ():
                return str(c["id"]).split("-")[0]
            text = m.get("content") or ""
            if text.endswith("]"):
                return text[text.rindex("[") + 1 : -1]
    return f"T{next(_COUNT)}"


class FakeClient:
    """``chat.completions.create`` answering from ``plan(last_user_text)``."""

    def __init__(self, plan: Any) -> None:
        self.plan = plan
        self.chat = self
        self.completions = self
        self.requests = 0

    async def create(self, **kwargs: Any) -> Any:
        from openai.types.chat import ChatCompletion

        self.requests += 1
        messages = kwargs["messages"]
        message: dict[str, Any] = {"role": "assistant", "content": None}
        tag = _tag(messages)
        if messages[-1]["role"] == "tool":
            message["content"] = f"Done, paid. [{tag}]"
        else:
            users = [m for m in messages if m["role"] == "user"]
            calls = self.plan(users, tag)
            if calls:
                message["tool_calls"] = [
                    {
                        "id": f"{tag}-{i}",
                        "type": "function",
                        "function": {"name": n, "arguments": json.dumps(a)},
                    }
                    for i, (n, a) in enumerate(calls)
                ]
            else:
                message["content"] = f"Nothing to do. [{tag}]"
        return ChatCompletion.model_validate(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls"
                        if "tool_calls" in message
                        else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": 1,
                    "completion_tokens": 1,
                    "total_tokens": 2,
                },
            }
        )


def cart_rows(trials: int) -> dict[str, Any]:
    from convkit import PLANS, Cart, cases

    from dsh_nb.evals import Case, call
    from dsh_nb.evals.conversation import tools_of

    shop = cases()[0]
    single = Case("Add two apples.", expect=call("add", item="apple", qty=2), id="one")
    registry = tools_of(Cart(), "bench").registry

    def plan(users: list[dict[str, Any]], tag: str) -> Any:
        return PLANS[users[-1]["content"]]

    return {
        "one request": ([single], {"registry": registry}, plan, trials),
        "conversation": ([shop], {}, plan, trials),
    }


def bfcl_row(trials: int) -> dict[str, Any]:
    from dsh_nb.evals import bfcl
    from dsh_nb.evals.bfcl_multi import reference_turns

    cases = bfcl.load("multi_turn_base", limit=10)
    plans = {c.turns[0].text: reference_turns(c) for c in cases}  # type: ignore[index]

    def plan(users: list[dict[str, Any]], tag: str) -> Any:
        return plans[users[0]["content"]][len(users) - 1]

    return {"BFCL multi-turn": (cases, {}, plan, max(1, trials // 10))}


async def measure(
    cases: Any, options: Any, plan: Any, trials: int
) -> tuple[float, int, int, int]:
    from dsh_nb.evals import run_eval

    client = FakeClient(plan)
    started = time.process_time()
    report = await run_eval(
        cases,
        model="m",
        client=client,
        trials=trials,
        concurrency=8,
        execute="real",
        max_steps=5,
        progress=False,
        **options,
    )
    cpu = time.process_time() - started
    passed = sum(t.passed for t in report.trials)
    return cpu, len(report.trials), client.requests, passed


def noisy(cases: Any, p: float) -> Any:
    import random
    import threading

    from dsh_nb.evals.bfcl_multi import reference_turns

    plans = {c.turns[0].text: reference_turns(c) for c in cases}
    arrivals: dict[str, int] = {}
    trials: dict[str, int] = {}
    lock = threading.Lock()

    def plan(users: list[dict[str, Any]], tag: str) -> Any:
        first = users[0]["content"]
        with lock:
            if tag not in trials:  # the n-th conversation of this case
                arrivals[first] = arrivals.get(first, 0) + 1
                trials[tag] = arrivals[first]
        trial = trials[tag]
        calls = list(plans[first][len(users) - 1])
        draw = random.Random(f"{first}/{trial}/{len(users)}").random()
        if calls and draw < p:
            calls.pop()
        return calls

    return plan


def passk_table() -> None:
    from dsh_nb.evals import bfcl, run_eval

    cases = bfcl.load("multi_turn_base", limit=40)
    print("multi_turn_base, first 40 cases, k = 4 trials each, noisy model")
    print(
        f"{'p (per turn)':14}{'passed (trials)':28}{'pass@4 (cases)':28}pass^4 (cases)"
    )
    for p in (0.0, 0.05, 0.1, 0.2):
        report = asyncio.run(
            run_eval(
                cases,
                model="m",
                client=FakeClient(noisy(cases, p)),
                trials=4,
                concurrency=8,
                execute="real",
                max_steps=5,
                progress=False,
            )
        )
        s = report.summary()
        print(f"{p:<14}{s['passed']!s:28}{s['pass@k']!s:28}{s['pass^k']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--passk", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.passk:
        passk_table()
        return
    rows = {**cart_rows(args.trials), **bfcl_row(args.trials)}
    asyncio.run(measure(*rows["one request"]))  # warm: imports, first schemas
    asyncio.run(measure(*rows["BFCL multi-turn"]))
    seen: dict[str, list[tuple[float, int, int, int]]] = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, row in rows.items():
            seen[name].append(asyncio.run(measure(*row)))
    print(
        f"CPU per trial, median of {args.rounds} rounds (Python {sys.version.split()[0]})"
    )
    print(
        f"{'':18}{'trials':>8}{'requests':>10}{'passed':>8}{'ms/trial':>10}{'ms/request':>12}"
    )
    base = None
    for name, runs in seen.items():
        cpu = statistics.median(r[0] for r in runs)
        _, n, requests, passed = runs[0]
        per_trial = 1000 * cpu / n
        base = base or per_trial
        print(
            f"{name:18}{n:8}{requests:10}{passed:8}{per_trial:10.2f}"
            f"{1000 * cpu / requests:12.2f}   x{per_trial / base:.1f}"
        )


if __name__ == "__main__":
    main()
