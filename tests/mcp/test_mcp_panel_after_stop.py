"""The serving cell's panel after ``server.stop()`` names who it served.

A real in-process server and the official SDK client: while the client is
connected the header lists it; once the server stopped (its sessions gone)
the header says which clients it served, not "clients: none yet".
"""

from __future__ import annotations

import re

from dsh_nb.mcp.server import serve_mcp
from dsh_nb.notebook.mcppanel import McpPanel
from dsh_nb.tools import ToolRegistry, tool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_the_panel_after_stop_names_the_clients_it_served() -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    registry = ToolRegistry()
    registry.register(tool(add))
    server = serve_mcp(registry=registry)
    await server.started()
    panel = McpPanel(shown=False)
    panel.show(server)
    assert "clients: none yet" in panel.header()["text/plain"]
    headers = {"Authorization": f"Bearer {server.token}"}
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    try:
        async with Client(streamable_http_client(server.url, http_client=http)) as c:
            await c.call_tool("add", {"a": 1, "b": 2})
            live = panel.header()["text/plain"]
    finally:
        await server.stop()
    match = re.search(r"clients: (.+) · calls", live)
    assert match and match.group(1) != "none yet", live
    panel.set_state("stopped")
    after = panel.header()["text/plain"]
    assert after.startswith("MCP server stopped")
    assert f"clients served: {match.group(1)} · calls" in after
    assert "none yet" not in after
