"""Conversation cases through run_eval: turns, fresh state, checks, pass^k.

The model is the loopback ``ReplayServer`` behind the official SDK client;
the tools are a real stateful cart (``convkit``), built fresh per trial.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from convkit import Cart, Shopper, cases
from evalkit import sdk_client

from dsh_nb.evals import Case, EvalReport, bfcl, call, no_call, run_eval
from dsh_nb.evals.bfcl_multi import ADDED_FUNCTIONS, reference_turns
from dsh_nb.evals.conversation import Turn, same_state
from dsh_nb.models.replay_server import RecordedRequest, ReplayServer
from dsh_nb.models.scripted import Reply, ToolCallSpec
from dsh_nb.models.scripted import Turn as Answer


async def _run(model: Any, the_cases: list[Case], **options: Any) -> EvalReport:
    with ReplayServer(model) as server:
        client = sdk_client("openai", server)
        try:
            return await run_eval(
                the_cases,
                model="m",
                client=client,
                execute="real",
                progress=False,
                **options,
            )
        finally:
            await client.close()  # on this loop, not when collected later


async def test_a_conversation_passes_turn_by_turn_with_its_own_state() -> None:
    report = await _run(Shopper(), cases(), trials=2)
    assert [t.passed for t in report.trials] == [True] * 4
    first = report.trials[0]
    assert first.conversation == {
        "turns": 3,
        "stepsPerTurn": [2, 2, 2],
        "broken": None,
    }
    assert [c.name for c in first.calls] == ["add", "add", "checkout"]
    assert [c.step for c in first.calls] == [1, 3, 5]  # steps count across turns
    assert report.cases["shop"].expected == ("add", "checkout")
    assert "Add a pear too." in report.cases["shop"].prompt


async def test_the_report_says_which_turn_broke_which_expectation() -> None:
    # trial n of each case errs on turn n (trial 4 on none)
    report = await _run(Shopper(lambda first, n: {n}), cases(), trials=4)
    broken = {
        (t.case_id, (t.conversation or {})["broken"]["turn"])
        for t in report.trials
        if not t.passed
    }
    assert broken == {
        ("shop", 1),
        ("shop", 2),
        ("shop", 3),
        ("change-mind", 1),
        ("change-mind", 2),
        ("change-mind", 3),
    }
    wrong = next(
        t
        for t in report.trials
        if t.case_id == "shop"
        and not t.passed
        and t.conversation["broken"]["turn"] == 3  # type: ignore[index]
    )
    assert wrong.conversation["broken"] == {  # type: ignore[index]
        "turn": 3,
        "expect": "checkout()",
        "why": "called the wrong tools: no tool",
    }
    # the report's failures say it, escaped
    html = report._repr_html_()
    assert "turn 3: checkout(): called the wrong tools: no tool" in html
    assert "turn 2: remove(item=&#x27;plum&#x27;)" in html
    # the saved report keeps it
    again = EvalReport.from_json(json.loads(json.dumps(report.to_json())))
    assert [t.conversation for t in again.trials] == [
        t.conversation for t in report.trials
    ]


async def test_end_state_and_final_answer_are_checked_after_the_last_turn() -> None:
    case = Case(
        ["Add two apples.", "Check out."],
        tools=Cart,
        expect=[None, None],
        end_state=lambda cart: cart.items == {"apple": 3},
        final=lambda text: "paid" in text,
        id="end",
    )
    report = await _run(Shopper(), [case])
    (trial,) = report.trials
    assert not trial.passed
    assert trial.conversation["broken"]["turn"] == 0  # type: ignore[index]
    assert trial.conversation["broken"]["why"] == (  # type: ignore[index]
        "the end state is not the expected one"
    )
    fine = Case(
        ["Add two apples.", "Check out."],
        tools=Cart,
        end_state=lambda cart: cart.paid and cart.items == {"apple": 2},
        final=lambda text: "paid" in text,
        id="end",
    )
    assert (await _run(Shopper(), [fine])).trials[0].passed


async def test_same_state_compares_with_a_fresh_copy_that_ran_the_calls() -> None:
    def case(calls: list[tuple[str, dict[str, Any]]]) -> Case:
        return Case(
            ["Add two apples.", "Check out."],
            tools=Cart,
            end_state=same_state(calls),
            id="same",
        )

    right = [("add", {"item": "apple", "qty": 2}), ("checkout", {})]
    assert (await _run(Shopper(), [case(right)])).trials[0].passed
    wrong = [("add", {"item": "apple", "qty": 3}), ("checkout", {})]
    (trial,) = (await _run(Shopper(), [case(wrong)])).trials
    assert trial.conversation["broken"] == {  # type: ignore[index]
        "turn": 0,
        "expect": "same_state([add(item='apple', qty=3), checkout()])",
        "why": "Cart differs from the expected state in: items",
    }


async def test_concurrent_trials_never_share_state() -> None:
    made: list[Cart] = []
    lock = threading.Lock()

    def factory() -> Cart:
        cart = Cart()
        with lock:
            made.append(cart)
        return cart

    shop = Case(
        ["Add two apples.", "Add a pear too.", "Check out."],
        tools=factory,
        expect=[call("add"), call("add"), call("checkout")],
        end_state=lambda cart: cart.items == {"apple": 2, "pear": 1},
        id="shop",
    )
    report = await _run(Shopper(), [shop], trials=8, concurrency=8)
    assert len(made) == 8 and len({id(c) for c in made}) == 8
    assert all(t.passed for t in report.trials)
    assert all(c.items == {"apple": 2, "pear": 1} and c.paid for c in made)


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str, wait: float) -> str:
        """Append a line after ``wait`` seconds."""
        time.sleep(wait)
        self.lines.append(text)
        return "ok"


async def test_a_steps_calls_run_in_the_models_order() -> None:
    logs: list[Log] = []

    def factory() -> Log:
        logs.append(Log())
        return logs[-1]

    def model(request: RecordedRequest) -> Reply:
        if request.body["messages"][-1]["role"] == "tool":
            return Answer(text="done")
        return Answer(
            tool_calls=tuple(
                ToolCallSpec(
                    name="write",
                    arguments=json.dumps({"text": t, "wait": w}),
                    call_id=f"c{i}",
                )
                for i, (t, w) in enumerate([("first", 0.3), ("second", 0.0)])
            )
        )

    case = Case(["Write two lines."], tools=factory, expect=[None], id="log")
    report = await _run(model, [case], trials=2)
    assert [log.lines for log in logs] == [["first", "second"]] * 2
    assert all(t.passed for t in report.trials)


async def test_pass_k_and_pass_at_k_over_cases_and_compare_on_them() -> None:
    # "shop" errs on turn 2 of its 3rd trial; "change-mind" never errs
    def mistakes(first: str, n: int) -> set[int]:
        return {2} if first == "Add two apples." and n == 3 else set()

    noisy = await _run(Shopper(mistakes), cases(), trials=4)
    clean = await _run(Shopper(), cases(), trials=4)
    summary = noisy.summary()
    assert summary["passed"].successes == 7 and summary["passed"].n == 8
    assert (summary["pass^k"].successes, summary["pass^k"].n) == (1, 2)
    assert (summary["pass@k"].successes, summary["pass@k"].n) == (2, 2)
    both = noisy.pass_k()
    assert both.k == 4 and both.excluded == 0
    assert str(both).startswith("pass^4: 50%")
    compared = noisy.compare(clean, metric="pass^k")
    assert (compared.only_a, compared.only_b, compared.both) == (0, 1, 1)
    assert "every one of its trials" in compared.rule
    assert noisy.compare(clean, metric="passed").only_b == 0  # 3 of 4 is a majority
    assert "pass^k" not in (await _run(Shopper(), cases())).summary()


async def test_a_multi_turn_run_records_and_replays_with_no_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.jsonl"
    live = await _run(
        Shopper(lambda first, n: {n}), cases(), trials=3, record=str(path)
    )
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    steps = {
        (x["case"], x["trial"], x["step"]) for x in lines if x["type"] == "exchange"
    }
    assert ("shop", 1, 6) in steps  # three turns, two requests each

    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("replay opened a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    replayed = await run_eval(
        cases(), model="m", execute="real", replay=str(path), trials=3, progress=False
    )

    def verdicts(report: EvalReport) -> list[Any]:
        return [(t.case_id, t.trial, t.passed, t.conversation) for t in report.trials]

    assert verdicts(replayed) == verdicts(live)
    assert replayed.summary() == live.summary()


def test_bad_conversations_fail_with_a_clear_error() -> None:
    with pytest.raises(ValueError, match="2 expectations for 3 turns"):
        Case(["a", "b", "c"], tools=Cart, expect=[call("add"), no_call()])
    with pytest.raises(TypeError, match="one expectation a turn"):
        Case(["a", "b"], tools=Cart, expect=call("add"))
    with pytest.raises(ValueError, match="for conversations"):
        Case("a", expect=call("add"), end_state=lambda s: True)
    with pytest.raises(TypeError, match="cannot be mixed"):
        Case(["a", {"role": "user", "content": "b"}], expect=call("x"))
    case = Case(["Add two apples."], tools=Cart, id="dry")
    with pytest.raises(ValueError, match='execute="real"'):
        asyncio.run(run_eval([case], model="m", client=object(), progress=False))


def test_a_factory_returning_nothing_useful_fails_the_trial_loudly() -> None:
    case = Case(["Add two apples."], tools=lambda: None, id="none")
    with ReplayServer(Shopper()) as server, pytest.raises(TypeError, match="factory"):
        asyncio.run(
            run_eval(
                [case],
                model="m",
                client=sdk_client("openai", server),
                execute="real",
                progress=False,
            )
        )


def _bfcl_model(the_cases: list[Case]) -> Any:
    """Answers each turn of a BFCL case with its ground truth."""
    plans = {c.turns[0].text: reference_turns(c) for c in the_cases}  # type: ignore[index]

    def answer(request: RecordedRequest) -> Reply:
        messages = request.body["messages"]
        if messages[-1]["role"] == "tool":
            return Answer(text="Done.")
        users = [m for m in messages if m["role"] == "user"]
        calls = plans[users[0]["content"]][len(users) - 1]
        if not calls:
            return Answer(text="I cannot do that with these functions.")
        return Answer(
            tool_calls=tuple(
                ToolCallSpec(name=n, arguments=json.dumps(a), call_id=f"c{i}")
                for i, (n, a) in enumerate(calls)
            )
        )

    return answer


@pytest.mark.parametrize(
    "category", ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param"]
)
async def test_bfcls_ground_truth_passes_a_live_run(category: str) -> None:
    pytest.importorskip("bfcl_eval")
    pytest.importorskip("mpmath")
    the_cases = bfcl.load(category, limit=6)
    model = _bfcl_model(the_cases)
    with ReplayServer(model) as server:
        report = await run_eval(
            the_cases,
            model="m",
            client=sdk_client("openai", server),
            execute="real",
            max_steps=5,
            progress=False,
        )
        requests = list(server.requests)
    assert [t.conversation["broken"] for t in report.trials] == [None] * 6  # type: ignore[index]
    assert all(t.passed for t in report.trials)
    if category == "multi_turn_miss_func":
        held = the_cases[0].meta["missed_function"]
        ((turn, names),) = held.items()
        assert the_cases[0].turns[turn].text == ADDED_FUNCTIONS
        first = next(
            r
            for r in requests
            if r.body["messages"][0]["content"] == the_cases[0].turns[0].text
        )
        offered = {t["function"]["name"] for t in first.body["tools"]}
        assert not set(names) & offered
        assert isinstance(the_cases[0].turns[turn], Turn)
        assert set(names) <= set(the_cases[0].turns[turn].tools or ())
