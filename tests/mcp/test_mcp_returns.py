"""Plain classes' methods served over MCP: the official client gets their JSON.

``serve_mcp`` on loopback, the MCP SDK's own client in both protocol eras.
A method with a JSON-able return annotation is listed with that schema as
``outputSchema`` and answers with ``structuredContent`` (which the SDK
client itself validates against it), a setter answers with no content and
no error, and ``int | None`` reaches the client as a type array, so a form
that converts input by the top-level ``type`` sends a number.
"""

from __future__ import annotations

import json

import pytest
from mcpkit import ERAS, client
from plainapi import CALLS, build

from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import ToolRegistry

# Each test serves or connects MCP servers with a runtime folder of its own.
pytestmark = pytest.mark.usefixtures("runtime_env")


@pytest.mark.parametrize("mode", ERAS)
async def test_the_client_gets_each_methods_json(mode):
    registry = ToolRegistry()
    for definition in build():
        registry.register(definition)
    server = serve_mcp(registry=registry)
    await server.started()
    try:
        async with client(server.url, server.token, mode=mode) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert listed["history"].output_schema == {
                "type": "object",
                "properties": {
                    "result": {"type": "array", "items": {"type": "number"}}
                },
                "required": ["result"],
            }
            assert listed["post"].output_schema == {"type": "object"}
            for bare in ("set_target", "get_state", "latest"):
                assert listed[bare].output_schema is None, bare
            last = listed["history"].input_schema["properties"]["last"]
            assert last["type"] == ["integer", "null"]
            for name, args, text, structured in CALLS:
                result = await c.call_tool(name, args)
                assert result.is_error is False, (name, result.content)
                texts = [block.text for block in result.content]
                assert texts == ([text] if text else []), name
                assert result.structured_content == structured, name
                if structured is not None and "result" not in structured:
                    assert json.loads(text) == structured
    finally:
        await server.stop()
