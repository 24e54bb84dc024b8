"""Plain classes' methods as tools in a Chat: the model reads their JSON.

The official openai and anthropic SDK clients talk to the loopback replay
server; the scripted model calls a setter (returns ``None``), getters (a
dict, a list, an untyped one) and a method returning a dict with a
``content`` key, and the next request must carry each answer as the text
issue 22 promises, with no error flag. The tool schemas the model was sent
carry the docstring's descriptions and ``int | None`` as a type array.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from plainapi import CALLS, build

from dsh_nb.models import Chat
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn
from dsh_nb.tools import ToolRegistry


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_the_model_reads_each_methods_json(
    provider: str, request: Any, server: ReplayServer
) -> None:
    registry = ToolRegistry()
    for definition in build():
        registry.register(definition)
    server.add(
        Turn(
            text="Working.",
            tool_calls=tuple(
                ToolCallSpec(name=name, arguments=json.dumps(args), call_id=f"k{i}")
                for i, (name, args, _, _) in enumerate(CALLS)
            ),
        ),
        Turn(text="Done."),
    )
    client = request.getfixturevalue(f"{provider}_client")
    chat = Chat("replay-model", client=client, provider=provider, registry=registry)
    reply = await chat.send("set it to 22.5, then tell me everything")
    assert (reply.stop, reply.text) == ("end", "Done.")

    second = server.requests[1].body
    if provider == "openai":
        answers = [
            (m["content"], False) for m in second["messages"] if m["role"] == "tool"
        ]
        tools = {t["function"]["name"]: t["function"] for t in second["tools"]}
        params = {n: t["parameters"] for n, t in tools.items()}
    else:
        answers = [
            (b["content"], bool(b.get("is_error")))
            for m in second["messages"]
            if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        ]
        params = {t["name"]: t["input_schema"] for t in second["tools"]}
    assert answers == [(text, False) for _, _, text, _ in CALLS]
    # what the model was shown about the arguments
    celsius = params["set_target"]["properties"]["celsius"]
    assert celsius == {
        "type": "number",
        "description": "the new target, in degrees Celsius",
    }
    assert params["history"]["properties"]["last"]["type"] == ["integer", "null"]
    assert params["post"]["properties"]["text"]["description"] == "what to say"
