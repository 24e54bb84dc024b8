"""The core writes the journal for every call that has an agent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dsh_nb.tools import (
    Agent,
    ApprovalService,
    Ask,
    FrozenDict,
    SessionLog,
    ToolDefinition,
    ToolExecutionInput,
    ToolRegistry,
    text_block,
)
from dsh_nb.tools.audit import journal
from dsh_nb.tools.runner import record_unrun
from dsh_nb.tools.values.execution import text_result


def _make(name: str, body: Any) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description="",
        parameters={"type": "object", "properties": {}},
        execute=body,
    )


def _registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(
        _make("echo", lambda args, ex: {"content": [text_block(args["s"])], "meta": 1})
    )
    return reg


def _kinds(log: SessionLog) -> list[str]:
    return [e["type"] for e in log.events]


async def test_a_script_call_is_journaled_with_its_outcome() -> None:
    reg, agent = _registry(), Agent("script")
    args = {"s": "hi"}
    await reg.run(
        ToolExecutionInput(call_id="c1", name="echo", arguments=args, agent=agent)
    )
    call, result = (
        json.loads(line) for line in agent.session.to_jsonl().split("\n")[:2]
    )
    assert call == {
        "type": "tool/call",
        "data": {"callId": "c1", "name": "echo", "arguments": {"s": "hi"}},
    }
    assert result == {
        "type": "tool/result",
        "data": {
            "callId": "c1",
            "result": {
                "callId": "c1",
                "content": [{"type": "text", "text": "hi"}],
                "isError": False,
                "meta": 1,
            },
            "status": "done",
            "stage": "execute",
        },
    }
    logged = agent.session.events[0]["data"]["arguments"]
    assert type(logged) is FrozenDict and logged is not args


async def test_an_agentless_call_writes_nothing_anywhere() -> None:
    reg, agent = _registry(), Agent("bystander")
    await reg.execute(
        ToolExecutionInput(call_id="c1", name="echo", arguments={"s": ""})
    )
    assert len(agent.session) == 0


async def test_the_approval_pair_sits_between_call_and_result() -> None:
    reg, agent = _registry(), Agent("a")
    reg.approval = ApprovalService()
    reg.approval.on_request(lambda request, next_: "rejected")
    reg.on_pre_execute(lambda ex, next_: Ask("sure?"))
    with journal.turn(agent):
        await reg.run(
            ToolExecutionInput(call_id="c1", name="echo", arguments={}, agent=agent)
        )
    assert _kinds(agent.session) == [
        "turn/start",
        "tool/call",
        "approval/asked",
        "approval/decided",
        "tool/result",
        "turn/end",
    ]
    data = agent.session.last("tool/result")["data"]  # type: ignore[index]
    assert (data["status"], data["stage"], data["approval"]) == (
        "denied",
        "approval",
        "rejected",
    )


async def test_arguments_that_are_not_json_are_left_out_not_repred() -> None:
    class Secret:
        def __repr__(self) -> str:
            return "Secret(hunter2)"

    reg, agent = _registry(), Agent("a")
    await reg.run(
        ToolExecutionInput(
            call_id="c1", name="echo", arguments={"s": Secret()}, agent=agent
        )
    )
    text = agent.session.to_jsonl()
    assert "hunter2" not in text and "Secret" not in text
    assert agent.session.events[0]["data"] == {"callId": "c1", "name": "echo"}
    data = agent.session.events[1]["data"]
    assert (data["status"], data["stage"]) == ("error", "arguments")


async def test_a_cancelled_call_is_journaled_as_cancelled() -> None:
    reg, agent = ToolRegistry(), Agent("a")
    started = asyncio.Event()

    async def hang(args: Any, ex: Any) -> str:
        started.set()
        await asyncio.sleep(10)
        return "never"

    reg.register(_make("hang", hang))
    task = asyncio.ensure_future(
        reg.run(
            ToolExecutionInput(call_id="c1", name="hang", arguments={}, agent=agent)
        )
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert agent.session.last("tool/cancelled") == {
        "type": "tool/cancelled",
        "data": {"callId": "c1", "reason": "cancelled"},
    }
    assert agent.session.last("tool/result") is None


def test_record_unrun_journals_a_call_the_pipeline_never_saw() -> None:
    agent = Agent("model")
    result = text_result("c9", "Error: arguments are not JSON", is_error=True)
    record_unrun(agent, call_id="c9", name="add", arguments="{broken", result=result)
    call, done = agent.session.events
    assert call["data"] == {"callId": "c9", "name": "add", "arguments": "{broken"}
    assert done["data"]["status"] == "error" and done["data"]["stage"] == "arguments"
    assert done["data"]["result"]["content"] == [
        {"type": "text", "text": "Error: arguments are not JSON"}
    ]


def test_turns_are_shared_by_overlapping_calls() -> None:
    agent = Agent("a")
    first = journal.enter_turn(agent.session)
    second = journal.enter_turn(agent.session)
    journal.exit_turn(agent.session, first)
    assert agent.session.in_open_turn()
    journal.exit_turn(agent.session, second)
    assert _kinds(agent.session) == ["turn/start", "turn/end"]


def test_a_turn_the_caller_opened_is_left_alone() -> None:
    agent = Agent("a")
    agent.session.start_turn()
    with journal.turn(agent):
        pass
    assert agent.session.in_open_turn()


@pytest.mark.parametrize(
    ("content", "is_error", "approval"),
    [
        ([text_block("3")], False, None),
        ([text_block("x\ud800y")], True, "allowed-once"),
        ([text_block("a"), text_block("b")], False, None),
        ([{"type": "image", "data": "AA==", "mimeType": "image/png"}], False, None),
    ],
)
def test_compact_entries_build_the_events_the_full_forms_build(
    content: list[Any], is_error: bool, approval: str | None
) -> None:
    # The journal keeps common calls as tuples of atoms; reading the log
    # must give exactly the events built straight from the call's values.
    from dsh_nb.tools.jsonvalue import snapshot_json
    from dsh_nb.tools.pipeline.results import finalize
    from dsh_nb.tools.values.outcome import ToolOutcome

    log = SessionLog()
    arguments = snapshot_json({"a": 1, "nested": {"b": [1, 2]}})
    result = finalize(text_result("c1", "", is_error=is_error), "c1")
    object.__setattr__(result, "content", snapshot_json(content))
    outcome = ToolOutcome(
        status="error" if is_error else "done", stage="execute", approval=approval
    )
    journal.record_call(log, "c1", "add", arguments)
    journal.record_call(log, "c2", "add", snapshot_json({}))
    journal.record_result(log, result, outcome)
    call, empty, got = log.events
    assert call == journal._call_event("c1", "add", arguments)
    assert empty["data"]["arguments"] == {}
    assert got == journal._result_event(result, outcome)
    assert type(got["data"]["result"]["content"][0]) is FrozenDict


def test_a_flat_call_leaves_no_object_the_collector_tracks() -> None:
    import gc

    log = SessionLog()
    result = finalize_text("c1", "3")
    from dsh_nb.tools.jsonvalue import snapshot_json
    from dsh_nb.tools.values.outcome import ToolOutcome

    journal.record_call(log, "c1", "add", snapshot_json({"a": 1, "b": 2}))
    journal.record_result(log, result, ToolOutcome(status="done", stage="execute"))
    gc.collect()
    assert not any(gc.is_tracked(entry) for entry in log._events)
    assert log.events[1]["data"]["result"]["content"] == [text_block("3")]


def finalize_text(call_id: str, text: str) -> Any:
    from dsh_nb.tools.pipeline.results import finalize

    return finalize(text_result(call_id, text, is_error=False), call_id)


def test_last_sees_the_latest_event_of_each_type_built_or_deferred() -> None:
    # Deferred journal entries are indexed lazily; built events of the same
    # type may come before and after them.
    from dsh_nb.tools.jsonvalue import snapshot_json
    from dsh_nb.tools.values.outcome import ToolOutcome

    agent = Agent("a")
    log = agent.session
    done = ToolOutcome(status="done", stage="execute")
    journal.record_call(log, "c1", "add", snapshot_json({"a": 1}))
    journal.record_result(log, finalize_text("c1", "1"), done)
    log.append("approval/asked", {"callId": "c2"})
    journal.record_call(log, "c2", "add", snapshot_json({"a": 2}))
    assert log.last("tool/call")["data"]["callId"] == "c2"  # type: ignore[index]
    record_unrun(
        agent,
        call_id="c3",
        name="add",
        arguments="{bad",
        result=text_result("c3", "not JSON", is_error=True),
    )
    assert log.last("tool/call")["data"]["callId"] == "c3"  # type: ignore[index]
    assert log.last("tool/result")["data"]["callId"] == "c3"  # type: ignore[index]
    journal.record_call(log, "c4", "add", snapshot_json({"a": 4}))
    journal.record_result(log, finalize_text("c4", "4"), done)
    log.append("approval/decided", {"callId": "c4"})
    assert log.last("tool/call")["data"]["callId"] == "c4"  # type: ignore[index]
    assert log.last("tool/result")["data"]["result"]["content"] == [text_block("4")]  # type: ignore[index]
    assert log.last("approval/asked")["data"] == {"callId": "c2"}  # type: ignore[index]
    types = [e["type"] for e in log.events]
    assert types == [
        "tool/call", "tool/result", "approval/asked", "tool/call",
        "tool/call", "tool/result", "tool/call", "tool/result", "approval/decided",
    ]  # fmt: skip
    assert [log.last(t) for t in ("tool/call", "tool/result")] == [
        next(e for e in reversed(log.events) if e["type"] == t)
        for t in ("tool/call", "tool/result")
    ]


@pytest.mark.parametrize(
    "body",
    [
        lambda args, ex: "plain str",  # the pipeline builds the text block
        lambda args, ex: [text_block("one block")],  # the tool built it
        lambda args, ex: {"content": [text_block("b")], "isError": True},
        lambda args, ex: {"content": [text_block("m")], "meta": {"k": 1}},
    ],
)
@pytest.mark.parametrize("wrapped", [False, True])
async def test_a_result_is_journaled_as_the_caller_got_it(
    body: Any, wrapped: bool
) -> None:
    # However the result came about (a str return, built blocks, a wrapper
    # that replaced it), the journal's event is the one built straight from
    # the final result and its outcome.
    reg, agent = ToolRegistry(), Agent("a")
    reg.register(_make("t", body))
    if wrapped:

        async def replace(ex: Any, next_: Any) -> Any:
            await next_()
            return text_result(ex.call_id, "replaced", is_error=False)

        reg.on_execute(replace)
    run = await reg.run(
        ToolExecutionInput(call_id="c1", name="t", arguments={}, agent=agent)
    )
    (event,) = agent.session.of_type("tool/result")
    assert event == journal._result_event(run.result, run.outcome)
    text = event["data"]["result"]["content"][0]["text"]
    assert text == run.result.content[0]["text"]
    assert (text == "replaced") is wrapped


async def test_a_listener_hears_journal_events_only_while_attached() -> None:
    reg, agent = _registry(), Agent("a")
    heard: list[str] = []
    dispose = agent.session.on_append(lambda event: heard.append(event["type"]))

    async def call(call_id: str) -> None:
        await reg.execute(
            ToolExecutionInput(
                call_id=call_id, name="echo", arguments={"s": call_id}, agent=agent
            )
        )

    await call("c1")
    assert heard == ["tool/call", "tool/result"]
    dispose()
    await call("c2")
    assert heard == ["tool/call", "tool/result"]
    calls = [e["data"]["callId"] for e in agent.session.of_type("tool/call")]
    assert calls == ["c1", "c2"]
    assert agent.session.last("tool/result")["data"]["callId"] == "c2"  # type: ignore[index]
