"""What a served client cannot see it cannot call; MCP call ids are not guessable."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpkit import add_tool, approval_registry, client

from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import define_tool


async def test_a_restricted_tool_is_unknown_before_any_policy_or_prompt() -> None:
    registry, gate = approval_registry("secret")
    registry.register(add_tool())
    registry.register(
        define_tool(
            name="secret", description="s", parameters={}, execute=lambda a: "x"
        )
    )
    server = serve_mcp(
        registry=registry,
        on_agent=lambda agent: registry.restrict(agent, deny=["secret"]),
    )
    await server.started()
    try:
        async with client(server.url, server.token) as c:
            listed = [t.name for t in (await c.list_tools()).tools]
            result = await c.call_tool("secret", {})
    finally:
        await server.stop()
    assert listed == ["add"]
    assert result.is_error
    assert result.content[0].text == 'Error: unknown tool "secret"'  # type: ignore[union-attr]
    assert gate.waiting == [] and not gate.asked.is_set()  # no one was asked


async def test_mcp_call_ids_are_random_and_unique() -> None:
    registry, gate = approval_registry("add")
    registry.register(add_tool())
    server = serve_mcp(registry=registry)
    await server.started()
    try:
        async with client(server.url, server.token) as c:
            calls = [
                asyncio.ensure_future(c.call_tool("add", {"a": i, "b": 0}))
                for i in range(3)
            ]
            while len(gate.waiting) < 3:
                await asyncio.sleep(0.01)
            ids = [request.call_id for request, _ in gate.waiting]
            for _, fut in list(gate.waiting):
                fut.set_result("allowed-once")
            results: list[Any] = await asyncio.gather(*calls)
    finally:
        await server.stop()
    assert len(set(ids)) == 3
    assert all(i.startswith("mcp-") and len(i) >= 16 for i in ids)  # not mcp-1
    assert sorted(r.content[0].text for r in results) == ["0", "1", "2"]
