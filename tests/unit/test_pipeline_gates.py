# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline, §4.5, §4.7, §4.8: pre-execute, guards and the denial result.

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

from typing import Any

import pytest
from pipelinekit import (
    AC,
    error_json,
    inp,
    make_def,
    ok_json,
    text,
)

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.errors import (
    HarnessError,
)
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    Accept,
    Allow,
    Block,
    Deny,
)

# -- §4.5 pre-execute ------------------------------------------------------------


async def test_pre_deny_denial_result_flows_through_post_and_observers(
    registry: ToolRegistry,
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.on_pre_execute(lambda e, n: Deny("not allowed here"))
    registry.guard(lambda e: ran.append("guard"))
    registry.on_execute(lambda e, n: (ran.append("execute"), n())[1])
    post_seen: list[Any] = []
    registry.on_post_execute(lambda e, r, n: (post_seen.append(r.to_json()), n())[1])
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(r))
    result = await registry.execute(inp())
    expected = {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: not allowed here"}],
        "isError": True,
    }
    assert result.to_json() == expected
    assert result.error is None
    assert ran == []
    assert post_seen == [expected]
    assert observed == [result]


async def test_inner_deny_reaches_outer_listener_through_next(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    seen: list[Any] = []

    async def outer(e: Any, n: Any) -> Any:
        decision = await n()
        seen.append(decision)
        return decision

    registry.on_pre_execute(outer)
    registry.on_pre_execute(lambda e, n: Deny("inner says no"))
    result = await registry.execute(inp())
    assert isinstance(seen[0], Deny)
    assert seen[0].reason == "inner says no"
    assert result.to_json() == error_json("Error: inner says no")


async def test_outer_listener_may_override_inner_deny(registry: ToolRegistry) -> None:
    registry.register(make_def())

    async def outer(e: Any, n: Any) -> Any:
        await n()
        return Allow()

    registry.on_pre_execute(outer)
    registry.on_pre_execute(lambda e, n: Deny("inner says no"))
    assert (await registry.execute(inp())).to_json() == ok_json()


async def test_deny_with_empty_reason(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_pre_execute(lambda e, n: Deny(""))
    assert (await registry.execute(inp())).to_json() == error_json("Error: ")


# -- §4.7 guards ------------------------------------------------------------------


async def test_guards_run_only_when_allowed(registry: ToolRegistry) -> None:
    registry.register(make_def())
    calls: list[str] = []
    registry.guard(lambda e: calls.append("guard"))
    registry.on_pre_execute(lambda e, n: Deny("no"))
    await registry.execute(inp())
    assert calls == []


async def test_guard_receives_frozen_arguments(registry: ToolRegistry) -> None:
    got: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        got.append(args)
        return [text("ok")]

    registry.register(make_def("echo", body))
    seen: list[Any] = []

    def guard(execution: Any) -> None:
        seen.append(execution.arguments)
        try:
            execution.arguments["x"] = 2
        except TypeError:
            seen.append("frozen")

    registry.guard(guard)
    await registry.execute(inp(arguments={"x": 1}))
    assert seen[1] == "frozen"
    assert seen[0] is got[0]
    assert got[0] == {"x": 1}


async def test_guard_empty_string_denies(registry: ToolRegistry) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.guard(lambda e: "")
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: "}],
        "isError": True,
    }
    assert ran == []


async def test_guard_denial_flows_through_post_execute(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.guard(lambda e: "guarded")
    seen: list[Any] = []
    registry.on_post_execute(lambda e, r, n: (seen.append(r.to_json()), n())[1])
    result = await registry.execute(inp())
    assert seen == [error_json("Error: guarded")]
    assert result.to_json() == error_json("Error: guarded")


@pytest.mark.parametrize(
    ("exc", "info"),
    [
        (RuntimeError("guard exploded"), None),
        (
            HarnessError("guard exploded", "GUARD_DOWN"),
            {"name": "HarnessError", "code": "GUARD_DOWN"},
        ),
    ],
    ids=["plain", "harness"],
)
async def test_raising_guard_goes_to_outer_boundary(
    registry: ToolRegistry, exc: Exception, info: Any
) -> None:
    registry.register(make_def())
    log: list[str] = []

    def guard(e: Any) -> None:
        raise exc

    registry.guard(guard)
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    registry.on_result(lambda e, r: log.append("result"))
    result = await registry.execute(inp())
    expected = error_json("Error: guard exploded")
    if info is not None:
        expected["error"] = info
    assert result.to_json() == expected
    assert log == ["result"]


async def test_prepended_allow_cannot_bypass_scoped_guard(
    registry: ToolRegistry, agent: Agent
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.guard(lambda e: "scoped guard says no", scope=agent)
    registry.on_pre_execute(lambda e, n: Allow(), prepend=True)
    registry.on_pre_execute(lambda e, n: Allow(), scope=agent, prepend=True)
    result = await registry.execute(inp(agent=agent))
    assert result.to_json() == error_json("Error: scoped guard says no")
    assert ran == []


# -- §4.8 denial through post-execute ---------------------------------------------


async def test_accept_can_rewrite_denial_text_without_clearing_is_error(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_pre_execute(lambda e, n: Deny("nope"))
    registry.on_post_execute(lambda e, r, n: Accept(content=[text("denied politely")]))
    result = await registry.execute(inp())
    assert result.to_json() == error_json("denied politely")


async def test_block_on_denial(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_pre_execute(lambda e, n: Deny("nope"))
    registry.on_post_execute(
        lambda e, r, n: Block(feedback=[text("blocked")], additional_context=AC)
    )
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("blocked")],
        "isError": True,
        "additionalContext": AC,
    }
