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
A server's journal tags each event with its client's agent name; the
replay then shows each client's calls together, under a header, in the
order the clients first called.

A replay draws at most :data:`MAX_CARDS` cards (as ``%tool_log --follow``
does) and says how many more the returned list holds; a line that is not
an event, or an event the cards cannot show (an unknown status), is
skipped and counted, never the end of the replay.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from IPython.core.error import UsageError

from dsh_nb.cards.model import STATUSES
from dsh_nb.cards.talk import CardTalk
from dsh_nb.notebook.live import card_status, still_running
from dsh_nb.tools.audit import journal
from dsh_nb.tools.audit.journalfile import JournalEvent, scan_journal
from dsh_nb.tools.audit.session import SessionLog
from dsh_nb.tools.definition import ToolResult
from dsh_nb.tools.jsonvalue import ABSENT
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
    "client_header",
    "entry_card",
    "replay",
]

SESSION_EVENT: Final = "mcp/session"  # a served client session's first line
_MAX_SESSIONS: Final = 10_000  # session names a long follow remembers
MAX_CARDS: Final = 200  # cards one replay draws; the list holds them all


@dataclass(slots=True, eq=False)
class CallEntry:
    """One call of a journal, as its events so far describe it."""

    call_id: str
    name: str
    arguments: Any
    result: Mapping[str, Any] | None = None
    status: str | None = None
    client: str | None = None
    approval: str | None = field(default=None)
    body_running: bool = False
    talk: CardTalk = field(default_factory=CardTalk)  # its progress and lines


class Replay(list["ToolCard"]):
    """The replayed cards; as a cell's value it shows a one-line summary.

    ``clients`` maps each client's label (its agent name) to its cards,
    when the journal names clients.
    """

    __slots__ = ("clients", "skipped", "source")

    def __init__(
        self,
        cards: list[ToolCard],
        source: str,
        clients: dict[str, list[ToolCard]] | None = None,
        skipped: int = 0,
    ) -> None:
        super().__init__(cards)
        self.source = source
        self.clients = clients or {}
        self.skipped = skipped

    def _summary(self) -> str:
        from dsh_nb.cards.escape import visible

        noun = "call" if len(self) == 1 else "calls"
        text = f"replayed {len(self)} {noun} from {self.source}"
        if self.clients:
            names = ", ".join(visible(name) for name in self.clients)
            many = "client" if len(self.clients) == 1 else "clients"
            text += f" ({len(self.clients)} {many}: {names})"
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


class CallBook:
    """The calls of a journal, built up one event at a time.

    A server's journal tags each event with its client session's id and
    opens each session with an ``mcp/session`` line naming the client
    (``claude-code``); calls are grouped by that name, so a stateless
    server's many sessions of one client read as one client. Calls are
    keyed by session and call id, so two sessions' ``call-1`` stay apart.
    ``add`` returns the entry an event created or changed (None for events
    that are not the core's journal, or a result of a call never seen).
    """

    def __init__(self) -> None:
        self.entries: list[CallEntry] = []
        self.clients: dict[str | None, list[CallEntry]] = {}
        self._latest: dict[tuple[str | None, str], CallEntry] = {}
        self._names: dict[str, str] = {}
        self.bad = 0  # events skipped: a status the cards do not know

    def client_of(self, event: JournalEvent) -> str | None:
        """The client an event belongs to: its session's client name."""
        tag = event.agent
        return None if tag is None else self._names.get(tag, tag)

    def add(self, event: JournalEvent) -> CallEntry | None:
        kind, data = event.type, event.data
        if kind == SESSION_EVENT and event.agent is not None:
            name = data.get("client")
            if isinstance(name, str) and name:
                if len(self._names) >= _MAX_SESSIONS:
                    del self._names[next(iter(self._names))]
                self._names[event.agent] = name
            return None
        call_id = data.get("callId")
        if not isinstance(call_id, str):
            return None
        key = (event.agent, call_id)
        if kind == journal.CALL:
            client = self.client_of(event)
            entry = CallEntry(
                call_id, str(data.get("name", "")), data.get("arguments"), client=client
            )
            self.entries.append(entry)
            self.clients.setdefault(client, []).append(entry)
            self._latest[key] = entry
            return entry
        found = self._latest.get(key)
        if found is None:
            return None
        if kind == journal.RESULT:
            status = data.get("status")
            if isinstance(status, str) and card_status(status) not in STATUSES:
                self.bad += 1  # not the core's: skipped, not the end
                return None
            result = data.get("result")
            found.result = result if isinstance(result, Mapping) else None
            found.status = card_status(status) if isinstance(status, str) else None
            approval = data.get("approval")
            found.approval = approval if isinstance(approval, str) else None
            found.body_running = data.get("bodyRunning") is True
        elif kind == journal.CANCELLED:
            found.status = "cancelled"
        elif not heard(found, kind, data):
            return None
        return found

    def forget(self, entry: CallEntry) -> None:
        """Drop a settled call (a follow keeps only calls still open)."""
        for key, latest in list(self._latest.items()):
            if latest is entry:
                del self._latest[key]
        group = self.clients.get(entry.client)
        if group is not None and entry in group:
            group.remove(entry)
            if not group:
                del self.clients[entry.client]
        if entry in self.entries:
            self.entries.remove(entry)


