"""The demo's last act: a model drives a turn, through the replay server.

The "model" is the bundled loopback :class:`ReplayServer` answering the
official openai SDK client, so the turn needs no network and no key, yet
every byte goes over a real socket in the Chat Completions wire format:
the streamed text, two tool calls in one step (run concurrently through
the same registry, policies and guard as the calls above), and usage.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from dsh_nb.cards.callcard import CardView
from dsh_nb.models.view import ChatReply, ChatView

if TYPE_CHECKING:
    from dsh_nb.cards import ToolCard
    from dsh_nb.models.wire import ParsedCall
    from dsh_nb.tools import Agent, ToolPresenter, ToolRegistry

__all__ = ["printed_call", "run_model_turn"]

QUESTION = "What is 20 + 22, and what is in notes.txt?"


def printed_call(
    presenter: ToolPresenter,
    out: Callable[[str], None],
    cwd: str | None,
    *header: str,
) -> CardView:
    """The demo's view of one call: ``header``, then its text card, printed
    once the call ends (calls in one step end in any order)."""

    def show(card: ToolCard) -> None:
        for line in header:
            out(line)
        out(repr(card))

    return CardView(presenter, show, cwd=cwd)


class _PrintView(ChatView):
    """Print streamed text per step and each call as its text card."""

    def __init__(
        self, out: Callable[[str], None], presenter: ToolPresenter, cwd: str
    ) -> None:
        self.out = out
        self.presenter = presenter
        self.cwd = cwd
        self._text: list[str] = []

    def _flush(self) -> None:
        if self._text:
            self.out(f"assistant: {''.join(self._text)}")
            self._text.clear()

    def text(self, delta: str) -> None:
        self._text.append(delta)

    def call_view(self, call: ParsedCall) -> CardView:
        self._flush()
        header = f"--- model called {call.name}({json.dumps(call.arguments)})"
        return printed_call(self.presenter, self.out, self.cwd, header)

    def notice(self, text: str, *, kind: str) -> None:
        self._flush()
        self.out(text)

    def end(self, reply: ChatReply) -> None:
        self._flush()
        self.out(reply.usage.footer(reply.steps))


async def run_model_turn(
    registry: ToolRegistry,
    agent: Agent,
    presenter: ToolPresenter,
    out: Callable[[str], None],
) -> ChatReply | None:
    """Run one scripted model turn with ``registry``'s tools; print it."""
    try:
        import openai
    except ImportError:
        out("(skipped the model turn: pip install 'dsh_nb[models]')")
        return None
    from dsh_nb.models.chat import Chat
    from dsh_nb.models.replay_server import ReplayServer
    from dsh_nb.models.scripted import ToolCallSpec, Turn

    script = [
        Turn(
            text="Let me work that out.",
            tool_calls=(
                ToolCallSpec(name="add", arguments='{"a": 20, "b": 22}'),
                ToolCallSpec(name="run", arguments='{"command": "cat notes.txt"}'),
            ),
            input_tokens=180,
            output_tokens=41,
        ),
        Turn(
            text="20 + 22 = 42, and notes.txt holds alpha, BETA and gamma.",
            input_tokens=262,
            output_tokens=17,
        ),
    ]
    out("")
    out(f"A model in the loop (the bundled replay server): user: {QUESTION}")
    with ReplayServer(script) as server:
        client = openai.AsyncOpenAI(
            base_url=server.openai_url, api_key=server.token, max_retries=0
        )
        chat = Chat(
            "replay-model",
            client=client,
            registry=registry,
            agent=agent,
            view=_PrintView(out, presenter, agent.cwd or ""),
        )
        try:
            return await chat.send(QUESTION)
        finally:
            await client.close()
