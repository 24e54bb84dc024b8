# mypy: disable-error-code="func-returns-value"
"""Contract tests for the approval seam (contract §4.6) and the session log.

Covers the pipeline's ask resolution (every row of the §4.6 table), the
ApprovalService contract (open turn, audit pair, policy, answerer waterfall,
cancellation) and the Agent/SessionLog JSONL round trip.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from dsh_nb.tools.audit.session import Agent, SessionLog
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.errors import ApprovalError, HarnessError
from dsh_nb.tools.pipeline.approval import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalService,
    effective_policy,
    set_approval_policy,
)
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    Allow,
    Ask,
    ToolExecutionInput,
    ToolExecutionResult,
)

OUTCOMES = ("allowed-once", "rejected", "cancelled", "unavailable")

# -- helpers -----------------------------------------------------------------


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


def error_json(message: str, **extra: Any) -> dict[str, Any]:
    return {"callId": "c1", "content": [text(message)], "isError": True, **extra}


OK = {"callId": "c1", "content": [text("ran")], "isError": False}


def abort_controller() -> Any:
    abort = pytest.importorskip("dsh_nb.tools.running.abort")
    return abort.AbortController()


class FakeSignal:
    def __init__(self) -> None:
        self.aborted = False
        self.reason = None


class ScriptedService(ApprovalService):
    """A service whose answer is scripted; records every request.

    The pipeline asks ``decide``; the scripted outcome comes back as decided
    by an answerer unless ``decided_by`` says otherwise.
    """

    def __init__(self, answer: Any, decided_by: str = "answerer") -> None:
        super().__init__()
        self.answer = answer
        self.decided_by = decided_by
        self.requests: list[Any] = []

    async def decide(self, req: Any) -> Any:
        self.requests.append(req)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return ApprovalDecision(outcome=self.answer, decided_by=self.decided_by)


class Setup:
    def __init__(self) -> None:
        self.registry = ToolRegistry()
        self.ran: list[str] = []

        async def body(args: Any, execution: Any) -> Any:
            self.ran.append("tool")
            return [text("ran")]

        self.registry.register(
            ToolDefinition(
                name="echo",
                description="echo",
                parameters={"type": "object", "properties": {}},
                execute=body,
            )
        )
        self.registry.guard(lambda e: (self.ran.append("guard"), None)[1])
        self.registry.on_post_execute(lambda e, r, n: (self.ran.append("post"), n())[1])
        self.registry.on_result(lambda e, r: self.ran.append("result"))

    def ask(self, reason: str | None = None) -> None:
        self.registry.on_pre_execute(lambda e, n: Ask(reason))

    async def run(
        self, *, agent: Agent | None = None, signal: Any = None
    ) -> ToolExecutionResult:
        return await self.registry.execute(
            ToolExecutionInput(
                call_id="c1", name="echo", arguments={}, agent=agent, signal=signal
            )
        )


@pytest.fixture
def setup() -> Setup:
    return Setup()


def types(session: SessionLog) -> list[str]:
    return [event["type"] for event in session.events]


def approval_events(session: SessionLog) -> list[Any]:
    return [e for e in session.events if e["type"].startswith("approval/")]


# -- §4.6 pipeline rows: no service ------------------------------------------------


async def test_ask_without_service_uses_reason(setup: Setup, agent: Agent) -> None:
    setup.ask("needs a human")
    result = await setup.run(agent=agent)
    assert result.to_json() == error_json("Error: needs a human")
    assert setup.ran == ["post", "result"]


async def test_ask_without_service_or_reason(setup: Setup) -> None:
    setup.ask()
    result = await setup.run()
    assert result.to_json() == error_json(
        'Error: tool "echo" requires approval (not yet supported)'
    )
    assert result.error is None
    assert setup.ran == ["post", "result"]


async def test_ask_default_reason_is_none() -> None:
    assert Ask().reason is None
    assert Ask("x").reason == "x"


# -- §4.6 pipeline rows: service mounted ------------------------------------------


async def test_agentless_call_never_consults_service(setup: Setup) -> None:
    service = ScriptedService("allowed-once")
    setup.registry.approval = service
    setup.ask("ignored reason")
    result = await setup.run()
    assert result.to_json() == error_json(
        'Error: tool "echo" requires approval, but the call has no agent to '
        "route it through"
    )
    assert service.requests == []
    assert setup.ran == ["post", "result"]


@pytest.mark.parametrize(
    ("outcome", "message"),
    [
        ("rejected", 'Error: the user rejected tool "echo"'),
        ("cancelled", 'Error: approval for tool "echo" was cancelled'),
        (
            "unavailable",
            'Error: tool "echo" requires approval, but no approval channel is '
            "available",
        ),
    ],
)
async def test_non_grants_deny(
    setup: Setup, agent: Agent, outcome: str, message: str
) -> None:
    setup.registry.approval = ScriptedService(outcome)
    setup.ask("the reason is forwarded, not shown")
    result = await setup.run(agent=agent)
    assert result.to_json() == error_json(message)
    assert result.error is None
    assert setup.ran == ["post", "result"]


async def test_allowed_once_runs_guards_then_tool(setup: Setup, agent: Agent) -> None:
    setup.registry.approval = ScriptedService("allowed-once")
    setup.ask()
    result = await setup.run(agent=agent)
    assert result.to_json() == OK
    assert setup.ran == ["guard", "tool", "post", "result"]


async def test_allowed_once_can_still_be_denied_by_a_guard(
    setup: Setup, agent: Agent
) -> None:
    setup.registry.approval = ScriptedService("allowed-once")
    setup.registry.guard(lambda e: "guard still says no")
    setup.ask()
    result = await setup.run(agent=agent)
    assert result.to_json() == error_json("Error: guard still says no")
    assert "tool" not in setup.ran


async def test_rogue_outcome_hits_the_backstop(setup: Setup, agent: Agent) -> None:
    setup.registry.approval = ScriptedService("yolo")
    setup.ask()
    result = await setup.run(agent=agent)
    assert result.to_json() == error_json(
        'Error: unreachable variant in ApprovalOutcome: "yolo"'
    )
    assert setup.ran == ["result"]


@pytest.mark.parametrize(
    ("exc", "info"),
    [
        (RuntimeError("approval channel crashed"), None),
        (
            ApprovalError("approval channel crashed"),
            {"name": "ApprovalError", "code": "APPROVAL_FAILED"},
        ),
        (
            HarnessError("approval channel crashed", "CUSTOM"),
            {"name": "HarnessError", "code": "CUSTOM"},
        ),
    ],
    ids=["plain", "approval-error", "harness"],
)
async def test_service_raising_goes_to_outer_boundary(
    setup: Setup, agent: Agent, exc: Exception, info: Any
) -> None:
    setup.registry.approval = ScriptedService(exc)
    setup.ask()
    result = await setup.run(agent=agent)
    expected = error_json("Error: approval channel crashed")
    if info is not None:
        expected["error"] = info
    assert result.to_json() == expected
    assert setup.ran == ["result"]


async def test_request_fields_with_reason_and_signal(
    setup: Setup, agent: Agent
) -> None:
    service = ScriptedService("rejected")
    setup.registry.approval = service
    setup.ask("why not")
    signal = FakeSignal()
    await setup.run(agent=agent, signal=signal)
    assert len(service.requests) == 1
    req = service.requests[0]
    assert isinstance(req, ApprovalRequest)
    assert req.agent is agent
    assert req.tool_name == "echo"
    assert req.call_id == "c1"
    assert req.reason == "why not"
    assert req.signal is cast(Any, signal)


async def test_request_fields_without_reason_or_signal(
    setup: Setup, agent: Agent
) -> None:
    service = ScriptedService("rejected")
    setup.registry.approval = service
    setup.ask()
    await setup.run(agent=agent)
    req = service.requests[0]
    assert req.reason is None
    assert req.signal is None
    assert req.call_id == "c1"


async def test_approval_service_is_looked_up_per_call(
    setup: Setup, agent: Agent
) -> None:
    setup.ask()
    no_service = await setup.run(agent=agent)
    assert "not yet supported" in no_service.content[0]["text"]
    setup.registry.approval = ScriptedService("allowed-once")
    assert (await setup.run(agent=agent)).to_json() == OK
    setup.registry.approval = ScriptedService("rejected")
    assert (await setup.run(agent=agent)).content[0]["text"] == (
        'Error: the user rejected tool "echo"'
    )
    setup.registry.approval = None
    assert "not yet supported" in (await setup.run(agent=agent)).content[0]["text"]


async def test_inner_ask_overridden_by_outer_allow_skips_approval(
    setup: Setup, agent: Agent
) -> None:
    service = ScriptedService("rejected")
    setup.registry.approval = service

    async def outer(e: Any, n: Any) -> Any:
        await n()
        return Allow()

    setup.registry.on_pre_execute(outer)
    setup.ask()
    result = await setup.run(agent=agent)
    assert result.to_json() == OK
    assert service.requests == []


async def test_allow_never_consults_service(setup: Setup, agent: Agent) -> None:
    service = ScriptedService("rejected")
    setup.registry.approval = service
    assert (await setup.run(agent=agent)).to_json() == OK
    assert service.requests == []


# -- §4.6 with the real service ----------------------------------------------------


async def test_real_service_outside_turn_becomes_error_result(
    setup: Setup, agent: Agent
) -> None:
    setup.registry.approval = ApprovalService()
    setup.ask()
    result = await setup.run(agent=agent)
    assert result.is_error is True
    assert "outside an open turn" in result.content[0]["text"]
    assert result.content[0]["text"].startswith("Error: ")
    assert result.to_json()["error"] == {
        "name": "ApprovalError",
        "code": "APPROVAL_FAILED",
    }
    assert setup.ran == ["result"]
    assert approval_events(agent.session) == []


async def test_real_service_without_answerer_is_unavailable(
    setup: Setup, agent: Agent
) -> None:
    setup.registry.approval = ApprovalService()
    setup.ask("risky")
    agent.session.start_turn()
    result = await setup.run(agent=agent)
    assert result.to_json() == error_json(
        'Error: tool "echo" requires approval, but no approval channel is available'
    )
    asked, decided = approval_events(agent.session)
    assert asked["type"] == "approval/asked"
    assert asked["data"] == {
        "id": asked["data"]["id"],
        "toolName": "echo",
        "callId": "c1",
        "reason": "risky",
    }
    assert decided == {
        "type": "approval/decided",
        "data": {"id": asked["data"]["id"], "outcome": "unavailable"},
    }


async def test_real_service_answerer_grants(setup: Setup, agent: Agent) -> None:
    service = ApprovalService()
    seen: list[Any] = []

    def answerer(req: Any, next: Any) -> Any:
        seen.append(req)
        return "allowed-once"

    service.on_request(answerer)
    setup.registry.approval = service
    setup.ask()
    agent.session.start_turn()
    result = await setup.run(agent=agent)
    assert result.to_json() == OK
    assert setup.ran == ["guard", "tool", "post", "result"]
    assert seen[0].tool_name == "echo"
    assert seen[0].agent is agent
    asked, decided = approval_events(agent.session)
    assert asked["data"] == {
        "id": asked["data"]["id"],
        "toolName": "echo",
        "callId": "c1",
    }
    assert decided["data"] == {"id": asked["data"]["id"], "outcome": "allowed-once"}


async def test_real_service_policy_never_rejects_in_pipeline(
    setup: Setup, agent: Agent
) -> None:
    service = ApprovalService()
    called: list[int] = []
    service.on_request(lambda req, next: (called.append(1), "allowed-once")[1])
    setup.registry.approval = service
    set_approval_policy(agent.session, "never")
    setup.ask()
    agent.session.start_turn()
    result = await setup.run(agent=agent)
    # Nobody was asked: the text names the policy; the outcome stays rejected.
    assert result.to_json() == error_json(
        'Error: approval policy "never" rejects tool "echo"'
    )
    assert called == []
    decided = agent.session.of_type("approval/decided")
    assert [e["data"]["outcome"] for e in decided] == ["rejected"]


async def test_a_person_rejecting_under_ask_is_still_the_user(
    setup: Setup, agent: Agent
) -> None:
    service = ApprovalService(policy="never")
    service.on_request(lambda req, next: "rejected")
    setup.registry.approval = service
    set_approval_policy(agent.session, "ask")  # the session overrides "never"
    setup.ask()
    agent.session.start_turn()
    result = await setup.run(agent=agent)
    assert result.to_json() == error_json('Error: the user rejected tool "echo"')
    set_approval_policy(agent.session, "never")
    result = await setup.run(agent=agent)
    assert result.to_json() == error_json(
        'Error: approval policy "never" rejects tool "echo"'
    )


async def test_real_service_receives_abort_signal_and_cancels(
    setup: Setup, agent: Agent
) -> None:
    controller = abort_controller()
    controller.abort()
    service = ApprovalService()
    called: list[int] = []
    service.on_request(lambda req, next: (called.append(1), "allowed-once")[1])
    setup.registry.approval = service
    setup.ask()
    agent.session.start_turn()
    result = await setup.run(agent=agent, signal=controller.signal)
    assert result.to_json() == error_json(
        'Error: approval for tool "echo" was cancelled'
    )
    assert called == []


# -- ApprovalService contract ---------------------------------------------------------


def req(agent: Agent, **kw: Any) -> ApprovalRequest:
    return ApprovalRequest(agent=agent, tool_name=kw.pop("tool_name", "echo"), **kw)


async def test_request_defaults() -> None:
    a = Agent("a")
    r = ApprovalRequest(agent=a, tool_name="t")
    assert r.agent is a
    assert r.tool_name == "t"
    assert r.call_id is None
    assert r.reason is None
    assert r.signal is None


async def test_request_outside_open_turn_raises_before_appending(agent: Agent) -> None:
    service = ApprovalService()
    before = agent.session.events
    with pytest.raises(ApprovalError, match="outside an open turn") as info:
        await service.request(req(agent))
    assert info.value.code == "APPROVAL_FAILED"
    assert agent.session.events == before
    agent.session.start_turn()
    agent.session.end_turn()
    after_end = agent.session.events
    with pytest.raises(ApprovalError, match="outside an open turn"):
        await service.request(req(agent))
    assert agent.session.events == after_end


async def test_audit_pair_and_fresh_ids(agent: Agent) -> None:
    service = ApprovalService()
    agent.session.start_turn()
    start = len(agent.session.events)
    first = await service.request(req(agent))
    second = await service.request(req(agent, call_id="c9", reason="because"))
    assert first == "unavailable"
    assert second == "unavailable"
    events = agent.session.events[start:]
    assert [e["type"] for e in events] == [
        "approval/asked",
        "approval/decided",
        "approval/asked",
        "approval/decided",
    ]
    id1 = events[0]["data"]["id"]
    id2 = events[2]["data"]["id"]
    assert id1 != id2
    assert events[0]["data"] == {"id": id1, "toolName": "echo"}
    assert events[1]["data"] == {"id": id1, "outcome": "unavailable"}
    assert events[2]["data"] == {
        "id": id2,
        "toolName": "echo",
        "callId": "c9",
        "reason": "because",
    }
    assert events[3]["data"] == {"id": id2, "outcome": "unavailable"}
    json.dumps([dict(e) for e in events], default=lambda o: dict(o))


@pytest.mark.parametrize("outcome", OUTCOMES)
async def test_answerer_outcomes_are_returned(agent: Agent, outcome: str) -> None:
    service = ApprovalService()
    service.on_request(lambda r, n: outcome)
    agent.session.start_turn()
    assert await service.request(req(agent)) == outcome
    assert approval_events(agent.session)[-1]["data"]["outcome"] == outcome


async def test_async_answerer(agent: Agent) -> None:
    service = ApprovalService()

    async def answerer(r: Any, n: Any) -> str:
        await asyncio.sleep(0)
        return "rejected"

    service.on_request(answerer)
    agent.session.start_turn()
    assert await service.request(req(agent)) == "rejected"


async def test_answerer_receives_exact_request(agent: Agent) -> None:
    service = ApprovalService()
    seen: list[Any] = []
    service.on_request(lambda r, n: (seen.append(r), "rejected")[1])
    agent.session.start_turn()
    request = req(agent, call_id="c1")
    await service.request(request)
    assert seen == [request]
    assert seen[0] is request


async def test_answerer_waterfall_order_first_decision_wins(agent: Agent) -> None:
    service = ApprovalService()
    log: list[str] = []

    def passes(label: str) -> Any:
        def answerer(r: Any, n: Any) -> Any:
            log.append(label)
            return n()

        return answerer

    def owns(label: str, outcome: str) -> Any:
        def answerer(r: Any, n: Any) -> Any:
            log.append(label)
            return outcome

        return answerer

    service.on_request(passes("a"))
    service.on_request(owns("b", "rejected"))
    service.on_request(owns("c", "allowed-once"))
    service.on_request(passes("front"), prepend=True)
    agent.session.start_turn()
    assert await service.request(req(agent)) == "rejected"
    assert log == ["front", "a", "b"]


async def test_outer_answerer_sees_inner_outcome(agent: Agent) -> None:
    service = ApprovalService()
    seen: list[Any] = []

    async def outer(r: Any, n: Any) -> Any:
        outcome = await n()
        seen.append(outcome)
        return outcome

    service.on_request(outer)
    agent.session.start_turn()
    assert await service.request(req(agent)) == "unavailable"
    assert seen == ["unavailable"]


async def test_answerers_are_scope_filtered(agent: Agent) -> None:
    other = Agent("bob")
    service = ApprovalService()
    log: list[str] = []
    service.on_request(lambda r, n: (log.append("bob"), "allowed-once")[1], scope=other)
    service.on_request(lambda r, n: (log.append("alice"), "rejected")[1], scope=agent)
    agent.session.start_turn()
    other.session.start_turn()
    assert await service.request(req(agent)) == "rejected"
    assert await service.request(req(other)) == "allowed-once"
    assert log == ["alice", "bob"]
    twin = Agent("alice")
    twin.session.start_turn()
    assert await service.request(req(twin)) == "unavailable"


async def test_answerer_disposer(agent: Agent) -> None:
    service = ApprovalService()
    dispose = service.on_request(lambda r, n: "allowed-once")
    agent.session.start_turn()
    assert await service.request(req(agent)) == "allowed-once"
    dispose()
    dispose()
    assert await service.request(req(agent)) == "unavailable"


@pytest.mark.parametrize("rogue", ["yolo", None, 1, "ALLOWED-ONCE", ["rejected"]])
async def test_rogue_answer_becomes_unavailable(agent: Agent, rogue: Any) -> None:
    service = ApprovalService()
    service.on_request(lambda r, n: rogue)
    agent.session.start_turn()
    assert await service.request(req(agent)) == "unavailable"
    assert approval_events(agent.session)[-1]["data"]["outcome"] == "unavailable"


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_raising_answerer_becomes_unavailable(
    agent: Agent, is_async: bool
) -> None:
    service = ApprovalService()

    async def answerer_async(r: Any, n: Any) -> Any:
        await asyncio.sleep(0)
        raise RuntimeError("widget crashed")

    def answerer_sync(r: Any, n: Any) -> Any:
        raise RuntimeError("widget crashed")

    answerer: Callable[..., Any] = answerer_async if is_async else answerer_sync

    service.on_request(answerer)
    agent.session.start_turn()
    assert await service.request(req(agent)) == "unavailable"
    assert [e["type"] for e in approval_events(agent.session)] == [
        "approval/asked",
        "approval/decided",
    ]


async def test_pre_aborted_signal_cancels_without_answerer(agent: Agent) -> None:
    controller = abort_controller()
    controller.abort()
    service = ApprovalService()
    called: list[int] = []
    service.on_request(lambda r, n: (called.append(1), "allowed-once")[1])
    agent.session.start_turn()
    outcome = await service.request(req(agent, signal=controller.signal))
    assert outcome == "cancelled"
    assert called == []
    asked, decided = approval_events(agent.session)
    assert decided["data"] == {"id": asked["data"]["id"], "outcome": "cancelled"}


@pytest.mark.parametrize("late", ["answer", "failure"])
async def test_abort_while_waiting_cancels_and_discards_late_result(
    agent: Agent, late: str
) -> None:
    loop = asyncio.get_running_loop()
    problems: list[Any] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda lp, ctx: problems.append(ctx))
    try:
        controller = abort_controller()
        service = ApprovalService()
        waiting = asyncio.Event()
        answer: asyncio.Future[str] = loop.create_future()

        async def answerer(r: Any, n: Any) -> str:
            waiting.set()
            return await answer

        service.on_request(answerer)
        agent.session.start_turn()
        task = asyncio.ensure_future(
            service.request(req(agent, signal=controller.signal))
        )
        await asyncio.wait_for(waiting.wait(), 1)
        assert not task.done()
        controller.abort()
        assert await asyncio.wait_for(task, 1) == "cancelled"
        if late == "answer":
            if not answer.done():
                answer.set_result("allowed-once")
        elif not answer.done():
            answer.set_exception(RuntimeError("late failure"))
        for _ in range(5):
            await asyncio.sleep(0)
        gc.collect()
        for _ in range(5):
            await asyncio.sleep(0)
        decided = [e for e in agent.session.events if e["type"] == "approval/decided"]
        assert len(decided) == 1
        assert decided[0]["data"]["outcome"] == "cancelled"
        assert problems == []
    finally:
        loop.set_exception_handler(previous)


async def test_policy_never_rejects_without_consulting_answerers(agent: Agent) -> None:
    service = ApprovalService()
    called: list[str] = []
    service.on_request(lambda r, n: (called.append("early"), "allowed-once")[1])
    set_approval_policy(agent.session, "never")
    service.on_request(
        lambda r, n: (called.append("late"), "allowed-once")[1], prepend=True
    )
    agent.session.start_turn()
    assert await service.request(req(agent)) == "rejected"
    assert called == []
    asked, decided = approval_events(agent.session)[-2:]
    assert asked["type"] == "approval/asked"
    assert decided["data"] == {"id": asked["data"]["id"], "outcome": "rejected"}


async def test_configured_never_and_session_override(agent: Agent) -> None:
    service = ApprovalService(policy="never")
    service.on_request(lambda r, n: "allowed-once")
    agent.session.start_turn()
    assert effective_policy(service, agent.session) == "never"
    assert await service.request(req(agent)) == "rejected"
    set_approval_policy(agent.session, "ask")
    assert effective_policy(service, agent.session) == "ask"
    assert await service.request(req(agent)) == "allowed-once"
    set_approval_policy(agent.session, "never")
    assert effective_policy(service, agent.session) == "never"
    assert await service.request(req(agent)) == "rejected"


async def test_default_policy_is_ask(agent: Agent) -> None:
    assert effective_policy(ApprovalService(), agent.session) == "ask"


async def test_policy_is_per_session(agent: Agent) -> None:
    other = Agent("bob")
    service = ApprovalService()
    set_approval_policy(agent.session, "never")
    assert effective_policy(service, agent.session) == "never"
    assert effective_policy(service, other.session) == "ask"


async def test_set_approval_policy_appends_one_event(agent: Agent) -> None:
    before = len(agent.session.events)
    set_approval_policy(agent.session, "never")
    events = agent.session.events[before:]
    assert len(events) == 1
    assert events[0]["type"] == "approval/policy"
    assert "never" in json.dumps(events[0]["data"], default=dict)


@pytest.mark.parametrize("bad", ["always", "NEVER", "", None, 1, "yolo"])
async def test_set_approval_policy_rejects_unknown(agent: Agent, bad: Any) -> None:
    before = agent.session.events
    with pytest.raises(
        Exception, match='approval policy must be one of "ask" or "never"'
    ):
        set_approval_policy(agent.session, bad)
    assert agent.session.events == before


async def test_observer_failure_does_not_split_the_audit_pair(agent: Agent) -> None:
    service = ApprovalService()
    service.on_request(lambda r, n: "rejected")
    agent.session.start_turn()

    def broken(*args: Any) -> None:
        raise RuntimeError("observer broke")

    agent.session.on_append(broken)
    assert await service.request(req(agent)) == "rejected"
    assert [e["type"] for e in approval_events(agent.session)] == [
        "approval/asked",
        "approval/decided",
    ]


async def test_request_with_policy_event_inside_turn(agent: Agent) -> None:
    """The open-turn scan is not fooled by other events after turn/start."""
    service = ApprovalService()
    agent.session.start_turn()
    set_approval_policy(agent.session, "ask")
    agent.session.append("tool/call", {"callId": "c0"})
    assert await service.request(req(agent)) == "unavailable"


# -- Agent and SessionLog ------------------------------------------------------------


def test_agent_fields_and_identity() -> None:
    a = Agent("alice")
    b = Agent("alice", cwd="/tmp")
    assert a.name == "alice"
    assert a.cwd is None
    assert b.cwd == "/tmp"
    assert isinstance(a.session, SessionLog)
    assert a != b
    assert a == a
    assert len({a, b}) == 2
    assert a.session is not b.session


def test_session_log_turns() -> None:
    log = SessionLog()
    assert log.events == ()
    assert log.in_open_turn() is False
    log.start_turn()
    assert list(log.events)[-1]["type"] == "turn/start"
    assert log.in_open_turn() is True
    log.append("tool/call", {"callId": "c1"})
    assert log.in_open_turn() is True
    log.end_turn()
    assert list(log.events)[-1]["type"] == "turn/end"
    assert log.in_open_turn() is False


def test_open_turn_scans_backwards() -> None:
    log = SessionLog()
    log.append("turn/start", {})
    log.append("turn/start", {})
    log.append("turn/end", {})
    assert log.in_open_turn() is False
    log.append("turn/end", {})
    log.append("turn/start", {})
    log.append("approval/policy", {"policy": "ask"})
    assert log.in_open_turn() is True


def test_session_events_are_frozen_tuple() -> None:
    log = SessionLog()
    data: dict[str, Any] = {"callId": "c1", "nested": {"xs": [1]}}
    log.append("tool/call", data)
    data["nested"]["xs"].append(2)
    assert isinstance(log.events, tuple)
    event = log.events[0]
    assert event == {
        "type": "tool/call",
        "data": {"callId": "c1", "nested": {"xs": [1]}},
    }
    with pytest.raises(TypeError):
        event["type"] = "x"
    with pytest.raises(TypeError):
        event["data"]["nested"]["xs"].append(3)


def test_on_append_observer_and_dispose() -> None:
    log = SessionLog()
    heard: list[Any] = []
    dispose = log.on_append(lambda *args: heard.append(args))
    log.append("tool/call", {"callId": "c1"})
    assert len(heard) == 1
    dispose()
    dispose()
    log.append("tool/call", {"callId": "c2"})
    assert len(heard) == 1


def test_on_append_observer_failure_is_contained() -> None:
    log = SessionLog()

    def broken(*args: Any) -> None:
        raise RuntimeError("observer broke")

    log.on_append(broken)
    log.append("tool/call", {"callId": "c1"})
    assert len(log.events) == 1


def test_jsonl_round_trip(tmp_path: Path) -> None:
    agent = Agent("alice")
    log = agent.session
    log.start_turn()
    log.append(
        "tool/call",
        {
            "callId": "c1",
            "name": "echo",
            "arguments": {"text": "héllo ✓", "n": 2**70, "f": 1.5, "z": None},
        },
    )
    log.append(
        "tool/result",
        {
            "callId": "c1",
            "content": [{"type": "text", "text": "ok"}],
            "isError": False,
            "meta": None,
        },
    )
    set_approval_policy(log, "never")
    log.end_turn()
    path = tmp_path / "session.jsonl"
    log.write_jsonl(str(path))

    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(log.events)
    for line, event in zip(lines, log.events, strict=True):
        parsed = json.loads(line)
        assert set(parsed) == {"type", "data"}
        assert parsed == event

    loaded = SessionLog.read_jsonl(str(path))
    assert isinstance(loaded, SessionLog)
    assert loaded.events == log.events
    assert loaded.in_open_turn() is False
    assert effective_policy(ApprovalService(), loaded) == "never"
    assert loaded.events[1]["data"]["arguments"]["n"] == 2**70
    assert type(loaded.events[1]["data"]["arguments"]["n"]) is int


def test_jsonl_round_trip_empty(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    SessionLog().write_jsonl(str(path))
    assert SessionLog.read_jsonl(str(path)).events == ()


async def test_open_turn_precondition_comes_before_policy(agent: Agent) -> None:
    service = ApprovalService(policy="never")
    with pytest.raises(ApprovalError, match="outside an open turn"):
        await service.request(req(agent))
    assert approval_events(agent.session) == []


async def test_aborted_signal_wins_over_policy_never(agent: Agent) -> None:
    controller = abort_controller()
    controller.abort()
    service = ApprovalService(policy="never")
    agent.session.start_turn()
    assert await service.request(req(agent, signal=controller.signal)) == "cancelled"


@pytest.mark.parametrize("with_signal", [False, True], ids=["no-signal", "signal"])
async def test_answerer_own_cancelled_error_fails_closed(
    agent: Agent, with_signal: bool
) -> None:
    """An answerer whose own future was cancelled (a closed prompt) still
    settles the request; the caller was not cancelled, so nothing propagates."""
    service = ApprovalService()

    async def answerer(r: Any, n: Any) -> Any:
        prompt: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        prompt.cancel()
        return await prompt

    service.on_request(answerer)
    agent.session.start_turn()
    signal = abort_controller().signal if with_signal else None
    outcome = await service.request(req(agent, signal=signal))
    assert outcome in ("cancelled", "unavailable")
    asked, decided = approval_events(agent.session)
    assert decided["data"] == {"id": asked["data"]["id"], "outcome": outcome}


async def test_answerer_own_cancelled_error_does_not_escape_execute(
    setup: Setup, agent: Agent
) -> None:
    service = ApprovalService()

    async def answerer(r: Any, n: Any) -> Any:
        prompt: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        prompt.cancel()
        return await prompt

    service.on_request(answerer)
    setup.registry.approval = service
    setup.ask()
    agent.session.start_turn()
    result = await setup.run(agent=agent)
    assert result.is_error is True
    assert "tool" not in setup.ran
    assert setup.ran[-1] == "result"


async def test_caller_cancelled_while_waiting_still_closes_the_audit_pair() -> None:
    import asyncio as _asyncio

    from dsh_nb.tools import Agent as _Agent
    from dsh_nb.tools import ApprovalRequest as _Request
    from dsh_nb.tools import ApprovalService as _Service

    service = _Service()
    agent = _Agent("a")
    agent.session.start_turn()
    never: _asyncio.Future[str] = _asyncio.get_running_loop().create_future()

    async def answerer(request: object, next_: object) -> str:
        return await never

    service.on_request(answerer)
    task = _asyncio.ensure_future(
        service.request(_Request(agent=agent, tool_name="rm", call_id="c1"))
    )
    await _asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(_asyncio.CancelledError):
        await task
    decided = agent.session.of_type("approval/decided")
    asked = agent.session.of_type("approval/asked")
    assert [d["data"]["outcome"] for d in decided] == ["cancelled"]
    assert decided[0]["data"]["id"] == asked[0]["data"]["id"]
