"""The stdio bridge, launched by the SDK's own stdio client, across restarts."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcpkit import add_tool

from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import ToolRegistry, define_tool

# The servers served here in-process find their runtime folder in the
# environment, as the processes they start do.
pytestmark = pytest.mark.usefixtures("runtime_env")


async def test_the_bridge_forwards_and_reconnects_after_a_restart(runtime):
    registry = ToolRegistry()
    registry.register(add_tool())
    first = serve_mcp(registry=registry, name="k1")
    await first.started()
    notices: list[str] = []

    async def on_message(message):
        if getattr(getattr(message, "root", message), "method", "").endswith(
            "list_changed"
        ):
            notices.append("changed")

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dsh_nb", "mcp-bridge", "--latest"],
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)},
    )
    async with Client(params, mode="legacy", message_handler=on_message) as c:
        assert [t.name for t in (await c.list_tools()).tools] == ["add"]
        assert (await c.call_tool("add", {"a": 2, "b": 3})).content[0].text == "5"
        dispose = registry.register(
            define_tool(name="mul", description="m", parameters={}, execute=str)
        )
        await _until(lambda: notices)
        dispose()
        await first.stop()
        # Between kernels: a clear error, not a hang. The first call may
        # still find the old connection and learn it is gone.
        with pytest.raises(MCPError, match=r"kernel went away|no dsh_nb MCP server"):
            await asyncio.wait_for(c.call_tool("add", {"a": 1, "b": 1}), 30)
        with pytest.raises(MCPError, match="no dsh_nb MCP server is running"):
            await asyncio.wait_for(c.call_tool("add", {"a": 1, "b": 1}), 30)
        second = serve_mcp(registry=registry, name="k2")  # new port, new token
        await second.started()
        try:
            result = await asyncio.wait_for(c.call_tool("add", {"a": 1, "b": 1}), 30)
            assert result.content[0].text == "2"
        finally:
            await second.stop()


def test_mcp_config_prints_url_and_header_and_the_settings_carry_no_token(runtime):
    async def go():
        server = serve_mcp(registry=ToolRegistry(), name="kid")
        await server.started()
        env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)}
        done = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dsh_nb",
            "mcp-config",
            "--kernel",
            "kid",
            env=env,
            stdout=subprocess.PIPE,
        )
        out = (await done.communicate())[0].decode()
        config = server.client_config()
        await server.stop()
        return server, out, config

    server, out, config = asyncio.run(go())
    assert f"URL:    {server.url}" in out
    assert f"Header: Authorization: Bearer {server.token}" in out
    # Every form a newcomer's client asks for: mcpServers, VS Code's
    # servers, and the Inspector's command line.
    forms = out.split("The MCP Inspector:")
    assert '"mcpServers"' in forms[0] and '"servers"' in forms[0]
    vscode = json.loads(forms[0].split("VS Code (.vscode/mcp.json):")[1])
    assert vscode["servers"]["dsh_nb"]["type"] == "stdio"
    assert vscode["servers"]["dsh_nb"]["args"][-2:] == ["--kernel", "kid"]
    inspector = shlex.split(forms[1].strip())
    assert inspector[:2] == ["npx", "@modelcontextprotocol/inspector"]
    assert inspector[-3:] == ["mcp-bridge", "--kernel", "kid"]
    assert server.token not in forms[0].split("Header:")[1].split("\n", 1)[1]
    assert server.token not in str(config)
    assert config["command"][-4:] == ["dsh_nb", "mcp-bridge", "--kernel", "kid"]
    for client in ("claude_code", "cursor", "vscode"):
        assert "mcp-bridge" in str(config[client])
    done = subprocess.run(
        [sys.executable, "-m", "dsh_nb", "mcp-config"],
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "no dsh_nb MCP server is running" in done.stderr


async def _until(predicate, timeout=20.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)
