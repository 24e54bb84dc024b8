"""Raw 2026-07-28 requests over httpx: one POST each, no SDK client.

What a hostile token holder sends: any ``clientInfo`` it likes, one request
at a time, no session. The answer is read whether it comes as JSON or as
one SSE event.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2

VERSION = "2026-07-28"


def body(
    method: str,
    params: dict[str, Any],
    name: str,
    *,
    capabilities: dict[str, Any] | None = None,
    id_: int = 1,
) -> dict[str, Any]:
    """A JSON-RPC request with the 2026-07-28 envelope in ``_meta``."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": method,
        "params": {**params, "_meta": meta},
    }


def headers(token: str, method: str, name: str | None = None) -> dict[str, str]:
    out = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if name is not None:
        out["Mcp-Name"] = name
    return out


def answer(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message in a response (plain JSON or the last SSE data)."""
    text = response.text
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        datas = [
            line[5:].strip() for line in text.splitlines() if line.startswith("data:")
        ]
        datas = [d for d in datas if d]
        assert datas, text
        return dict(json.loads(datas[-1]))
    return dict(json.loads(text))


async def list_tools(
    http: httpx2.AsyncClient, url: str, token: str, name: str
) -> dict[str, Any]:
    response = await http.post(
        url, json=body("tools/list", {}, name), headers=headers(token, "tools/list")
    )
    return answer(response)


async def call_tool(
    http: httpx2.AsyncClient,
    url: str,
    token: str,
    client_name: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    capabilities: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments, **(extra or {})}
    response = await http.post(
        url,
        json=body("tools/call", params, client_name, capabilities=capabilities),
        headers=headers(token, "tools/call", tool),
    )
    return answer(response)
