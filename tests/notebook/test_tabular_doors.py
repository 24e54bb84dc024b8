"""A DataFrame tool through every door: each hands the model the same text.

``Chat`` on both providers' official SDKs (against a loopback model
server), an MCP client of the official SDK, and ``%call`` in a real
kernel all run one ``-> pd.DataFrame`` tool whose frame has nulls,
datetimes, a categorical, an integer past 2^53 and more rows than
``max_result_rows``; what each model or client receives is read back off
the wire and compared, to each other and to the documented form.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kernel_harness import KernelHarness

from dsh_nb.cards import CARD_MIME
from dsh_nb.models.chat import Chat
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn
from dsh_nb.tools import ToolRegistry, tool

pd = pytest.importorskip("pandas")

SOURCE = '''
import pandas as pd

def sales(n: int) -> pd.DataFrame:
    """The first n days of sales."""
    frame = pd.DataFrame({
        "day": pd.date_range("2026-03-01", periods=n, freq="D"),
        "units": pd.array([None if i % 7 == 3 else i for i in range(n)], dtype="Int64"),
        "price": [float("nan") if i % 5 == 1 else i / 4 for i in range(n)],
        "store": pd.Categorical(["north", "south", None][i % 3] for i in range(n)),
        "ref": [2**60 + i for i in range(n)],
    })
    return frame
'''
ROWS = 3
ARGS = {"n": 12}


def make_registry() -> ToolRegistry:
    namespace: dict[str, Any] = {}
    exec(SOURCE, namespace)  # the same source the kernel runs
    registry = ToolRegistry(sync_tools="thread")
    registry.max_result_rows = ROWS
    registry.register(tool(namespace["sales"]))
    return registry


def expected() -> dict[str, Any]:
    return {
        "columns": ["day", "units", "price", "store", "ref"],
        "data": [
            ["2026-03-01T00:00:00", 0, 0.0, "north", 2**60],
            ["2026-03-02T00:00:00", 1, None, "south", 2**60 + 1],
            ["2026-03-03T00:00:00", 2, 0.5, None, 2**60 + 2],
        ],
        "rows": 12,
        "shown_rows": 3,
    }


async def through_chat(provider: str) -> str:
    import anthropic
    import openai

    script = [
        Turn(
            tool_calls=(
                ToolCallSpec(name="sales", arguments=json.dumps(ARGS), call_id="c1"),
            )
        ),
        Turn(text="done"),
    ]
    with ReplayServer(script) as server:
        if provider == "openai":
            client: Any = openai.AsyncOpenAI(
                base_url=server.openai_url, api_key=server.token, max_retries=0
            )
        else:
            client = anthropic.AsyncAnthropic(
                base_url=server.url, api_key=server.token, max_retries=0
            )
        chat = Chat("m", client=client, provider=provider, registry=make_registry())
        await chat.send("go")
        await client.close()
        # what the model server was sent in its second request, off the wire
        sent = server.requests[-1].body
    if provider == "openai":
        [text] = [m["content"] for m in sent["messages"] if m["role"] == "tool"]
    else:
        [text] = [
            b["content"]
            for m in sent["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        ]
    return text if isinstance(text, str) else text[0]["text"]


async def through_mcp() -> tuple[str, Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from dsh_nb.mcp.server import serve_mcp

    server = serve_mcp(registry=make_registry())
    await server.started()
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        http = httpx2.AsyncClient(headers=headers, timeout=30)
        async with Client(streamable_http_client(server.url, http_client=http)) as c:
            result = await c.call_tool("sales", ARGS)
    finally:
        await server.stop()
    [block] = result.content
    return block.text, result.structured_content


def through_kernel() -> str:
    with KernelHarness() as kernel:
        kernel.run("%load_ext dsh_nb")
        kernel.run(f"%config DshConfig.max_result_rows = {ROWS}")
        kernel.run("%%tool\n" + SOURCE.strip() + "\n")
        reply = kernel.run(f"%call sales {json.dumps(ARGS)}")
    cards = [
        m["content"]["data"][CARD_MIME]
        for m in reply.of_type("display_data", "update_display_data")
        if CARD_MIME in m["content"]["data"]
    ]
    assert cards, reply.stdout + reply.stderr
    [block] = cards[-1]["result"]["content"]
    return str(block["text"])


async def test_every_door_hands_the_model_the_same_table() -> None:
    mcp_text, structured = await through_mcp()
    seen = {
        "chat/openai": await through_chat("openai"),
        "chat/anthropic": await through_chat("anthropic"),
        "mcp": mcp_text,
        "cell": through_kernel(),
    }
    assert json.loads(seen["mcp"]) == expected()
    assert structured == expected()
    for door, text in seen.items():
        assert text == seen["mcp"], door
