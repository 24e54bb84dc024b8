"""The demo's last act: a model drives a turn, through the replay server.

The "model" is the bundled loopback :class:`ReplayServer` answering the
official openai SDK client, so the turn needs no network and no key, yet
every byte goes over a real socket in the Chat Completions wire format:
the streamed text, two tool calls in one step (run concurrently through
the same registry, policies and guard as the calls above), and usage.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from dsh_nb.cards import CardModel, render_card
from dsh_nb.models.view import CallAnswer, ChatReply, ChatView

if TYPE_CHECKING:
    from dsh_nb.models.wire import ParsedCall
    from dsh_nb.tools import Agent, ToolPresenter, ToolRegistry

__all__ = ["run_model_turn"]

QUESTION = "What is 20 + 22, and what is in notes.txt?"


def _card_status(status: str) -> str:
    # The card vocabulary says "timed-out" where the core says "timeout".
    return "timed-out" if status == "timeout" else status


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

    async def run_call(
        self,
        call: ParsedCall,
        execute: Callable[[], Awaitable[CallAnswer]],
    ) -> CallAnswer:
        self._flush()
        call_view = self.presenter.present_call(call.call_id, call.name, call.arguments)
        answer = await execute()
        result = answer.result
        card = render_card(
            CardModel(
                tool=call.name,
                call_id=call.call_id,
                status=_card_status(answer.outcome.status),
                call=call_view,
                result=self.presenter.present_result(call.call_id, result),
                is_error=result.is_error,
                cwd=self.cwd,
            )
        )
        self.out(f"--- model called {call.name}({json.dumps(call.arguments)})")
        self.out(repr(card))
        return answer

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
