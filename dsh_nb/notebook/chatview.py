"""``CellChatView``: a chat shown in the cell that sent it, as it happens.

Assistant text streams into one display per step (Markdown, updated in
place, at most every 50 ms); reasoning streams into a folded
``<details>`` block; each tool call gets its live card as soon as its
arguments are complete, and the card's approval prompt and statuses come
from the ordinary live-card machinery. Notices and the usage footer are
one plain line each. Every display goes through a display handle made
while the cell runs, so updates land in that cell in JupyterLab and in
headless runners alike.
"""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.models.view import ChatReply, ChatView
from dsh_nb.models.wire import ParsedCall

if TYPE_CHECKING:
    from dsh_nb.notebook.live import LiveCall
    from dsh_nb.notebook.state import KernelState
    from dsh_nb.tools.session import Agent

__all__ = ["CellChatView", "safe_markdown"]

_EVERY = 0.05  # seconds between in-place updates of a streaming part
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_SCRIPT_LINK = re.compile(r"(\]\(\s*<?)\s*(?:javascript|vbscript|data)\s*:", re.I)


def safe_markdown(text: str) -> str:
    """Markdown with raw HTML disarmed: ``<`` becomes ``&lt;`` outside fences.

    A model's text is shown as Markdown, and a frontend renders the HTML
    inside trusted Markdown as it is (an ``<img onerror=...>`` would run).
    Only fenced code blocks, found by CommonMark's own rules, keep ``<``;
    everywhere else (inline code included, where it then reads ``&lt;``)
    it is escaped, so no reading of the text can see a tag. Script links
    lose their scheme and images become links (no request on display).
    """
    text = _SCRIPT_LINK.sub(r"\1#", text).replace("![", "\\![")
    if "<" not in text:
        return text
    out: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        match = _FENCE.match(line.rstrip("\r\n"))
        if fence is not None:
            if match and match[1][0] == fence[0] and len(match[1]) >= len(fence):
                if not match[2].strip():
                    fence = None
            out.append(line)
        elif match and not (match[1][0] == "`" and "`" in match[2]):
            fence = match[1]
            out.append(line)
        else:
            out.append(line.replace("<", "&lt;"))
    return "".join(out)


def _text_bundle(text: str) -> dict[str, Any]:
    return {"text/markdown": safe_markdown(text), "text/plain": text}


def _reasoning_bundle(text: str) -> dict[str, Any]:
    body = html.escape(text)
    return {
        "text/html": (
            '<details class="dsh-Reasoning"><summary>reasoning</summary>'
            f'<pre style="white-space: pre-wrap">{body}</pre></details>'
        ),
        "text/plain": f"[reasoning] {text}",
    }


class _Part:
    """One streaming display: shown on the first delta, then updated."""

    __slots__ = ("_chunks", "_handle", "_pending", "_render")

    def __init__(self, render: Callable[[str], dict[str, Any]]) -> None:
        self._render = render
        self._chunks: list[str] = []
        self._handle: Any = None
        self._pending: asyncio.TimerHandle | None = None

    def add(self, delta: str) -> None:
        from IPython.display import display

        self._chunks.append(delta)
        if self._handle is None:
            show: Callable[..., Any] = display
            self._handle = show(self._bundle(), raw=True, display_id=True)
        elif self._pending is None:
            self._pending = asyncio.get_running_loop().call_later(_EVERY, self.flush)

    def _bundle(self) -> dict[str, Any]:
        return self._render("".join(self._chunks))

    def flush(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        if self._handle is not None:
            update: Callable[..., Any] = self._handle.update
            update(self._bundle(), raw=True)


def _line(text: str) -> None:
    from IPython.display import display

    show: Callable[..., Any] = display
    show({"text/plain": text}, raw=True)


class CellChatView(ChatView):
    """Stream a chat into the current cell; run calls as live cards."""

    def __init__(self, state: KernelState, agent: Agent) -> None:
        self.state = state
        self.agent = agent
        self._text: _Part | None = None
        self._reasoning: _Part | None = None
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
            self._text = _Part(_text_bundle)
        self._text.add(delta)

    def reasoning(self, delta: str) -> None:
        if not self.shown:
            return
        if self._reasoning is None:
            self._reasoning = _Part(_reasoning_bundle)
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
