"""What a chat offers is what it allows; every call has its own id."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh_nb.models import Chat
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import Raw, ToolCallSpec, Turn
from dsh_nb.tools import ToolRegistry, define_tool

PROVIDERS = ["openai", "anthropic"]


def recording(name: str, ran: list[str]) -> Any:
    def body(args: Any) -> str:
        ran.append(name)
        return f"{name} ran"

    return body


def counting_registry(ran: list[str]) -> ToolRegistry:
    reg = ToolRegistry()
    for name in ("add", "wipe"):
        reg.register(
            define_tool(
                name=name,
                description=name,
                parameters={"a": {"type": "number"}},
                execute=recording(name, ran),
            )
        )
    return reg


def make_chat(
    provider: str, server: ReplayServer, reg: ToolRegistry, **kw: Any
) -> Chat:
    import anthropic
    import openai

    client: Any
    if provider == "openai":
        client = openai.AsyncOpenAI(
            base_url=server.openai_url, api_key=server.token, max_retries=0
        )
    else:
        client = anthropic.AsyncAnthropic(
            base_url=server.url, api_key=server.token, max_retries=0
        )
    return Chat("m", client=client, provider=provider, registry=reg, **kw)


def answers(chat: Chat) -> list[tuple[str, str]]:
    """(id answered, text) for every tool answer in the conversation."""
    out = []
    for m in chat.messages:
        if m["role"] == "tool":
            out.append((m["tool_call_id"], m["content"]))
        elif m["role"] == "user" and isinstance(m["content"], list):
            out += [
                (b["tool_use_id"], b["content"])
                for b in m["content"]
                if b["type"] == "tool_result"
            ]
    return out


def asked_ids(chat: Chat) -> list[str]:
    """The ids of every call in the assistant messages."""
    out = []
    for m in chat.messages:
        if m["role"] != "assistant":
            continue
        out += [c["id"] for c in m.get("tool_calls") or ()]
        if isinstance(m.get("content"), list):
            out += [b["id"] for b in m["content"] if b["type"] == "tool_use"]
    return out


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_tool_not_offered_is_unknown_and_never_runs(provider: str) -> None:
    ran: list[str] = []
    with ReplayServer(
        [
            Turn(tool_calls=(ToolCallSpec(name="wipe", arguments='{"a": 1}'),)),
            Turn(text="ok"),
        ]
    ) as server:
        chat = make_chat(provider, server, counting_registry(ran), tools=["add"])
        await chat.send("x")
        offered = server.requests[0].body["tools"]
    names = [t.get("name") or t["function"]["name"] for t in offered]
    assert names == ["add"]
    assert ran == []
    assert answers(chat)[0][1] == 'Error: unknown tool "wipe"'


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_two_calls_with_one_id_run_twice_and_get_two_answers(
    provider: str, stream: bool
) -> None:
    ran: list[str] = []
    same = "call_1" if provider == "openai" else "toolu_1"
    with ReplayServer(
        [
            Turn(
                tool_calls=(
                    ToolCallSpec(name="add", arguments='{"a": 1}', call_id=same),
                    ToolCallSpec(name="wipe", arguments='{"a": 2}', call_id=same),
                )
            ),
            Turn(text="ok"),
        ]
    ) as server:
        chat = make_chat(provider, server, counting_registry(ran), stream=stream)
        await chat.send("x")
        second = server.requests[1].body["messages"]
    assert sorted(ran) == ["add", "wipe"]
    ids = asked_ids(chat)
    assert len(set(ids)) == 2 and ids[0] == same
    assert answers(chat) == [(ids[0], "add ran"), (ids[1], "wipe ran")]
    assert json.dumps(second).count(ids[1]) == 2  # asked once, answered once


OPENAI_NO_IDS = json.dumps(
    {
        "id": "r1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "",
                            "type": "function",
                            "function": {"name": "add", "arguments": '{"a": 1}'},
                        },
                        {
                            "id": "",
                            "type": "function",
                            "function": {"name": "add", "arguments": '{"a": 2}'},
                        },
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
)


async def test_calls_without_ids_get_ids_the_conversation_keeps() -> None:
    ran: list[str] = []
    with ReplayServer([Raw(body=OPENAI_NO_IDS), Turn(text="ok")]) as server:
        chat = make_chat("openai", server, counting_registry(ran), stream=False)
        reply = await chat.send("x")
        second = server.requests[1].body["messages"]
    assert reply.text == "ok" and ran == ["add", "add"]
    ids = asked_ids(chat)
    assert all(ids) and len(set(ids)) == 2
    assert [a[0] for a in answers(chat)] == ids
    sent_ids = [
        c["id"] for m in second if m["role"] == "assistant" for c in m["tool_calls"]
    ]
    assert sent_ids == ids
