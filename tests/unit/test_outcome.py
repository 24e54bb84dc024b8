"""The core decides a call's outcome: status, deciding stage, approval.

Each case runs a real call through ``ToolRegistry.run`` and checks the
outcome, that a ``tools/result`` observer reads the same one off the frozen
execution, and that tracing on or off never changes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from dsh_nb.tools import (
    Accept,
    Agent,
    ApprovalService,
    Ask,
    Block,
    Deny,
    HarnessError,
    TimeoutPolicy,
    ToolDefinition,
    ToolExecutionInput,
    ToolOutcome,
    ToolRegistry,
    define_tool,
)
from dsh_nb.tools.running.abort import AbortController

Setup = Callable[[ToolRegistry, Agent], None]


def _ok(args: Any, ex: Any = None) -> str:
    return "ok"


def _raise(args: Any, ex: Any = None) -> str:
    raise HarnessError("disk full", "ENOSPC")


async def _cooperative(args: Any, ex: Any) -> str:
    await ex.signal
    return "stopped"


def _make(name: str, body: Callable[..., Any], **extra: Any) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description="",
        parameters={"type": "object", "properties": {}},
        execute=body,
        **extra,
    )


def _answer(outcome: str) -> Setup:
    def setup(reg: ToolRegistry, agent: Agent) -> None:
        reg.approval = ApprovalService()
        reg.approval.on_request(lambda request, next_: outcome)
        reg.on_pre_execute(lambda ex, next_: Ask("check"))

    return setup


def _nothing(reg: ToolRegistry, agent: Agent) -> None:
    return None


def _not_json_result(reg: ToolRegistry, agent: Agent) -> None:
    reg.register(
        _make("odd", lambda a, e: {"content": [{"type": "text"}], "meta": {1}})
    )


def _raising(seam: str) -> Setup:
    def boom(*args: Any) -> Any:
        raise RuntimeError(f"{seam} broke")

    def setup(reg: ToolRegistry, agent: Agent) -> None:
        getattr(reg, seam)(boom)

    return setup


CASES: list[tuple[str, str, Any, Setup, tuple[str, str, str | None]]] = [
    ("done", "ok", {}, _nothing, ("done", "execute", None)),
    ("tool raises", "boom", {}, _nothing, ("error", "execute", None)),
    ("unknown tool", "serch", {}, _nothing, ("error", "execute", None)),
    ("invalid args", "typed", {"n": "x"}, _nothing, ("error", "execute", None)),
    ("args not JSON", "ok", {"s": {1, 2}}, _nothing, ("error", "arguments", None)),
    (
        "pre-execute deny",
        "ok",
        {},
        lambda reg, agent: reg.on_pre_execute(lambda ex, next_: Deny("no")),
        ("denied", "pre-execute", None),
    ),
    (
        "ask without a service",
        "ok",
        {},
        lambda reg, agent: reg.on_pre_execute(lambda ex, next_: Ask()),
        ("denied", "approval", None),
    ),
    ("ask rejected", "ok", {}, _answer("rejected"), ("denied", "approval", "rejected")),
    (
        "ask unavailable",
        "ok",
        {},
        _answer("unavailable"),
        ("denied", "approval", "unavailable"),
    ),
    (
        "ask cancelled",
        "ok",
        {},
        _answer("cancelled"),
        ("cancelled", "approval", "cancelled"),
    ),
    (
        "ask allowed",
        "ok",
        {},
        _answer("allowed-once"),
        ("done", "execute", "allowed-once"),
    ),
    (
        "guard",
        "ok",
        {},
        lambda reg, agent: reg.guard(lambda ex: "not today"),
        ("denied", "guard", None),
    ),
    (
        "timeout",
        "slow",
        {},
        lambda reg, agent: TimeoutPolicy().install(reg),
        ("timeout", "execute", None),
    ),
    (
        "post block",
        "ok",
        {},
        lambda reg, agent: reg.on_post_execute(
            lambda ex, result, next_: Block([{"type": "text", "text": "hidden"}])
        ),
        ("error", "post-execute", None),
    ),
    (
        "post accept keeps a tool error",
        "boom",
        {},
        lambda reg, agent: reg.on_post_execute(
            lambda ex, result, next_: Accept(content=[{"type": "text", "text": "x"}])
        ),
        ("error", "execute", None),
    ),
    (
        "pre raises",
        "ok",
        {},
        _raising("on_pre_execute"),
        ("error", "pre-execute", None),
    ),
    ("wrapper raises", "ok", {}, _raising("on_execute"), ("error", "execute", None)),
    (
        "post raises",
        "ok",
        {},
        _raising("on_post_execute"),
        ("error", "post-execute", None),
    ),
    ("guard raises", "ok", {}, _raising("guard"), ("error", "guard", None)),
    ("result not JSON", "odd", {}, _not_json_result, ("error", "result", None)),
]


def _registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(_make("ok", _ok))
    reg.register(_make("boom", _raise))
    reg.register(_make("slow", _cooperative, timeout_ms=1))
    reg.register(
        define_tool(
            name="typed",
            description="",
            parameters={"n": {"type": "number", "required": True}},
            execute=lambda args: "typed",
        )
    )
    return reg


async def _outcome(
    name: str, args: Any, setup: Setup, *, traced: bool
) -> tuple[ToolOutcome, list[ToolOutcome | None]]:
    reg = _registry()
    agent = Agent("a")
    setup(reg, agent)
    seen: list[ToolOutcome | None] = []
    reg.on_result(lambda ex, result: seen.append(ex.outcome))
    if traced:
        reg.on_trace(lambda ex, result, records: seen.append(ex.outcome))
    agent.session.start_turn()
    run = await reg.run(
        ToolExecutionInput(call_id="c1", name=name, arguments=args, agent=agent)
    )
    assert run.execution.outcome is run.outcome
    return run.outcome, seen


@pytest.mark.parametrize(
    ("name", "args", "setup", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
async def test_the_pipeline_decides_the_outcome(
    name: str, args: Any, setup: Setup, expected: tuple[str, str, str | None]
) -> None:
    bare, seen = await _outcome(name, args, setup, traced=False)
    assert (bare.status, bare.stage, bare.approval) == expected
    assert seen == [bare]
    traced, seen = await _outcome(name, args, setup, traced=True)
    assert traced == bare and seen == [bare, bare]


async def test_run_returns_what_execute_returns() -> None:
    reg = _registry()
    results: list[Any] = []
    reg.on_result(lambda ex, result: results.append(result))
    run = await reg.run(ToolExecutionInput(call_id="c1", name="ok", arguments={}))
    plain = await reg.execute(ToolExecutionInput(call_id="c2", name="ok", arguments={}))
    assert run.result is results[0] and plain is results[1]
    assert run.result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "ok"}],
        "isError": False,
    }
    assert run.outcome == ToolOutcome(status="done", stage="execute")
    assert run.outcome.to_json() == {"status": "done", "stage": "execute"}


async def test_an_unreadable_input_is_an_error_at_the_input_stage() -> None:
    class Hostile:
        @property
        def call_id(self) -> str:
            raise RuntimeError("no id")

    run = await _registry().run(Hostile())  # type: ignore[arg-type]
    assert run.result.text == "Error: no id"
    assert (run.outcome.status, run.outcome.stage) == ("error", "input")


async def test_a_caller_abort_before_approval_is_cancelled() -> None:
    reg = _registry()
    reg.approval = ApprovalService()
    reg.on_pre_execute(lambda ex, next_: Ask())
    agent = Agent("a")
    agent.session.start_turn()
    controller = AbortController()
    controller.abort()
    run = await reg.run(
        ToolExecutionInput(
            call_id="c1", name="ok", arguments={}, agent=agent, signal=controller.signal
        )
    )
    assert run.outcome == ToolOutcome(
        status="cancelled", stage="approval", approval="cancelled"
    )


async def test_a_cancelled_task_leaves_a_cancelled_outcome() -> None:
    reg = ToolRegistry()
    started = asyncio.Event()
    executions: list[Any] = []

    async def hang(args: Any, ex: Any) -> str:
        executions.append(ex)
        started.set()
        await asyncio.sleep(10)
        return "never"

    reg.register(_make("hang", hang))
    task = asyncio.ensure_future(
        reg.run(ToolExecutionInput(call_id="c1", name="hang", arguments={}))
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    outcome = executions[0].outcome
    assert (outcome.status, outcome.stage) == ("cancelled", "execute")


def test_outcomes_are_shared_values() -> None:
    from dsh_nb.tools.values.outcome import outcome_of

    assert outcome_of("done", "execute", None) is outcome_of("done", "execute", None)
    assert outcome_of("denied", "approval", "rejected").to_json() == {
        "status": "denied",
        "stage": "approval",
        "approval": "rejected",
    }
