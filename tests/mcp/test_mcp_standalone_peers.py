"""Clients nobody here wrote, against ``python -m dsh_nb serve``.

Each lists the tools, calls one, and gets ``INVALID_ARGS`` for arguments
the schema refuses:

* the MCP Inspector's CLI (the TypeScript SDK), launching the server from
  the settings ``mcp-config MODULE`` prints, as Claude Code would;
* openai-agents' ``MCPServerStdio`` (stdio);
* pydantic-ai's ``MCPToolset`` (its FastMCP client) over Streamable HTTP
  with the bearer token, as a service would reach a deployed server.

The SDK's own Python client, with elicitation, is in test_mcp_standalone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from nodepeers import inspector
from servekit import HERE, ROOT, TOOLS, env, http_server, serve_argv


def _json(stdout: str) -> dict:
    return json.loads(stdout[stdout.index("{") :])


async def test_the_inspector_cli_runs_the_settings_mcp_config_prints(
    runtime: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dsh_nb", "mcp-config", str(TOOLS)],
        capture_output=True,
        text=True,
        env=env(runtime),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    settings = json.loads(done.stdout.split("\n\n")[0].split("\n", 1)[1])
    # This checkout, whichever dsh_nb the interpreter has installed.
    settings["mcpServers"]["standalone_tools"]["env"] = {"PYTHONPATH": str(ROOT)}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(settings))
    target = ("--config", str(config), "--server", "standalone_tools")
    run_env = env(runtime)

    listed = await inspector(*target, "--method", "tools/list", env=run_env)
    assert listed.code == 0, listed.stderr
    names = [t["name"] for t in _json(listed.stdout)["tools"]]
    assert names == ["add", "delete_file", "where", "shout"]

    called = await inspector(
        *target,
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=2",
        "b=5",
        env=run_env,
    )
    assert called.code == 0, called.stderr
    result = _json(called.stdout)
    assert (result["content"], result["isError"]) == (
        [{"type": "text", "text": "7"}],
        False,
    )

    bad = await inspector(
        *target,
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=two",
        "b=5",
        env=run_env,
    )
    assert bad.code == 0, bad.stderr
    refused = _json(bad.stdout)
    assert refused["isError"] is True
    assert refused["_meta"]["dsh_nb/error"]["code"] == "INVALID_ARGS"
    assert '"a" must be an integer' in refused["content"][0]["text"]


async def test_openai_agents_mcp_server_stdio(runtime: Path) -> None:
    from agents.mcp import MCPServerStdio

    argv = serve_argv(str(TOOLS), "--stdio")
    params = {
        "command": argv[0],
        "args": argv[1:],
        "env": env(runtime),
        "cwd": str(HERE),
    }
    async with MCPServerStdio(
        params=params, name="dsh_nb", client_session_timeout_seconds=60
    ) as server:
        names = [t.name for t in await server.list_tools()]
        assert names == ["add", "delete_file", "where", "shout"]
        done = await server.call_tool("add", {"a": 20, "b": 22})
        assert (done.is_error, done.content[0].text) == (False, "42")
        # openai-agents checks that required names are present itself; a
        # wrong type reaches the server, which refuses it.
        bad = await server.call_tool("add", {"a": "x", "b": 1})
        assert bad.is_error
        assert (bad.meta or {})["dsh_nb/error"]["code"] == "INVALID_ARGS"
        assert bad.content[0].text == 'Error: invalid arguments: "a" must be an integer'


async def test_pydantic_ai_mcp_toolset_over_http_with_the_token(runtime: Path) -> None:
    from pydantic_ai.exceptions import ModelRetry
    from pydantic_ai.mcp import MCPToolset

    with http_server(runtime) as server:
        toolset = MCPToolset(
            server.url,
            headers={"Authorization": f"Bearer {server.token()}"},
            init_timeout=60,
        )
        async with toolset:
            names = [t.name for t in await toolset.list_tools()]
            assert names == ["add", "delete_file", "where", "shout"]
            assert await toolset.direct_call_tool("add", {"a": 2, "b": 3}) == "5"
            # pydantic-ai hands a refused call back to its model to retry,
            # with the server's text.
            with pytest.raises(ModelRetry, match='"a" must be an integer'):
                await toolset.direct_call_tool("add", {"a": "x", "b": 1})
            raw = await toolset.client.call_tool_mcp("add", {"b": 1})
            assert raw.is_error
            assert raw.meta["dsh_nb/error"]["code"] == "INVALID_ARGS"
        # Without the token the server answers 401 (the SDK client under
        # FastMCP reports it as an error response; the status is checked at
        # the HTTP level in test_mcp_standalone).
        unauthorised = MCPToolset(server.url, init_timeout=30)
        with pytest.raises(Exception, match="error response"):
            async with unauthorised:
                pass
