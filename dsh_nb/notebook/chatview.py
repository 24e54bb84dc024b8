"""``CellChatView``: a chat shown in the cell that sent it, as it happens.

Assistant text streams into the cell as Markdown rendered to sanitised
HTML (:mod:`dsh_nb.cards.modeltext`), reasoning into folded ``<details>``
blocks; only a part's unfinished tail is updated in place, at most every
50 ms (:mod:`dsh_nb.notebook.streamed`). Each tool call gets its live
card as soon as its arguments are complete, and the card's approval
prompt and statuses come from the ordinary live-card machinery. Notices
and the usage footer are one plain line each. Every display goes through
a display handle made while the cell runs, so updates land in that cell
in JupyterLab and in headless runners alike.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.cards.modeltext import model_text_html, split_point
from dsh_nb.models.view import ChatReply, ChatView
from dsh_nb.models.wire import ParsedCall
from dsh_nb.notebook.streamed import StreamedPart

if TYPE_CHECKING:
    from dsh_nb.notebook.live import LiveCall
    from dsh_nb.notebook.state import KernelState
    from dsh_nb.tools.audit.session import Agent

__all__ = ["CellChatView"]


def _text_bundle(markup: str, raw: str, index: int) -> dict[str, Any]:
    return {"text/html": model_text_html(markup), "text/plain": raw}


def _reasoning_bundle(markup: str, text: str, index: int) -> dict[str, Any]:
    body = html.escape(text)
    title = "reasoning" if index == 0 else "reasoning, continued"
    return {
        "text/html": (
            f'<details class="dsh-Reasoning"><summary>{title}</summary>'
            f'<pre style="white-space: pre-wrap">{body}</pre></details>'
        ),
        "text/plain": f"[{title}] {text}",
    }


def _line_split(text: str) -> tuple[int, str, str]:
    """Reasoning is plain text: cut after its last whole line."""
    return (text.rfind("\n") + 1 or len(text)), "", ""


def _line(text: str) -> None:
    from IPython.display import display

    show: Callable[..., Any] = display
    show({"text/plain": text}, raw=True)


class CellChatView(ChatView):
    """Stream a chat into the current cell; run calls as live cards."""

    def __init__(self, state: KernelState, agent: Agent) -> None:
        self.state = state
        self.agent = agent
        self._text: StreamedPart | None = None
        self._reasoning: StreamedPart | None = None
        self._cards: dict[str, LiveCall] = {}

    @property
    def shown(self) -> bool:
        """Whether there is a cell to show things in."""
        from dsh_nb.notebook.live import _shell_running

        return self.state.shell is not None and _shell_running()

    def _close_parts(self) -> None:
        for part in (self._reasoning, self._text):
            if part is not None:
                part.flush()
        self._text = self._reasoning = None

    # --- ChatView -------------------------------------------------------------

    def begin_step(self, step: int) -> None:
        self._close_parts()
        self._cards.clear()

    def text(self, delta: str) -> None:
        if not self.shown:
            return
        if self._reasoning is not None:
            self._reasoning.flush()
        if self._text is None:
            self._text = StreamedPart(_text_bundle, split_point)
        self._text.add(delta)

    def reasoning(self, delta: str) -> None:
        if not self.shown:
            return
        if self._reasoning is None:
            self._reasoning = StreamedPart(_reasoning_bundle, _line_split)
        self._reasoning.add(delta)

    def _card(self, call: ParsedCall) -> LiveCall:
        live = self._cards.get(call.call_id)
        if live is None:
            arguments = call.arguments
            live = self.state.new_call(
                call.name,
                arguments,
                call_id=call.call_id,
                agent=self.agent,
                door="chat",
            ).show()
            self._cards[call.call_id] = live
        return live

    def call_ready(self, call: ParsedCall) -> None:
        self._close_parts()
        self._card(call)

    def abandon_calls(self, reason: str) -> None:
        self._close_parts()
        for live in self._cards.values():
            if not live.done and live.result is None:
                live.fail_before_pipeline(f"Error: not run: {reason}")
        self._cards.clear()

    def call_view(self, call: ParsedCall) -> LiveCall:
        # The card announced when the call's arguments were complete; the
        # runner runs the call through the chat's registry and updates it.
        self._close_parts()
        return self._card(call)

    def notice(self, text: str, *, kind: str) -> None:
        self._close_parts()
        if self.shown:
            _line(text)

    def end_step(self, step: int, usage: Any) -> None:
        self._close_parts()

    def end(self, reply: ChatReply) -> None:
        self._close_parts()
        if self.shown and reply.steps:
            _line(reply.usage.footer(reply.steps))
