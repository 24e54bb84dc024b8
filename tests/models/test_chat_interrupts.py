"""A tool raising KeyboardInterrupt or GeneratorExit in a Chat.

Issue 34 §2.2: the cell raised them. Each is now the model's error result,
as SystemExit is, and the chat goes on; the official openai client talks to
the loopback replay server.
"""

from __future__ import annotations

from typing import Any

from dsh_nb.models import Chat
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn
from dsh_nb.tools import ToolRegistry, tool


class Unprintable:
    def __str__(self) -> str:
        raise KeyboardInterrupt


@tool
def kbi_sync() -> str:
    """Raise KeyboardInterrupt."""
    raise KeyboardInterrupt


@tool
async def kbi_async() -> str:
    """Raise KeyboardInterrupt on the loop."""
    raise KeyboardInterrupt


@tool
async def gen_exit() -> str:
    """Raise GeneratorExit on the loop."""
    raise GeneratorExit


@tool
def kbi_str() -> object:
    """Return a value whose str() raises KeyboardInterrupt."""
    return Unprintable()


EXPECTED = {
    "kbi_sync": "Error: KeyboardInterrupt",
    "kbi_async": "Error: KeyboardInterrupt",
    "gen_exit": "Error: GeneratorExit",
    "kbi_str": "Error: KeyboardInterrupt",
}


async def test_a_chat_answers_the_model_with_each_error_and_goes_on(
    server: ReplayServer, openai_client: Any
) -> None:
    for sync_tools in ("inline", "thread"):
        registry = ToolRegistry(sync_tools=sync_tools)  # type: ignore[arg-type]
        for definition in (kbi_sync, kbi_async, gen_exit, kbi_str):
            registry.register(definition)
        server.add(
            Turn(
                text="Trying.",
                tool_calls=tuple(
                    ToolCallSpec(name=name, arguments="{}", call_id=f"k{i}")
                    for i, name in enumerate(EXPECTED)
                ),
            ),
            Turn(text="Done."),
        )
        before = len(server.requests)
        chat = Chat("replay-model", client=openai_client, registry=registry)
        reply = await chat.send("try them all")
        assert (reply.stop, reply.text) == ("end", "Done.")
        second = server.requests[before + 1].body
        answers = [m["content"] for m in second["messages"] if m["role"] == "tool"]
        assert answers == list(EXPECTED.values()), sync_tools
