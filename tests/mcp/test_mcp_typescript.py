"""dsh_nb's MCP both ways against the TypeScript SDK's published programs.

Every other MCP test speaks to the Python SDK; these speak to a second
implementation of the protocol. The MCP Inspector's CLI connects the way a
desktop client does, with the settings ``client_config()`` prints (the stdio
bridge; no token in them), and the reference "everything" server sends each
kind of content a tool result can hold into ``connect_mcp``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mcpkit import add_tool, children
from nodepeers import inspector, installed

from dsh_nb.mcp.client import connect_mcp
from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import ToolExecutionInput, ToolRegistry, define_tool

# Each test serves or connects MCP servers with a runtime folder of its own.
pytestmark = pytest.mark.usefixtures("runtime_env")


@pytest.fixture
async def served():
    registry = ToolRegistry()
    registry.register(add_tool())
    server = serve_mcp(registry=registry, name="k-ts")
    await server.started()
    try:
        yield registry, server
    finally:
        await server.stop()


def _json(stdout: str) -> dict:
    # The CLI prints the method's JSON result, sometimes after a banner line.
    return json.loads(stdout[stdout.index("{") :])


async def test_the_inspector_lists_and_calls_with_the_pasted_settings(
    served, tmp_path: Path
) -> None:
    _, server = served
    settings = server.client_config()
    assert server.token not in json.dumps(settings)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(settings["claude_code"]))
    via_config = ("--config", str(config), "--server", "dsh_nb")

    listed = await inspector(*via_config, "--method", "tools/list")
    assert listed.code == 0, listed.stderr
    tools = _json(listed.stdout)["tools"]
    assert [(t["name"], t["inputSchema"]["required"]) for t in tools] == [
        ("add", ["a", "b"])
    ]

    called = await inspector(
        *via_config,
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=2",
        "b=5",
    )
    assert called.code == 0, called.stderr
    result = _json(called.stdout)
    assert (result["content"], result["isError"]) == (
        [{"type": "text", "text": "7"}],
        False,
    )

    # Arguments the schema refuses: an isError result with the stable code.
    bad = await inspector(
        *via_config, "--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=x"
    )
    assert bad.code == 0, bad.stderr
    refused = _json(bad.stdout)
    assert refused["isError"] is True
    assert refused["_meta"]["dsh_nb/error"]["code"] == "INVALID_ARGS"
    assert '"a" must be a number' in refused["content"][0]["text"]

    # The kernel sees the Inspector itself (its clientInfo), not the bridge,
    # so a policy can tell one desktop client from another.
    assert {agent.name for agent in server.agents} == {"inspector-cli"}


async def test_the_inspector_command_line_from_client_config(served) -> None:
    registry, server = served
    registry.register(
        define_tool(
            name="shout",
            description="Upper-case a word.",
            parameters={"word": {"type": "string", "required": True}},
            execute=lambda args: args["word"].upper(),
        )
    )
    argv = server.client_config()["inspector"]
    # ["npx", "@modelcontextprotocol/inspector", <the bridge command>...]:
    # the pinned Inspector stands in for npx's download.
    assert argv[:2] == ["npx", "@modelcontextprotocol/inspector"]
    done = await inspector(
        *argv[2:],
        "--method",
        "tools/call",
        "--tool-name",
        "shout",
        "--tool-arg",
        "word=quiet",
    )
    assert done.code == 0, done.stderr
    assert _json(done.stdout)["content"] == [{"type": "text", "text": "QUIET"}]


async def test_the_inspector_without_the_token_gets_401(served) -> None:
    _, server = served
    done = await inspector(server.url, "--transport", "http", "--method", "tools/list")
    assert done.code != 0
    assert re.search(r"401|bearer token is required", done.stdout + done.stderr)


async def test_every_content_kind_of_the_everything_server_reaches_the_result() -> None:
    server = installed() / "mcp-server-everything"
    registry = ToolRegistry()
    before = children()
    conn = await connect_mcp("ev", command=[str(server), "stdio"], registry=registry)

    async def run(name: str, **args):
        return await registry.execute(
            ToolExecutionInput(call_id=name, name=f"ev_{name}", arguments=args)
        )

    try:
        assert {"ev_echo", "ev_get-tiny-image", "ev_get-resource-links"} <= set(
            conn.tools
        )
        echo = await run("echo", message="<b>hi</b>")
        assert (echo.text, echo.is_error) == ("Echo: <b>hi</b>", False)

        image = await run("get-tiny-image")
        kinds = [block["type"] for block in image.content]
        assert kinds.count("image") == 1 and "text" in kinds
        picture = next(b for b in image.content if b["type"] == "image")
        assert picture["mimeType"] == "image/png"
        assert picture["data"].startswith("iVBORw0KGgo")  # PNG, base64

        links = await run("get-resource-links", count=2)
        linked = [b for b in links.content if b["type"] == "resource_link"]
        assert [b["uri"] for b in linked] == [
            "demo://resource/dynamic/blob/1",
            "demo://resource/dynamic/text/2",
        ]

        embedded = await run(
            "get-resource-reference", resourceType="Text", resourceId=1
        )
        (resource,) = [b for b in embedded.content if b["type"] == "resource"]
        assert resource["resource"]["uri"] == "demo://resource/dynamic/text/1"
        assert resource["resource"]["text"].startswith("Resource 1:")

        weather = await run("get-structured-content", location="New York")
        structured = weather.meta["structuredContent"]
        assert set(structured) == {"temperature", "conditions", "humidity"}

        annotated = await run(
            "get-annotated-message", messageType="error", includeImage=False
        )
        assert annotated.content[0]["annotations"]["priority"] == 1.0

        # Our own validation runs before the server sees a bad call.
        bad = await run("get-sum", a="one", b=2)
        assert bad.is_error and bad.error.code == "INVALID_ARGS"
        total = await run("get-sum", a=1, b=2)
        assert "3" in total.text
        spawned = children() - before
        assert spawned
    finally:
        await conn.close()
    assert not (children() & spawned), "the server process outlived close()"
