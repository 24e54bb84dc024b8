"""Input rounds (2026-07-28 approvals) at their edges, in-process.

Both servers' adapters (the kernel's ``RegistryAdapter`` and the
standalone one built on it) are served to the SDK's ``Client`` in-process
(no transport), in the 2026-07-28 era, with the low-level session so a test
can hold an ``input_required`` answer instead of letting the client retry.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client, types

from dsh_nb.mcp._adapter import RegistryAdapter
from dsh_nb.mcp.elicit import mount_approvals
from dsh_nb.mcp.standalone import StandaloneAdapter
from dsh_nb.tools import Ask, ToolRegistry, tool


@tool
def delete_file(path: str) -> str:
    """Pretend to delete a file."""
    return f"deleted {path}"


@pytest.fixture(params=["kernel", "standalone"])
def adapter(request: pytest.FixtureRequest) -> RegistryAdapter:
    registry = ToolRegistry()
    registry.register(delete_file)
    registry.on_pre_execute(lambda ex, next_: Ask("needs a yes"))
    mount_approvals(registry)
    if request.param == "kernel":
        return RegistryAdapter(registry)
    return StandaloneAdapter(registry, spec="test", transport="stdio")


async def _never(ctx: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("the test answers by hand")


async def test_an_unanswered_round_is_cancelled_and_its_state_dies_with_it(
    adapter: RegistryAdapter,
) -> None:
    adapter.rounds.timeout_s = 0.2
    server = adapter.build(asyncio.get_running_loop())
    async with Client(server, mode="auto", elicitation_callback=_never) as c:
        assert c.protocol_version == "2026-07-28"
        first = await c.session.call_tool(
            "delete_file", {"path": "a"}, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        request = first.input_requests["approval"]
        assert 'Allow the tool "delete_file" to run once?' in request.params.message
        assert adapter.rounds.waiting == 1
        await asyncio.sleep(0.5)
        assert adapter.rounds.waiting == 0
        late = await c.session.call_tool(
            "delete_file",
            {"path": "a"},
            request_state=first.request_state,
            input_responses={"approval": types.ElicitResult(action="accept")},
            allow_input_required=True,
        )
    assert late.is_error and "unknown or expired" in late.content[0].text
    (agent,) = adapter.agents.values()
    decided = agent.session.of_type("approval/decided")
    assert [e["data"]["outcome"] for e in decided] == ["cancelled"]
    (result,) = agent.session.of_type("tool/result")
    assert result["data"]["status"] == "cancelled"
    adapter.close()


async def test_a_state_is_used_once_and_only_for_its_own_tool(
    adapter: RegistryAdapter,
) -> None:
    server = adapter.build(asyncio.get_running_loop())
    async with Client(server, mode="auto", elicitation_callback=_never) as c:
        first = await c.session.call_tool(
            "delete_file", {"path": "a"}, allow_input_required=True
        )
        assert isinstance(first, types.InputRequiredResult)
        yes = {"approval": types.ElicitResult(action="accept")}
        other = await c.session.call_tool(
            "add",
            {},
            request_state=first.request_state,
            input_responses=yes,
            allow_input_required=True,
        )
        assert other.is_error and "unknown or expired" in other.content[0].text
        done = await c.session.call_tool(
            "delete_file",
            {"path": "a"},
            request_state=first.request_state,
            input_responses=yes,
            allow_input_required=True,
        )
        assert (done.is_error, done.content[0].text) == (False, "deleted a")
        again = await c.session.call_tool(
            "delete_file",
            {"path": "a"},
            request_state=first.request_state,
            input_responses=yes,
            allow_input_required=True,
        )
        assert again.is_error
    (agent,) = adapter.agents.values()
    assert len(agent.session.of_type("tool/result")) == 1  # it ran once
    adapter.close()