def heard(entry: CallEntry, kind: str, data: Mapping[str, Any]) -> bool:
    """Add a ``tool/progress`` or ``tool/log`` event to the call's card."""
    from dsh_nb.tools.context import LogLine, Progress

    if kind == "tool/progress" and isinstance(data.get("progress"), (int, float)):
        total, message = data.get("total"), data.get("message")
        entry.talk = entry.talk.with_progress(
            Progress(
                float(data["progress"]),
                float(total) if isinstance(total, (int, float)) else None,
                message if isinstance(message, str) else None,
            )
        )
        return True
    if kind == "tool/log" and isinstance(data.get("text"), str):
        logger = data.get("logger")
        line = LogLine(
            str(data.get("level", "info")),
            data["text"],
            str(data.get("source", "log")),
            logger if isinstance(logger, str) else None,
        )
        entry.talk = entry.talk.with_line(line)
        return True
    return False


def client_header(label: str, calls: int) -> dict[str, str]:
    """The bundle shown above one client's cards (escaped: a client names
    itself)."""
    from dsh_nb.cards.escape import esc, visible

    noun = "call" if calls == 1 else "calls"
    count = f" · {calls} {noun}" if calls >= 0 else ""
    html = (
        "<div class='dsh-ClientHeader' style='margin-top:6px;font-family:"
        "var(--jp-ui-font-family, sans-serif);font-size:12px;color:"
        f"var(--jp-ui-font-color1, inherit)'><strong>client</strong> {esc(label)}"
        f"{esc(count)}</div>"
    )
    return {"text/plain": f"client {visible(label)}{count}", "text/html": html}


def _events(log: SessionLog) -> list[JournalEvent]:
    return [JournalEvent(e["type"], e["data"]) for e in log.events]


def entry_card(entry: CallEntry, presenter: ToolPresenter, cwd: str | None) -> ToolCard:
    from dsh_nb.cards import CardModel, render_card

    call_view = presenter.present_call(entry.call_id, entry.name, entry.arguments)
    result_view = None
    status = "pending"
    is_error = False
    if entry.result is not None:
        content = entry.result.get("content")
        is_error = bool(entry.result.get("isError"))
        logged = ToolResult(
            content=list(content) if isinstance(content, list) else [],
            is_error=is_error,
            meta=entry.result.get("meta", ABSENT),
        )
        result_view = presenter.present_result(entry.call_id, logged)
        if entry.body_running:
            result_view = still_running(result_view)
        # A log older than the core's journal has no status: isError only.
        status = entry.status or ("error" if is_error else "done")
    else:
        presenter.forget(entry.call_id)
        status = entry.status or status  # "cancelled" when the log says so
    model = CardModel(
        tool=entry.name,
        call_id=entry.call_id,
        status=status,
        call=call_view,
        result=result_view,
        is_error=is_error,
        cwd=cwd,
        approval=entry.approval,
        meta={"callId": entry.call_id, "replayed": True},
        talk=entry.talk,
    )
    return render_card(model)


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
        name their client (``"agent"``): each client's calls are then shown
        together under a header. Or a ``SessionLog``.
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
        client); ``.clients`` maps each client to its cards.
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
    groups: dict[str, list[ToolCard]] = {}
    named = any(client is not None for client in book.clients)
    drawn = 0
    for client, entries in book.clients.items():
        group = []
        for entry in entries:
            try:
                group.append(entry_card(entry, presenter, state.agent.cwd))
            except Exception:  # noqa: BLE001 - one bad event, not the replay
                skipped += 1
        cards += group
        if named:
            name = client if client is not None else "unnamed client"
            groups[name] = group
            if drawn < MAX_CARDS:
                show(client_header(name, len(group)), raw=True)
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
                card = entry_card(entry, presenter, cwd)
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
