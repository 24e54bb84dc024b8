"""The live panel under the cell that started an MCP server.

One header (the URL, the clients, where the token file is: never the
token) and a bounded stack of call cards, newest first, each with its
approval prompt right under it while one is pending. Cards are moved
between a fixed set of display slots as calls arrive, so the panel stays
the same size however many calls come in, and every update goes through a
display handle (never ``with out:`` from a task).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.display import DisplayHandle

    from dsh_nb.mcp.server import McpServer
    from dsh_nb.notebook.live import LiveCall

__all__ = ["MAX_CARDS", "McpPanel"]

MAX_CARDS = 8
_NAMES_SHOWN = 5  # client names in the header; the rest are counted
_NAME_CHARS = 40


def _display(bundle: dict[str, str]) -> DisplayHandle | None:
    from IPython.display import display

    show: Callable[..., Any] = display
    handle: DisplayHandle | None = show(bundle, raw=True, display_id=True)
    return handle


def _clients(names: set[str]) -> str:
    """A bounded line: the header is re-sent on every new client and call."""
    if not names:
        return "none yet"
    ordered = sorted(names)
    shown = [
        n if len(n) <= _NAME_CHARS else n[: _NAME_CHARS - 1] + "…"
        for n in ordered[:_NAMES_SHOWN]
    ]
    more = len(ordered) - len(shown)
    return ", ".join(shown) + (f" and {more:,} more" if more else "")


def _file_name(server: McpServer) -> str:
    # The name only: an absolute path would land in the saved notebook.
    path = server.token_file
    return path.name if path is not None else "(no file)"


class McpPanel:
    """The serving cell's view of one server; a no-op outside IPython."""

    def __init__(self, *, shown: bool, max_cards: int = MAX_CARDS) -> None:
        self._shown = shown
        self._max = max_cards
        self._header: DisplayHandle | None = None
        self._slots: list[tuple[DisplayHandle, DisplayHandle]] = []
        self._calls: list[LiveCall] = []
        self._server: McpServer | None = None
        self._state = "starting"
        self.total_calls = 0
        self._seen: set[str] = set()  # every client, kept past its session

    def show(self, server: McpServer) -> None:
        """Display the header in the current cell."""
        self._server = server
        self._state = "running"
        if self._shown:
            self._header = _display(self.header())

    def show_again(self) -> None:
        """Show the panel in the current cell, e.g. after a page reload.

        A reload loses the outputs a display handle updates, so the header
        and the cards move to new handles here; the old header, if it is
        still on the page, says where the panel went.
        """
        if not self._shown:
            return
        old, self._header = self._header, None
        if old is not None:
            moved: Callable[..., None] = old.update
            moved(
                {"text/plain": "MCP server panel: shown again in a later cell"},
                raw=True,
            )
        for card, prompt in self._slots:
            for handle in (card, prompt):
                clear: Callable[..., None] = handle.update
                clear({"text/plain": ""}, raw=True)
        self._slots = []
        self._header = _display(self.header())
        # Every slot is made here, in this cell: a slot made later by a
        # call would land in the cell that started the server (the call's
        # task carries that cell's context), which the reload took away.
        for _ in range(self._max):
            fresh = _display({"text/plain": ""}), _display({"text/plain": ""})
            if fresh[0] is not None and fresh[1] is not None:
                self._slots.append((fresh[0], fresh[1]))
        for (card, prompt), call in zip(self._slots, self._calls, strict=False):
            call.attach(card, prompt)

    def set_state(self, state: str) -> None:
        """``running``, ``stopped`` or a failure text; updates the header."""
        self._state = state
        self.refresh_header()

    def refresh_header(self) -> None:
        """Re-render the header (a new client, a call, a stop)."""
        if self._header is not None:
            update: Callable[..., None] = self._header.update
            update(self.header(), raw=True)

    def header(self) -> dict[str, str]:
        """The header as a MIME bundle: text and escaped HTML."""
        server = self._server
        if server is None:
            return {"text/plain": "MCP server: starting"}
        clients = {a.name for a in server.agents}
        self._seen |= clients
        if self._state == "running":
            who = f"clients: {_clients(clients)}"
        else:  # its sessions are gone; say who it served, not "none yet"
            who = f"clients served: {_clients(self._seen).replace('none yet', 'none')}"
        lines = [
            f"MCP server {self._state}: {server.url}",
            f"{who} · calls: {self.total_calls}",
            f"token: in {_file_name(server)} in the Jupyter runtime folder"
            " (jupyter --runtime-dir); it is never shown",
            "settings for a client: python -m dsh_nb mcp-config"
            " · stop: %tools serve --stop",
        ]
        rows = "".join(f"<div>{html.escape(line)}</div>" for line in lines[1:])
        head = html.escape(lines[0])
        body = (
            "<div class='dsh-McpPanel' style='border:1px solid "
            "var(--jp-border-color2, #ccc);padding:4px 8px;font-family:"
            "var(--jp-ui-font-family, sans-serif);font-size:12px'>"
            f"<strong>{head}</strong>{rows}</div>"
        )
        return {"text/plain": "\n".join(lines), "text/html": body}

    def add(self, live: LiveCall) -> None:
        """Put a new call's card on top; the oldest one beyond the bound goes."""
        self.total_calls += 1
        self._calls.insert(0, live)
        dropped = self._calls[self._max :]
        del self._calls[self._max :]
        for old in dropped:
            old.attach(None)
        if self._shown and len(self._slots) < len(self._calls):
            # A card and, right under it, the place for its approval prompt.
            card, prompt = _display({"text/plain": ""}), _display({"text/plain": ""})
            if card is not None and prompt is not None:
                self._slots.append((card, prompt))
        for (card, prompt), call in zip(self._slots, self._calls, strict=False):
            call.attach(card, prompt)
        self.refresh_header()

    def close(self) -> None:
        """Stop updating cards; the header says the server stopped."""
        for call in self._calls:
            call.attach(None)
        self.set_state("stopped")
