"""``replay``: re-render the cards of a saved session log.

A log written by ``%tool_log --save`` holds the core's journal: each call's
``tool/call``, then ``tool/result`` (with the call's status and approval
outcome) or ``tool/cancelled``, and what the call said meanwhile
(``tool/progress``, ``tool/log``: the card's bar and lines). Replaying
hands the logged arguments and result (with its ``meta``) to the tools'
own pure presenters, so the cards
look as they did live, without running anything or reading other events.
Given a chat's ``messages`` too, the replay is the whole conversation in
order: what the user said, what the model answered, and each call's card.
A server's journal tags each event with its client session; the replay
shows each session's calls together, under a header naming its client, in
the order the sessions first called (two sessions of one client are two
groups: :mod:`dsh_nb.cards.callbook`).

A replay draws at most :data:`MAX_CARDS` cards (as ``%tool_log --follow``
does) and says how many more the returned list holds; a line that is not
an event, or an event the cards cannot show (an unknown status), is
skipped and counted, never the end of the replay.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from IPython.core.error import UsageError

from dsh_nb.cards.callbook import SESSION_EVENT, CallBook, CallEntry
from dsh_nb.cards.callcard import entry_card
from dsh_nb.tools.audit.journalfile import JournalEvent, scan_journal
from dsh_nb.tools.audit.session import SessionLog
from dsh_nb.tools.presenter import ToolPresenter

if TYPE_CHECKING:
    from dsh_nb.cards import ToolCard
    from dsh_nb.tools.registry import ToolRegistry

__all__ = [
    "MAX_CARDS",
    "SESSION_EVENT",
    "CallBook",
    "CallEntry",
    "Replay",
    "ReplayGroup",
    "client_header",
    "entry_card",
    "replay",
]

MAX_CARDS: Final = 200  # cards one replay draws; the list holds them all


@dataclass(frozen=True, slots=True)
class ReplayGroup:
    """One client session's cards, labelled by its client."""

    session: str | None  # None: events no session tagged
    client: str
    cards: list[ToolCard]


class Replay(list["ToolCard"]):
    """The replayed cards; as a cell's value it shows a one-line summary.

    When the journal names client sessions, ``sessions`` holds each
    session's cards (a :class:`ReplayGroup`, in the order shown) and
    ``clients`` maps each client's label (its agent name) to the cards of
    all its sessions.
    """

    __slots__ = ("clients", "sessions", "skipped", "source")

    def __init__(
        self,
        cards: list[ToolCard],
        source: str,
        sessions: list[ReplayGroup] | None = None,
        skipped: int = 0,
    ) -> None:
        super().__init__(cards)
        self.source = source
        self.sessions = sessions or []
        self.clients: dict[str, list[ToolCard]] = {}
        for group in self.sessions:
            self.clients.setdefault(group.client, []).extend(group.cards)
        self.skipped = skipped

    def _summary(self) -> str:
        from dsh_nb.cards.escape import visible

        noun = "call" if len(self) == 1 else "calls"
        text = f"replayed {len(self)} {noun} from {self.source}"
        if self.clients:
            names = ", ".join(visible(name) for name in self.clients)
            many = "client" if len(self.clients) == 1 else "clients"
            text += f" ({len(self.clients)} {many}: {names}"
            if len(self.sessions) != len(self.clients):
                text += f"; {len(self.sessions)} sessions"
            text += ")"
        if self.skipped:
            lines = "line" if self.skipped == 1 else "lines"
            text += f"; {self.skipped} {lines} skipped (not journal events)"
        return text

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, Any]:
        return {"text/plain": self._summary()}

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # IPython's list printer would win over the bundle's text/plain.
        printer.text(self._summary())


def client_header(label: str, calls: int, session: str | None = None) -> dict[str, str]:
    """The bundle shown above one session's cards (escaped: a client names
    itself, and a journal's session ids are the file's words)."""
    from dsh_nb.cards.escape import esc, visible

    noun = "call" if calls == 1 else "calls"
    count = f" · session {session}" if session is not None else ""
    count += f" · {calls} {noun}" if calls >= 0 else ""
    html = (
        "<div class='dsh-ClientHeader' style='margin-top:6px;font-family:"
        "var(--jp-ui-font-family, sans-serif);font-size:12px;color:"
        f"var(--jp-ui-font-color1, inherit)'><strong>client</strong> {esc(label)}"
        f"{esc(count)}</div>"
    )
    return {"text/plain": f"client {visible(label)}{count}", "text/html": html}


def _events(log: SessionLog) -> list[JournalEvent]:
    return [JournalEvent(e["type"], e["data"]) for e in log.events]


