"""``CallRunner``: the one way a door runs a call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_nb.tools import Agent, ApprovalService, Ask, Deny, ToolRegistry, define_tool
from dsh_nb.tools.runner import (
    IN_FLIGHT,
    REFUSED,
    UNRUN,
    VISIBLE,
    CallRunner,
    DoorCall,
    answer_calls,
    run_together,
)


def ran_as(name: str) -> Any:
    return lambda args: f"{name} ran"


def registry_with(*names: str, body: Any = None) -> ToolRegistry:
    reg = ToolRegistry()
    for name in names:
        reg.register(
            define_tool(
                name=name,
                description=name,
                parameters={"x": {"type": "number"}},
                execute=body or ran_as(name),
            )
        )
    return reg


class Recorder:
    """A view that writes down what it was told."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def begin(self, ticket: Any) -> None:
        self.events.append(f"begin {ticket.call_id} {ticket.door}")

    def refused(self, result: Any, outcome: Any) -> None:
        self.events.append(f"refused {outcome.stage}")

    def settled(self, run: Any) -> None:
        self.events.append(f"settled {run.outcome.status}")

    def interrupted(self, exc: BaseException) -> None:
        self.events.append(f"interrupted {type(exc).__name__}")


async def test_a_call_runs_in_a_turn_and_is_reported() -> None:
    reg = registry_with("a")
    agent = Agent("door")
    view = Recorder()
    answer = await CallRunner(reg).run(
        DoorCall(name="a", arguments={}, wire_id="w1"),
        agent=agent,
        door="test",
        view=view,
    )
    assert answer.result.text == "a ran" and answer.wire_id == "w1"
    assert answer.call_id == "w1" and answer.outcome.status == "done"
    assert view.events == ["begin w1 test", "settled done"]
    kinds = [e["type"] for e in agent.session.events]
    assert kinds == ["turn/start", "tool/call", "tool/result", "turn/end"]


async def test_a_tool_the_door_does_not_offer_is_unknown_before_any_policy() -> None:
    reg = registry_with("a", "b")
    asked: list[str] = []
    reg.on_pre_execute(lambda ex, nxt: asked.append(ex.name) or Deny("no"))
    view = Recorder()
    answer = await CallRunner(reg).run(
        DoorCall(name="b", arguments={}, wire_id="w"),
        agent=Agent("x"),
        offered={"a"},
        view=view,
    )
    assert answer.result.is_error and answer.result.error is not None
    assert answer.result.error.code == "UNKNOWN_TOOL"
    assert answer.outcome is REFUSED and asked == []
    assert view.events[-1] == "refused input"


async def test_a_tool_restricted_away_is_unknown_before_any_policy() -> None:
    reg = registry_with("a", "hidden")
    agent = Agent("client")
    reg.restrict(agent, deny=["hidden"])
    reg.approval = ApprovalService()
    asked: list[str] = []
    reg.on_pre_execute(lambda ex, nxt: asked.append(ex.name) or Ask("sure?"))
    answer = await CallRunner(reg).run(
        DoorCall(name="hidden", arguments={}), agent=agent, offered=VISIBLE
    )
    assert answer.result.error is not None
    assert answer.result.error.code == "UNKNOWN_TOOL"
    assert asked == []
    log = agent.session.of_type("tool/result")
    assert log[-1]["data"]["stage"] == "input"


async def test_a_door_that_offers_no_list_leaves_unknown_names_to_the_pipeline() -> (
    None
):
    reg = registry_with("a")
    seen: list[str] = []
    reg.on_pre_execute(lambda ex, nxt: seen.append(ex.name) or nxt())
    answer = await CallRunner(reg).run(
        DoorCall(name="nope", arguments={}), agent=Agent("c")
    )
    assert answer.result.error is not None
    assert answer.result.error.code == "UNKNOWN_TOOL"
    assert (answer.outcome.stage, seen) == ("execute", ["nope"])  # contract order


async def test_unparsed_arguments_are_journaled_and_never_run() -> None:
    ran: list[Any] = []
    reg = registry_with("a", body=lambda args: ran.append(args) or "x")
    agent = Agent("m")
    answer = await CallRunner(reg).run(
        DoorCall(name="a", arguments="{bad", wire_id="c", error="Error: not JSON"),
        agent=agent,
    )
    assert answer.outcome is UNRUN and ran == []
    assert answer.result.text == "Error: not JSON"
    call = agent.session.of_type("tool/call")[-1]["data"]
    assert call["arguments"] == "{bad"


async def test_ids_in_flight_are_never_shared() -> None:
    gate = asyncio.Event()

    async def wait(args: Any) -> str:
        await gate.wait()
        return "ok"

    reg = registry_with("w", body=wait)
    runner = CallRunner(reg)
    agent = Agent("m")
    calls = [DoorCall(name="w", arguments={}, wire_id="same") for _ in range(3)]
    calls.append(DoorCall(name="w", arguments={}, wire_id=""))
    task = asyncio.ensure_future(answer_calls(runner, calls, agent=agent, door="t"))
    await asyncio.sleep(0.01)
    gate.set()
    answers = await task
    ids = [a.call_id for a in answers if a is not None]
    assert len(set(ids)) == 4 and ids[0] == "same"
    assert [a.wire_id for a in answers if a is not None][:3] == ["same"] * 3
    assert not any(i in IN_FLIGHT for i in ids)  # released when settled
    results = agent.session.of_type("tool/result")
    assert sorted(e["data"]["callId"] for e in results) == sorted(ids)


async def test_a_view_that_raises_never_breaks_the_call() -> None:
    class Broken:
        def __getattr__(self, name: str) -> Any:
            def boom(*args: Any) -> None:
                raise RuntimeError(name)

            return boom

    reg = registry_with("a")
    answer = await CallRunner(reg, views=lambda ticket: Broken()).run(
        DoorCall(name="a", arguments={}), agent=Agent("x")
    )
    assert answer.result.text == "a ran"


async def test_a_cancelled_step_reports_interrupted_and_keeps_what_settled() -> None:
    async def slow(args: Any) -> str:
        await asyncio.sleep(30)
        return "late"

    reg = registry_with("slow", body=slow)
    reg.register(
        define_tool(name="fast", description="f", parameters={}, execute=lambda a: "ok")
    )
    views = [Recorder(), Recorder()]
    into: list[Any] = [None, None]
    task = asyncio.ensure_future(
        answer_calls(
            CallRunner(reg),
            [DoorCall(name="fast", arguments={}), DoorCall(name="slow", arguments={})],
            agent=Agent("m"),
            door="t",
            views=views,
            into=into,
        )
    )
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert into[0] is not None and into[0].result.text == "ok" and into[1] is None
    assert views[1].events[-1] == "interrupted CancelledError"


async def test_run_together_cancels_the_others_when_one_fails() -> None:
    ended: list[str] = []

    async def slow() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            ended.append("slow")

    async def failing() -> None:
        await asyncio.sleep(0)
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        await run_together([slow(), failing()])
    assert ended == ["slow"]  # cancelled and awaited before the error rose


async def test_run_together_awaits_every_coroutine() -> None:
    done: list[int] = []

    async def one(n: int) -> None:
        await asyncio.sleep(0)
        done.append(n)

    await run_together(one(n) for n in range(3))
    assert sorted(done) == [0, 1, 2]
