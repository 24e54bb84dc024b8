"""serve_mcp against the MCP SDK's own client over real loopback HTTP.

A plain asyncio registry (no Jupyter): both protocol eras, list_changed,
the bearer token, approvals, cancellation, agents per client session.
"""

from __future__ import annotations

import asyncio
import os
import socket
import stat

import httpx2
import pytest
from mcpkit import ERAS, add_tool, approval_registry, client

from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import ToolRegistry, define_tool

# Each test serves or connects MCP servers with a runtime folder of its own.
pytestmark = pytest.mark.usefixtures("runtime_env")


async def _served(registry):
    server = serve_mcp(registry=registry)
    await server.started()
    return server


@pytest.mark.parametrize("mode", ERAS)
async def test_list_and_call_in_both_eras(mode):
    registry = ToolRegistry()
    registry.register(add_tool())
    server = await _served(registry)
    try:
        async with client(server.url, server.token, mode=mode) as c:
            assert c.protocol_version == (
                "2025-11-25" if mode == "legacy" else "2026-07-28"
            )
            tools = (await c.list_tools()).tools
            assert [(t.name, t.input_schema["required"]) for t in tools] == [
                ("add", ["a", "b"])
            ]
            result = await c.call_tool("add", {"a": 2, "b": 3})
            assert (result.content[0].text, result.is_error) == ("5", False)
            bad = await c.call_tool("add", {"a": "x", "b": 1})
            assert bad.is_error
            assert '"a" must be a number' in bad.content[0].text
            assert bad.meta["dsh_nb/error"]["code"] == "INVALID_ARGS"
            unknown = await c.call_tool("nope", {})
            assert unknown.is_error
            assert unknown.meta["dsh_nb/error"]["code"] == "UNKNOWN_TOOL"
    finally:
        await server.stop()


async def test_list_changed_in_the_handshake_era():
    registry = ToolRegistry()
    registry.register(add_tool())
    server = await _served(registry)
    notices: list[str] = []

    async def on_message(message):
        method = getattr(getattr(message, "root", message), "method", None)
        if method == "notifications/tools/list_changed":
            notices.append(method)

    try:
        async with client(server.url, server.token, on_message=on_message) as c:
            await c.list_tools()
            dispose = registry.register(
                define_tool(name="mul", description="m", parameters={}, execute=str)
            )
            await _until(lambda: len(notices) == 1)
            assert [
                t.name for t in (await c.list_tools(cache_mode="bypass")).tools
            ] == ["add", "mul"]
            # A redefinition (dispose + register) is one notice, not two.
            dispose()
            registry.register(
                define_tool(name="mul", description="m2", parameters={}, execute=str)
            )
            await _until(lambda: len(notices) == 2)
            await asyncio.sleep(0.2)
            assert len(notices) == 2
            tools = {
                t.name: t.description
                for t in (await c.list_tools(cache_mode="bypass")).tools
            }
            assert tools == {"add": "Add two numbers.", "mul": "m2"}
    finally:
        await server.stop()


async def test_list_changed_in_the_2026_era():
    registry = ToolRegistry()
    dispose = registry.register(add_tool())
    server = await _served(registry)
    try:
        async with client(server.url, server.token, mode="auto") as c:
            assert c.protocol_version.startswith("2026")
            assert [t.name for t in (await c.list_tools()).tools] == ["add"]
            async with c.listen(tools_list_changed=True) as sub:
                events = aiter(sub)
                dispose()
                event = await asyncio.wait_for(anext(events), 5)
                assert type(event).__name__ == "ToolsListChanged"
            assert (await c.list_tools(cache_mode="bypass")).tools == []
    finally:
        await server.stop()


