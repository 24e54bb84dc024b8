"""A mounted approval service written to the contract: ``request`` only.

Contract §4.6: the pipeline calls ``request(req)`` and reads the outcome it
returns. ``ApprovalService.decide`` (which also says how an ask was decided)
is used only where a service has it; a service with ``request`` alone, or a
subclass that overrides only ``request``, must see every ask (issue 34 §1).
Every row of the §4.6 table runs here against such services.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.pipeline.approval import (
    ApprovalRequest,
    ApprovalService,
    set_approval_policy,
)
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import Ask, ToolExecutionInput, ToolExecutionResult


class RequestOnly:
    """The contract's service shape and nothing more: ``request(req)``."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests: list[Any] = []

    async def request(self, req: Any) -> Any:
        self.requests.append(req)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


class OverridesRequest(ApprovalService):
    """A subclass written to the contract: it overrides ``request`` only."""

    def __init__(self, answer: str) -> None:
        super().__init__()
        self.answer = answer
        self.requests: list[Any] = []

    async def request(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        return self.answer


class Wrapping:
    """A contract-shaped service that delegates to the real one."""

    def __init__(self, inner: ApprovalService) -> None:
        self.inner = inner
        self.requests: list[Any] = []

    async def request(self, req: ApprovalRequest) -> Any:
        self.requests.append(req)
        return await self.inner.request(req)


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


def error_json(message: str) -> dict[str, Any]:
    return {"callId": "c1", "content": [text(message)], "isError": True}


OK = {"callId": "c1", "content": [text("ran")], "isError": False}


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
        self.registry.on_pre_execute(lambda e, n: Ask("forwarded, not shown"))

    async def run(self, agent: Agent | None) -> ToolExecutionResult:
        return await self.registry.execute(
            ToolExecutionInput(call_id="c1", name="echo", arguments={}, agent=agent)
        )


@pytest.fixture
def setup() -> Setup:
    return Setup()


@pytest.fixture
def agent() -> Agent:
    alice = Agent("alice")
    alice.session.start_turn()
    return alice


@pytest.mark.parametrize("shape", [RequestOnly, OverridesRequest])
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
async def test_request_only_non_grants_deny_with_the_contract_text(
    setup: Setup, agent: Agent, shape: Any, outcome: str, message: str
) -> None:
    service = shape(outcome)
    setup.registry.approval = service
    result = await setup.run(agent)
    assert result.to_json() == error_json(message)
    assert setup.ran == ["post", "result"]
    assert len(service.requests) == 1


@pytest.mark.parametrize("shape", [RequestOnly, OverridesRequest])
async def test_request_only_allowed_once_runs_guards_then_tool(
    setup: Setup, agent: Agent, shape: Any
) -> None:
    service = shape("allowed-once")
    setup.registry.approval = service
    result = await setup.run(agent)
    assert result.to_json() == OK
    assert setup.ran == ["guard", "tool", "post", "result"]
    req = service.requests[0]
    assert isinstance(req, ApprovalRequest)
    assert req.agent is agent
    assert req.tool_name == "echo"
    assert req.call_id == "c1"
    assert req.reason == "forwarded, not shown"


async def test_request_only_outcome_is_recorded_on_the_call(
    setup: Setup, agent: Agent
) -> None:
    setup.registry.approval = RequestOnly("allowed-once")
    run = await setup.registry.run(
        ToolExecutionInput(call_id="c1", name="echo", arguments={}, agent=agent)
    )
    assert run.outcome.approval == "allowed-once"
    assert run.result.to_json() == OK


async def test_request_only_rogue_outcome_hits_the_backstop(
    setup: Setup, agent: Agent
) -> None:
    setup.registry.approval = RequestOnly("yolo")
    result = await setup.run(agent)
    assert result.to_json() == error_json(
        'Error: unreachable variant in ApprovalOutcome: "yolo"'
    )
    assert setup.ran == ["result"]


async def test_request_only_service_raising_reaches_the_outer_boundary(
    setup: Setup, agent: Agent
) -> None:
    setup.registry.approval = RequestOnly(RuntimeError("channel crashed"))
    result = await setup.run(agent)
    assert result.to_json() == error_json("Error: channel crashed")
    assert setup.ran == ["result"]


async def test_request_only_agentless_call_is_never_asked(setup: Setup) -> None:
    service = RequestOnly("allowed-once")
    setup.registry.approval = service
    result = await setup.run(None)
    assert result.to_json() == error_json(
        'Error: tool "echo" requires approval, but the call has no agent to '
        "route it through"
    )
    assert service.requests == []


async def test_a_wrapped_real_service_keeps_its_audit_pair(
    setup: Setup, agent: Agent
) -> None:
    inner = ApprovalService()
    inner.on_request(lambda request, next_: "rejected")
    service = Wrapping(inner)
    setup.registry.approval = service
    result = await setup.run(agent)
    assert result.to_json() == error_json('Error: the user rejected tool "echo"')
    assert len(service.requests) == 1
    pair = [e for e in agent.session.events if e["type"].startswith("approval/")]
    assert [e["type"] for e in pair] == ["approval/asked", "approval/decided"]
    assert pair[1]["data"]["outcome"] == "rejected"


async def test_a_wrapped_real_service_outside_a_turn_raises_its_error(
    setup: Setup,
) -> None:
    setup.registry.approval = Wrapping(ApprovalService())
    result = await setup.run(Agent("bob"))
    assert result.is_error
    assert "outside an open turn" in result.content[0]["text"]


async def test_the_real_service_still_says_the_policy_decided(
    setup: Setup, agent: Agent
) -> None:
    service = ApprovalService()
    set_approval_policy(agent.session, "never")
    setup.registry.approval = service
    result = await setup.run(agent)
    assert result.to_json() == error_json(
        'Error: approval policy "never" rejects tool "echo"'
    )


async def test_a_service_with_neither_method_names_request(
    setup: Setup, agent: Agent
) -> None:
    setup.registry.approval = object()  # type: ignore[assignment]
    result = await setup.run(agent)
    assert result.is_error
    assert "request" in result.content[0]["text"]
    assert setup.ran == ["result"]


def test_a_request_only_service_has_the_default_policy_in_prompts() -> None:
    from dsh_nb.models.policy_notes import NEVER_SENTENCE, prompt_section

    alice = Agent("alice")
    service: Any = RequestOnly("rejected")
    assert prompt_section(service, alice) == '<approval-policy value="ask"/>'
    set_approval_policy(alice.session, "never")
    assert NEVER_SENTENCE in prompt_section(service, alice)


def test_serving_keeps_a_request_only_service_and_answers_through_it() -> None:
    from dsh_nb.mcp.elicit import mount_approvals

    registry = ToolRegistry()
    service: Any = RequestOnly("rejected")
    registry.approval = service
    dispose = mount_approvals(registry)
    assert registry.approval is service
    dispose()
    assert registry.approval is service
