"""A step that fails after announcing calls: the chat journals them itself.

The calls a model announced before its reply broke never run. That is a
fact, so ``Chat`` records it through its runner, with no view at all
(a script, an evaluation trial), not only the notebook's chat view.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_nb.models import Chat, ChatView
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn
from dsh_nb.models.wire import ParsedCall
from dsh_nb.tools import ToolRegistry
from dsh_nb.tools.jsonvalue import to_plain

PROVIDERS = ["openai", "anthropic"]


def two_calls_cut_after_the_first() -> Turn:
    # 9 streamed events: the first call is complete (announced), the
    # second is not, and the stream ends without its end.
    return Turn(
        tool_calls=(
            ToolCallSpec(name="add", arguments='{"a": 1, "b": 2}'),
            ToolCallSpec(name="add", arguments='{"a": 3, "b": 4}'),
        ),
        chunk=4,
        cut_after=9,
    )


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_failed_step_journals_the_calls_it_announced(
    provider: str, request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    ran: list[Any] = []
    registry.on_result(lambda execution, result: ran.append(execution.name))
    server.add(two_calls_cut_after_the_first())
    client = request.getfixturevalue(f"{provider}_client")
    chat = Chat("m", client=client, provider=provider, registry=registry)
    reply = await chat.send("add things")
    assert reply.stop == "error" and reply.error

    session = chat.agent.session
    calls = [to_plain(e["data"]) for e in session.of_type("tool/call")]
    results = [to_plain(e["data"]) for e in session.of_type("tool/result")]
    assert len(calls) == 1, calls  # only the announced call, once
    wire_id = calls[0]["callId"]
    assert wire_id.startswith("call_" if provider == "openai" else "toolu_")
    assert calls[0]["name"] == "add"
    assert calls[0]["arguments"] == {"a": 1, "b": 2}
    assert len(results) == 1
    assert results[0]["callId"] == wire_id
    assert (results[0]["status"], results[0]["stage"]) == ("error", "arguments")
    text = results[0]["result"]["content"][0]["text"]
    assert text == f"Error: not run: {reply.error}"
    assert results[0]["result"]["isError"] is True
    assert ran == []  # journaled, never run


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_view_still_draws_and_records_nothing(
    provider: str, request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    seen: list[tuple[str, Any]] = []

    class View(ChatView):
        def call_ready(self, call: ParsedCall) -> None:
            seen.append(("ready", call.call_id))

        def abandon_calls(self, reason: str) -> None:
            seen.append(("abandon", reason))

    server.add(two_calls_cut_after_the_first())
    client = request.getfixturevalue(f"{provider}_client")
    chat = Chat("m", client=client, provider=provider, registry=registry, view=View())
    reply = await chat.send("add things")
    kinds = [kind for kind, _ in seen]
    assert kinds == ["ready", "abandon"]
    assert seen[1] == ("abandon", reply.error)
    # One journal entry per announced call, written by the chat, not the view.
    assert len(chat.agent.session.of_type("tool/call")) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_reply_that_announced_nothing_journals_nothing(
    provider: str, request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    server.add(Turn(text="a long answer that never ends", chunk=2, cut_after=6))
    client = request.getfixturevalue(f"{provider}_client")
    chat = Chat("m", client=client, provider=provider, registry=registry)
    reply = await chat.send("x")
    assert reply.stop == "error"
    assert chat.agent.session.of_type("tool/call") == []
    assert chat.agent.session.of_type("tool/result") == []