async def test_token_is_required_and_kept_out_of_sight():
    registry = ToolRegistry()
    registry.register(add_tool())
    server = await _served(registry)
    try:
        async with httpx2.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            assert (await http.post(server.url, json=body)).status_code == 401
            wrong = {"Authorization": "Bearer " + "x" * 43}
            r = await http.post(server.url, json=body, headers=wrong)
            assert r.status_code == 401
            assert r.headers["www-authenticate"].startswith("Bearer")
            # A foreign Host is refused even with the token (DNS rebinding).
            good = {
                "Authorization": f"Bearer {server.token}",
                "Host": "evil.example:80",
            }
            r = await http.post(server.url, json=body, headers=good)
            assert r.status_code == 421
        assert server.token not in repr(server)
        assert server.token not in str(server.client_config())
        mode = stat.S_IMODE(os.stat(server.token_file).st_mode)
        assert mode == 0o600
        assert server.token in server.token_file.read_text()
        async with client(server.url, server.token) as c:
            assert (await c.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"
    finally:
        await server.stop()
    assert not server.token_file.exists()


async def test_stop_frees_the_port_and_a_busy_port_is_a_clear_error():
    registry = ToolRegistry()
    server = await _served(registry)
    port = server.port
    with pytest.raises(OSError):
        serve_mcp(registry=registry, port=port)
    await server.stop()
    assert not server.running
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
    again = serve_mcp(registry=registry, port=port)  # a new app per start
    await again.started()
    async with client(again.url, again.token) as c:
        assert (await c.list_tools()).tools == []
    await again.stop()


def test_remote_hosts_need_a_flag():
    async def go():
        with pytest.raises(ValueError, match="allow_remote=True"):
            serve_mcp(host="0.0.0.0", registry=ToolRegistry())

    asyncio.run(go())


def test_serving_needs_a_running_loop():
    with pytest.raises(RuntimeError, match="running event loop"):
        serve_mcp(registry=ToolRegistry())


@pytest.mark.parametrize("mode", ERAS)
async def test_each_client_session_is_an_agent_in_an_open_turn(mode):
    registry = ToolRegistry()
    registry.register(add_tool())
    seen = []
    registry.on_pre_execute(
        lambda ex, next_: (
            seen.append((ex.agent, ex.agent.session.in_open_turn())),
            next_(),
        )[1]
    )
    agents = []
    server = serve_mcp(registry=registry, on_agent=agents.append)
    await server.started()
    try:
        async with client(server.url, server.token, mode=mode, name="alpha") as a:
            async with client(server.url, server.token, mode=mode, name="beta") as b:
                await a.call_tool("add", {"a": 1, "b": 2})
                await b.call_tool("add", {"a": 1, "b": 2})
                await a.call_tool("add", {"a": 1, "b": 2})
        assert [agent.name for agent, _ in seen] == ["alpha", "beta", "alpha"]
        assert all(in_turn for _, in_turn in seen)
        assert seen[0][0] is seen[2][0] and seen[0][0] is not seen[1][0]
        assert {a.name for a in agents} == {"alpha", "beta"}
        log = seen[0][0].session
        assert [e["type"] for e in log.events].count("turn/start") == 2
        assert not log.in_open_turn()
    finally:
        await server.stop()


async def test_a_policy_can_target_one_client():
    registry = ToolRegistry()
    registry.register(add_tool())

    def on_agent(agent):
        if agent.name == "untrusted":
            registry.restrict(agent, deny=["add"])

    server = serve_mcp(registry=registry, on_agent=on_agent)
    await server.started()
    try:
        async with client(server.url, server.token, name="untrusted") as c:
            assert (await c.list_tools()).tools == []
            assert (await c.call_tool("add", {"a": 1, "b": 2})).is_error
        async with client(server.url, server.token, name="trusted") as c:
            assert not (await c.call_tool("add", {"a": 1, "b": 2})).is_error
    finally:
        await server.stop()


@pytest.mark.parametrize("mode", ERAS)
async def test_an_approved_call_answers_the_client(mode):
    registry, gate = approval_registry("add")
    registry.register(add_tool())
    server = await _served(registry)
    try:
        async with client(server.url, server.token, mode=mode) as c:
            call = asyncio.ensure_future(c.call_tool("add", {"a": 20, "b": 22}))
            await asyncio.wait_for(gate.asked.wait(), 10)
            assert not call.done()
            request, fut = gate.waiting[0]
            assert request.tool_name == "add"
            fut.set_result("allowed-once")
            result = await asyncio.wait_for(call, 10)
            assert result.content[0].text == "42"
            gate.asked.clear()
            call = asyncio.ensure_future(c.call_tool("add", {"a": 1, "b": 1}))
            await asyncio.wait_for(gate.asked.wait(), 10)
            gate.waiting[0][1].set_result("rejected")
            result = await asyncio.wait_for(call, 10)
            assert result.is_error
            assert result.content[0].text == 'Error: the user rejected tool "add"'
    finally:
        await server.stop()


@pytest.mark.parametrize("mode", ERAS)
async def test_client_cancellation_cancels_a_pending_approval(mode):
    registry, gate = approval_registry("add")
    registry.register(add_tool())
    results = []
    registry.on_result(lambda ex, res: results.append((ex.agent, res)))
    server = await _served(registry)
    try:
        async with client(server.url, server.token, mode=mode) as c:
            call = asyncio.ensure_future(c.call_tool("add", {"a": 1, "b": 2}))
            await asyncio.wait_for(gate.asked.wait(), 10)
            call.cancel()
            await _until(lambda: results)
            agent, result = results[0]
            assert result.is_error
            decided = agent.session.of_type("approval/decided")
            assert [e["data"]["outcome"] for e in decided] == ["cancelled"]
            await _until(lambda: gate.waiting == [])  # the prompt is cleared
            await _until(lambda: server.calls_in_flight == 0)
            # The session goes on.
            assert (await c.list_tools()).tools[0].name == "add"
    finally:
        await server.stop()


async def test_stopping_the_server_ends_a_call_held_for_an_input_round():
    from mcp import types

    from dsh_nb.mcp.elicit import mount_approvals
    from dsh_nb.tools import Ask

    registry = ToolRegistry()
    registry.register(add_tool())
    registry.on_pre_execute(lambda ex, next_: Ask("needs a yes"))
    mount_approvals(registry)
    server = await _served(registry)

    async def never(ctx, params):
        raise AssertionError("the round is held, not answered")

    try:
        async with client(
            server.url, server.token, mode="auto", name="held", elicit=never
        ) as c:
            first = await c.session.call_tool(
                "add", {"a": 1, "b": 2}, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            assert "approval" in first.input_requests
            assert server._adapter.rounds.waiting == 1
            (agent,) = server.agents
            await server.stop()
            assert server._adapter.rounds.waiting == 0
    finally:
        await server.stop()
    await _until(lambda: agent.session.of_type("tool/result"))
    decided = agent.session.of_type("approval/decided")
    assert [e["data"]["outcome"] for e in decided] == ["cancelled"]
    (result,) = agent.session.of_type("tool/result")
    assert result["data"]["status"] == "cancelled"


async def test_structured_content_where_an_output_schema_is_declared():
    from dataclasses import replace

    base = define_tool(
        name="point",
        description="A point.",
        parameters={},
        execute=lambda args: '{"x": 1, "y": 2}',
    )
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    tool = replace(base, output_schema=schema)
    registry = ToolRegistry()
    registry.register(tool)
    registry.register(add_tool())
    server = await _served(registry)
    try:
        async with client(server.url, server.token) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert listed["point"].output_schema == schema
            assert listed["add"].output_schema is None
            result = await c.call_tool("point", {})
            assert result.structured_content == {"x": 1, "y": 2}
            assert (
                await c.call_tool("add", {"a": 1, "b": 2})
            ).structured_content is None
    finally:
        await server.stop()


async def _until(predicate, timeout=20.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.01)


KILLED_CLIENT = r"""
import asyncio, sys, httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
async def main():
    http = httpx2.AsyncClient(headers={"Authorization": "Bearer " + sys.argv[2]})
    transport = streamable_http_client(sys.argv[1], http_client=http)
    async with Client(transport, mode=sys.argv[3]) as c:
        await c.call_tool("add", {"a": 1, "b": 2})
asyncio.run(main())
"""


@pytest.mark.parametrize("mode", ERAS)
async def test_a_client_that_dies_mid_call_cancels_it(mode):
    import subprocess
    import sys

    registry, gate = approval_registry("add")
    registry.register(add_tool())
    results = []
    registry.on_result(lambda ex, res: results.append(res))
    server = await _served(registry)
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_CLIENT, server.url, server.token, mode]
    )
    try:
        await asyncio.wait_for(gate.asked.wait(), 30)
        process.kill()
        process.wait()
        await _until(lambda: results)
        assert results[0].text == 'Error: approval for tool "add" was cancelled'
        await _until(lambda: gate.waiting == [])
        await _until(lambda: server.calls_in_flight == 0)
    finally:
        process.kill()
        await server.stop()
