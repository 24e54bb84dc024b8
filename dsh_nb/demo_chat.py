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

from dsh_nb.cards import CardModel, render_card
from dsh_nb.cards.model import card_status
from dsh_nb.models.view import ChatReply, ChatView

if TYPE_CHECKING:
    from dsh_nb.models.wire import ParsedCall
    from dsh_nb.tools import Agent, ToolPresenter, ToolRegistry
    from dsh_nb.tools.runner import CallTicket
    from dsh_nb.tools.values.execution import ToolExecutionResult
    from dsh_nb.tools.values.outcome import ToolOutcome
    from dsh_nb.tools.values.run import ToolRun

__all__ = ["run_model_turn"]

QUESTION = "What is 20 + 22, and what is in notes.txt?"


class _PrintedCall:
    """One call's text card, printed once the runner settles it."""

    def __init__(self, view: _PrintView, call: ParsedCall) -> None:
        self.view, self.call = view, call

    def begin(self, ticket: CallTicket) -> None:
        self.call_id = ticket.call_id
        self.call_view = self.view.presenter.present_call(
            ticket.call_id, ticket.name, ticket.arguments
        )

    def refused(self, result: ToolExecutionResult, outcome: ToolOutcome) -> None:
        self._print(result, outcome)

    def settled(self, run: ToolRun) -> None:
        self._print(run.result, run.outcome)

    def interrupted(self, exc: BaseException) -> None:
        self.view.out(f"--- {self.call.name} was interrupted")

    def _print(self, result: ToolExecutionResult, outcome: ToolOutcome) -> None:
        call, presenter = self.call, self.view.presenter
        card = render_card(
            CardModel(
                tool=call.name,
                call_id=self.call_id,
                status=card_status(outcome.status),
                call=self.call_view,
                result=presenter.present_result(self.call_id, result),
                is_error=result.is_error,
                cwd=self.view.cwd,
            )
        )
        self.view.out(f"--- model called {call.name}({json.dumps(call.arguments)})")
        self.view.out(repr(card))


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

    def call_view(self, call: ParsedCall) -> _PrintedCall:
        self._flush()
        return _PrintedCall(self, call)

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