def replay(
    source: str | os.PathLike[str] | SessionLog,
    *,
    registry: ToolRegistry | None = None,
    display: bool = True,
    messages: object = None,
) -> Replay:
    """Re-render every call of a saved session log as a card.

    Parameters
    ----------
    source
        A JSON Lines file written by ``%tool_log --save`` (or
        ``SessionLog.write_jsonl``), or a server's journal, whose events
        name their client session (``"agent"``): each session's calls are
        then shown together under a header naming its client. Or a
        ``SessionLog``.
    registry
        Where the tools' presenters are looked up; the kernel registry by
        default. A tool that is not registered gets the generic card.
    display
        Whether to display the cards in the current cell (IPython only).
    messages
        A chat's conversation (``chat.messages``, a ``Chat``, or a JSON file
        holding them): the user's and the model's texts are shown too, each
        call's card where the model made it.

    Returns
    -------
    Replay
        The cards, a ``list`` of displayable ``ToolCard`` (grouped by
        client session); ``.sessions`` holds each session's cards and its
        client, ``.clients`` maps each client to its sessions' cards.
    """
    from dsh_nb.notebook.current import current_state

    state = current_state()
    skipped = 0
    if isinstance(source, SessionLog):
        events, label = _events(source), "a session log"
    else:
        label = repr(os.fspath(source))
        try:
            read = scan_journal(source)
        except FileNotFoundError:  # one clear line, not a traceback through dsh_nb
            raise UsageError(f"replay: no journal file {label}") from None
        events, skipped = list(read.events), read.bad_lines
    presenter = ToolPresenter(registry if registry is not None else state.registry)
    book = CallBook()
    for event in events:
        book.add(event)
    skipped += book.bad
    shown = display and state.shell is not None
    if messages is not None:
        return _conversation(
            messages, book.entries, presenter, state.agent.cwd, shown, label, skipped
        )
    show: Callable[..., Any] = _show if shown else _hide
    cards: list[ToolCard] = []
    groups: list[ReplayGroup] = []
    named = any(session is not None for session in book.sessions)
    drawn = 0
    for session, entries in book.sessions.items():
        group = []
        for entry in entries:
            try:
                group.append(entry_card(entry, presenter, cwd=state.agent.cwd))
            except Exception:  # noqa: BLE001 - one bad event, not the replay
                skipped += 1
        cards += group
        if named:
            name = book.client_of(session) or "unnamed client"
            groups.append(ReplayGroup(session, name, group))
            if drawn < MAX_CARDS:
                show(client_header(name, len(group), session), raw=True)
        for card in group:
            if drawn < MAX_CARDS:
                show(card)
            drawn += 1
    result = Replay(cards, label, groups, skipped)
    if drawn > MAX_CARDS or skipped:
        show(_tail_note(result, drawn - MAX_CARDS), raw=True)
    return result


def _tail_note(result: Replay, hidden: int) -> dict[str, str]:
    """The line under a replay: the cards not drawn, the lines skipped."""
    from dsh_nb.cards.escape import esc

    parts = []
    if hidden > 0:
        noun = "call" if hidden == 1 else "calls"
        parts.append(
            f"{hidden} more {noun} not shown (the first {MAX_CARDS} are); "
            "the returned list holds them all"
        )
    if result.skipped:
        lines = "line" if result.skipped == 1 else "lines"
        parts.append(f"{result.skipped} {lines} skipped (not journal events)")
    text = " · ".join(parts)
    html = (
        "<div class='dsh-ReplayNote' style='font-family:var(--jp-ui-font-family,"
        " sans-serif);font-size:12px;color:var(--jp-ui-font-color2, #666)'>"
        f"{esc(text)}</div>"
    )
    return {"text/plain": text, "text/html": html}


def _show(*objs: Any, **kwargs: Any) -> None:
    from IPython.display import display

    shown: Callable[..., Any] = display
    shown(*objs, **kwargs)


def _hide(*objs: Any, **kwargs: Any) -> None:
    return None


def _conversation(
    messages: object,
    entries: list[CallEntry],
    presenter: ToolPresenter,
    cwd: str | None,
    shown: bool,
    label: str,
    skipped: int = 0,
) -> Replay:
    from dsh_nb.cards.modeltext import model_text_html
    from dsh_nb.notebook.chatreplay import conversation_items, load_messages

    # Some servers reuse call ids (llama.cpp's "call_0"): pair in order.
    by_id: dict[str, list[CallEntry]] = {}
    for entry in entries:
        by_id.setdefault(entry.call_id, []).append(entry)
    cards = []
    for kind, item in conversation_items(load_messages(messages)):
        if kind == "call":
            call_id, name, _ = item
            queue = by_id.get(call_id)
            if queue:
                entry = queue.pop(0)
            else:
                entry = CallEntry(str(call_id), str(name or ""), None)
            try:
                card = entry_card(entry, presenter, cwd=cwd)
            except Exception:  # noqa: BLE001 - one bad event, not the replay
                skipped += 1
                continue
            cards.append(card)
            bundle: Any = card
        else:
            speaker = "you" if kind == "user" else "model"
            said = f"**you:** {item}" if kind == "user" else item
            bundle = {
                "text/html": model_text_html(said),
                "text/plain": f"{speaker}: {item}",
            }
        if shown and len(cards) <= MAX_CARDS:  # past the cap: counted below
            if isinstance(bundle, dict):
                _show(bundle, raw=True)
            else:
                _show(bundle)
    result = Replay(cards, label, skipped=skipped)
    if shown and (len(cards) > MAX_CARDS or skipped):
        _show(_tail_note(result, len(cards) - MAX_CARDS), raw=True)
    return result
