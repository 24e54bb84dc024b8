"""How an ask was decided: the service records it, the denial text reads it.

The service says, with each outcome, whether an answerer, the ``never``
policy, an answerer's time limit, the call's abort, nobody, or a broken
answerer decided it (``ApprovalService.decide``). The pipeline words its
denial from that record, so a policy that changes while the ask is open,
or a service that decides by its own rules, still gets the true text.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import dsh_nb.tools.pipeline.approval as approval_module
from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.pipeline.approval import (
    DECIDERS,
    ApprovalDecision,
    ApprovalRequest,
    ApprovalService,
    set_approval_policy,
)
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.running.abort import AbortController
from dsh_nb.tools.values.execution import Ask, ToolExecutionInput

POLICY = 'Error: approval policy "never" rejects tool "rm"'
USER = 'Error: the user rejected tool "rm"'
CANCELLED = 'Error: approval for tool "rm" was cancelled'
NOBODY = 'Error: tool "rm" requires approval, but no approval channel is available'


class DecidingService(ApprovalService):
    """A service that decides by its own rules and says how."""

    def __init__(self, decision: ApprovalDecision) -> None:
        super().__init__()
        self.decision = decision

    async def decide(self, request: ApprovalRequest) -> ApprovalDecision:
        return self.decision


def registry_with(service: ApprovalService) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(
        ToolDefinition(
            name="rm",
            description="remove",
            parameters={"type": "object", "properties": {}},
            execute=lambda args, ex: "removed",
        )
    )
    registry.on_pre_execute(lambda ex, next_: Ask())
    registry.approval = service
    return registry


@pytest.fixture
def agent() -> Agent:
    agent = Agent("alice")
    agent.session.start_turn()
    return agent


async def run(registry: ToolRegistry, agent: Agent, signal: Any = None) -> Any:
    return await registry.run(
        ToolExecutionInput(
            call_id="c1", name="rm", arguments={}, agent=agent, signal=signal
        )
    )


def req(agent: Agent, signal: Any = None) -> ApprovalRequest:
    return ApprovalRequest(agent=agent, tool_name="rm", call_id="c1", signal=signal)


def decided(agent: Agent) -> list[str]:
    return [e["data"]["outcome"] for e in agent.session.of_type("approval/decided")]


# -- the service says how it decided -------------------------------------------


async def test_the_never_policy_decides_without_asking(agent: Agent) -> None:
    service = ApprovalService()
    asked: list[object] = []
    service.on_request(lambda request, next_: asked.append(request) or "allowed-once")
    set_approval_policy(agent.session, "never")
    decision = await service.decide(req(agent))
    assert decision == ApprovalDecision(outcome="rejected", decided_by="policy")
    assert asked == []
    assert decided(agent) == ["rejected"]


async def test_an_answerer_decides(agent: Agent) -> None:
    service = ApprovalService()
    service.on_request(lambda request, next_: "rejected")
    decision = await service.decide(req(agent))
    assert decision == ApprovalDecision(outcome="rejected", decided_by="answerer")


async def test_an_answerer_says_its_cancel_was_a_timeout(agent: Agent) -> None:
    service = ApprovalService()
    timed_out = ApprovalDecision(outcome="cancelled", decided_by="timeout")
    service.on_request(lambda request, next_: timed_out)
    assert await service.decide(req(agent)) is timed_out
    assert decided(agent) == ["cancelled"]


async def test_with_no_answerer_nobody_decided(agent: Agent) -> None:
    service = ApprovalService()
    nobody = ApprovalDecision(outcome="unavailable", decided_by="no-answerer")
    assert await service.decide(req(agent)) == nobody
    # An answerer that only passes the request on does not decide either.
    service.on_request(lambda request, next_: next_())
    assert await service.decide(req(agent)) == nobody


async def test_an_answerer_saying_unavailable_itself_decided(agent: Agent) -> None:
    service = ApprovalService()
    service.on_request(lambda request, next_: "unavailable")
    decision = await service.decide(req(agent))
    assert decision == ApprovalDecision(outcome="unavailable", decided_by="answerer")


@pytest.mark.parametrize(
    "answer",
    [
        "yolo",
        ["rejected"],
        ApprovalDecision(outcome="rejected", decided_by="policy"),
        ApprovalDecision(outcome="rejected", decided_by="no-answerer"),
        ApprovalDecision(outcome="yolo", decided_by="answerer"),  # type: ignore[arg-type]
        ApprovalDecision(outcome="rejected", decided_by="me"),  # type: ignore[arg-type]
    ],
    ids=[
        "rogue",
        "unhashable",
        "claims-policy",
        "claims-nobody",
        "bad-outcome",
        "bad-by",
    ],
)
async def test_an_answer_that_is_not_one_fails_closed(
    agent: Agent, answer: object
) -> None:
    service = ApprovalService()
    service.on_request(lambda request, next_: answer)
    decision = await service.decide(req(agent))
    assert decision == ApprovalDecision(outcome="unavailable", decided_by="failure")
    assert decided(agent) == ["unavailable"]


async def test_a_raising_answerer_is_a_failure(agent: Agent) -> None:
    service = ApprovalService()

    def broken(request: ApprovalRequest, next_: Any) -> str:
        raise RuntimeError("the prompt broke")

    service.on_request(broken)
    decision = await service.decide(req(agent))
    assert decision == ApprovalDecision(outcome="unavailable", decided_by="failure")


async def test_an_abort_decides_before_and_while_asking(agent: Agent) -> None:
    service = ApprovalService()
    waiting = asyncio.Event()

    async def never_answers(request: ApprovalRequest, next_: Any) -> str:
        waiting.set()
        await asyncio.sleep(10)
        return "allowed-once"

    service.on_request(never_answers)
    aborted = ApprovalDecision(outcome="cancelled", decided_by="abort")
    before = AbortController()
    before.abort()
    assert await service.decide(req(agent, before.signal)) == aborted
    during = AbortController()
    task = asyncio.ensure_future(service.decide(req(agent, during.signal)))
    await waiting.wait()
    during.abort()
    assert await asyncio.wait_for(task, 2) == aborted


async def test_request_returns_the_decided_outcome(agent: Agent) -> None:
    service = ApprovalService()
    service.on_request(lambda request, next_: "allowed-once")
    assert await service.request(req(agent)) == "allowed-once"
    set_approval_policy(agent.session, "never")
    assert await service.request(req(agent)) == "rejected"
    assert decided(agent) == ["allowed-once", "rejected"]


def test_the_ways_are_the_documented_ones() -> None:
    assert DECIDERS == (
        "answerer",
        "policy",
        "timeout",
        "abort",
        "no-answerer",
        "failure",
    )


# -- the denial text follows the recorded decision -------------------------------


@pytest.mark.parametrize(
    ("outcome", "by", "text", "status"),
    [
        ("rejected", "policy", POLICY, "denied"),
        ("rejected", "answerer", USER, "denied"),
        ("cancelled", "timeout", CANCELLED, "cancelled"),
        ("cancelled", "abort", CANCELLED, "cancelled"),
        ("unavailable", "no-answerer", NOBODY, "denied"),
        ("unavailable", "failure", NOBODY, "denied"),
    ],
)
@pytest.mark.parametrize("session_policy", ["ask", "never"])
async def test_the_denial_text_follows_the_decision_not_the_session(
    agent: Agent, outcome: Any, by: Any, text: str, status: str, session_policy: Any
) -> None:
    # The session's policy is set against the decision half the time: the
    # text must come from what the service recorded, never from the policy.
    set_approval_policy(agent.session, session_policy)
    decision = ApprovalDecision(outcome=outcome, decided_by=by)
    ran = await run(registry_with(DecidingService(decision)), agent)
    assert ran.result.text == text
    assert (ran.outcome.status, ran.outcome.stage) == (status, "approval")
    assert ran.outcome.approval == outcome


async def test_a_policy_set_while_asking_is_the_one_that_decides(
    agent: Agent,
) -> None:
    """The policy turns "never" after the ask began: a prediction made
    before asking would blame the user; the service's record says policy."""
    service = ApprovalService()
    asked: list[object] = []
    service.on_request(lambda request, next_: asked.append(request) or "rejected")
    session = agent.session
    flip = session.on_append(
        lambda event: (
            set_approval_policy(session, "never")
            if event["type"] == "approval/asked"
            else None
        )
    )
    ran = await run(registry_with(service), agent)
    flip()
    assert ran.result.text == POLICY
    assert asked == []


async def test_a_policy_lifted_while_asking_lets_the_person_decide(
    agent: Agent,
) -> None:
    service = ApprovalService()
    service.on_request(lambda request, next_: "rejected")
    session = agent.session
    set_approval_policy(session, "never")
    lift = session.on_append(
        lambda event: (
            set_approval_policy(session, "ask")
            if event["type"] == "approval/asked"
            else None
        )
    )
    ran = await run(registry_with(service), agent)
    lift()
    assert ran.result.text == USER


async def test_the_pipeline_reads_the_policy_only_through_the_service(
    agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[object] = []
    real = approval_module.effective_policy

    def counting(service: Any, session: Any) -> Any:
        reads.append(service)
        return real(service, session)

    monkeypatch.setattr(approval_module, "effective_policy", counting)
    service = ApprovalService()
    set_approval_policy(agent.session, "never")
    ran = await run(registry_with(service), agent)
    assert ran.result.text == POLICY
    assert reads == [service]  # once, by the service deciding; nobody predicts
