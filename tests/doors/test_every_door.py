"""One hostile step through every door: each must hand over the same answers.

The same three calls (a tool that raises with a lone surrogate in its
message, an ``ask`` whose approval times out, a call whose post-execute
listener adds ``additionalContext`` with a lone surrogate) go through
``Chat`` on both providers' official SDKs, ``dispatch`` in both message
formats, and an MCP client of the official SDK. What each model or client
receives is read back off the wire and compared.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dsh_nb.models.chat import Chat
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn
from dsh_nb.tools import (
    Accept,
    ApprovalService,
    Ask,
    ToolRegistry,
    define_tool,
)

LONE = "\ud800"
CALLS = (
    ("boom", {"x": "a"}),
    ("careful", {"x": "b"}),
    ("ctx", {"x": "c"}),
)


def fill(registry: ToolRegistry) -> list[Any]:
    """The three tools, their listeners and an approval that times out;
    returns what removes them again."""
    undo: list[Any] = []

    def boom(args: Any) -> str:
        raise RuntimeError(f"bad {LONE} thing")

    for name, body in (
        ("boom", boom),
        ("careful", lambda a: "ran"),
        ("ctx", lambda a: "42"),
    ):
        undo.append(
            registry.register(
                define_tool(
                    name=name,
                    description=f"The {name} tool.",
                    parameters={"x": {"type": "string", "required": True}},
                    execute=body,
                )
            )
        )
    undo.append(
        registry.on_pre_execute(
            lambda ex, next_: Ask("sure?") if ex.name == "careful" else next_()
        )
    )
    undo.append(
        registry.on_post_execute(
            lambda ex, result, next_: (
                Accept(additional_context=f"note {LONE} here")
                if ex.name == "ctx"
                else next_()
            )
        )
    )
    if registry.approval is None:
        registry.approval = ApprovalService()

    async def times_out(request: Any, next_: Any) -> str:
        await asyncio.sleep(0.01)
        return "cancelled"  # what an approval timeout settles as

    undo.append(registry.approval.on_request(times_out, prepend=True))
    return undo


def script() -> list[Turn]:
    return [
        Turn(
            tool_calls=tuple(
                ToolCallSpec(name=n, arguments=json.dumps(a), call_id=f"id_{n}")
                for n, a in CALLS
            )
        ),
        Turn(text="done"),
    ]


def received_openai(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What an OpenAI-format model reads back: per call, then the context."""
    out: dict[str, Any] = {"context": []}
    for m in messages:
        if m["role"] == "tool":
            out[m["tool_call_id"].removeprefix("id_")] = m["content"]
        elif m["role"] == "user" and out.keys() - {"context"}:
            out["context"].append(m["content"])
    return out


def received_anthropic(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"context": []}
    for b in blocks:
        if b["type"] == "tool_result":
            out[b["tool_use_id"].removeprefix("id_")] = b["content"]
        elif b["type"] == "text":
            out["context"].append(b["text"])
    return out


async def through_chat(provider: str) -> dict[str, Any]:
    import anthropic
    import openai

    registry = ToolRegistry()
    fill(registry)
    with ReplayServer(script()) as server:
        if provider == "openai":
            client: Any = openai.AsyncOpenAI(
                base_url=server.openai_url, api_key=server.token, max_retries=0
            )
        else:
            client = anthropic.AsyncAnthropic(
                base_url=server.url, api_key=server.token, max_retries=0
            )
        chat = Chat("m", client=client, provider=provider, registry=registry)
        reply = await chat.send("go")
        await client.close()
    # The cancelled approval stops the loop: the next request would carry
    # the conversation as it stands, so read it as JSON.
    assert reply.stop == "stopped"
    sent = json.loads(json.dumps(chat.messages))
    if provider == "openai":
        return received_openai(sent)
    return received_anthropic(sent[-1]["content"])


async def through_dispatch(fmt: str) -> dict[str, Any]:
    from dsh_nb.notebook import extension

    state = extension.current_state()
    undo = fill(state.registry)
    try:
        return await _dispatch(extension, fmt)
    finally:
        for dispose in undo:
            dispose()


async def _dispatch(extension: Any, fmt: str) -> dict[str, Any]:
    if fmt == "openai":
        message: dict[str, Any] = {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": f"id_{n}",
                    "type": "function",
                    "function": {"name": n, "arguments": json.dumps(a)},
                }
                for n, a in CALLS
            ],
        }
        answers = await extension.dispatch(message)
        return received_openai(json.loads(json.dumps(answers)))
    blocks = [
        {"type": "tool_use", "id": f"id_{n}", "name": n, "input": a} for n, a in CALLS
    ]
    answers = await extension.dispatch({"role": "assistant", "content": blocks})
    return received_anthropic(json.loads(json.dumps(answers)))


async def through_mcp() -> dict[str, Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    from dsh_nb.mcp.server import serve_mcp

    registry = ToolRegistry()
    fill(registry)
    server = serve_mcp(registry=registry)
    await server.started()
    out: dict[str, Any] = {"context": []}
    try:
        headers = {"Authorization": f"Bearer {server.token}"}
        http = httpx2.AsyncClient(headers=headers, timeout=30)
        async with Client(streamable_http_client(server.url, http_client=http)) as c:
            for name, args in CALLS:
                result = await c.call_tool(name, args)
                texts = [getattr(b, "text", "") for b in result.content]
                # Each MCP call is its own step: its context follows its result.
                out[name] = texts[0]
                out["context"].extend(texts[1:])
    finally:
        await server.stop()
    return out


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    return {
        "boom": "Error: bad [U+D800] thing",
        "careful": None,  # the denial text: whatever it is, it is the same
        "ctx": "42",
        "context": ["note [U+D800] here"],
    }


async def test_every_door_hands_over_the_same_answers(expected: dict[str, Any]) -> None:
    seen = {
        "chat/openai": await through_chat("openai"),
        "chat/anthropic": await through_chat("anthropic"),
        "dispatch/openai": await through_dispatch("openai"),
        "dispatch/anthropic": await through_dispatch("anthropic"),
        "mcp": await through_mcp(),
    }
    first = seen["chat/openai"]
    assert first["boom"] == expected["boom"]
    assert first["ctx"] == expected["ctx"]
    assert first["context"] == expected["context"]
    assert "approval" in first["careful"] and "cancelled" in first["careful"]
    for door, got in seen.items():
        assert got == first, door
