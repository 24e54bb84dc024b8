"""Agents of 2026-07-28 clients past the cap (issue 34 §2.1).

A 2026-07-28 client has no session: its agent is its ``clientInfo``. A
token holder can invent names without end, so the server remembers a
bounded number of agents; these tests hold that the bound never changes
what a client may do. Every agent goes through ``on_agent`` (a restriction
holds for the 300th name as for the first), an idle agent is forgotten for
a new one, a busy one is kept, and approvals keep working past the cap.
Real servers on loopback, raw httpx for the flood, the SDK client for the
approval.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcpkit import Gate
from modernkit import call_tool, list_tools
from servekit import http_server

from dsh_nb.mcp import _adapter
from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import ApprovalService, Ask, ToolRegistry, define_tool

FLOOD = 300  # past the cap of 256


# The servers served here in-process find their runtime folder in the
# environment, as the processes they start do.
pytestmark = pytest.mark.usefixtures("runtime_env")


def tools(*names: str) -> ToolRegistry:
    registry = ToolRegistry()
    for name in names:
        registry.register(
            define_tool(
                name=name,
                description=f"the {name} tool",
                parameters={},
                execute=lambda args, execution, name=name: f"ran {name}",
            )
        )
    return registry


def names(listed: dict[str, Any]) -> list[str]:
    return sorted(t["name"] for t in listed["result"]["tools"])


async def test_a_restriction_holds_for_every_client_past_the_cap(
    runtime: Path,
) -> None:
    registry = tools("secret", "open")
    hooked: list[str] = []

    def on_agent(agent: Any) -> None:
        hooked.append(agent.name)
        registry.restrict(agent, deny=["secret"])

    server = serve_mcp(registry=registry, on_agent=on_agent)
    await server.started()
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            for i in range(FLOOD):
                listed = await list_tools(
                    http, server.url, server.token, f"made-up-{i}"
                )
                assert names(listed) == ["open"], (i, listed)
            late = await list_tools(http, server.url, server.token, "newcomer")
            called = await call_tool(
                http, server.url, server.token, "newcomer2", "secret", {}
            )
            # A forgotten client comes back restricted as before.
            again = await list_tools(http, server.url, server.token, "made-up-0")
    finally:
        await server.stop()
    assert names(late) == ["open"]
    assert called["result"]["isError"] is True
    assert "ran secret" not in str(called)
    assert names(again) == ["open"]
    assert len(hooked) == FLOOD + 3
    assert len(server.agents) <= _adapter._MAX_MODERN_AGENTS


async def test_a_busy_agent_is_kept_and_a_new_client_refused_until_one_is_idle(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_adapter, "_MAX_MODERN_AGENTS", 3)
    registry = tools("slow")
    registry.approval = ApprovalService()
    gate = Gate()
    registry.approval.on_request(gate)
    registry.on_pre_execute(lambda ex, next_: Ask("hold it"))
    server = serve_mcp(registry=registry)
    await server.started()
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            held = [
                asyncio.ensure_future(
                    call_tool(http, server.url, server.token, f"busy-{i}", "slow", {})
                )
                for i in range(3)
            ]
            while len(gate.waiting) < 3:
                await asyncio.sleep(0.02)
            refused = await list_tools(http, server.url, server.token, "fourth")
            for _, answer in list(gate.waiting):
                answer.set_result("allowed-once")
            done = await asyncio.gather(*held)
            admitted = await list_tools(http, server.url, server.token, "fourth")
    finally:
        await server.stop()
    assert "error" in refused, refused
    assert "busy" in refused["error"]["message"]
    assert [d["result"]["content"][0]["text"] for d in done] == ["ran slow"] * 3
    assert names(admitted) == ["slow"]


async def test_an_approval_round_works_for_a_new_client_past_the_cap(
    runtime: Path,
) -> None:
    asked: list[str] = []

    async def on_elicit(ctx: object, params: types.ElicitRequestParams) -> object:
        asked.append(params.message)
        return types.ElicitResult(action="accept")

    with http_server(runtime) as server:
        token = server.token()
        async with httpx2.AsyncClient(timeout=30) as http:
            for i in range(FLOOD):
                listed = await list_tools(http, server.url, token, f"made-up-{i}")
                assert "result" in listed, listed
        raw = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx2.Timeout(30, read=60),
        )
        async with Client(
            streamable_http_client(server.url, http_client=raw),
            mode="auto",
            elicitation_callback=on_elicit,
            client_info=types.Implementation(name="approver", version="9"),
        ) as c:
            assert c.protocol_version == "2026-07-28"
            done = await c.call_tool("delete_file", {"path": "a.txt"})
    assert (done.is_error, done.content[0].text) == (False, "deleted a.txt")
    assert len(asked) == 1
