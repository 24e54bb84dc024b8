"""The calls of a journal, built up one event at a time (replay and follow).

A server's journal tags each event with its client session's id
(``"agent"``) and opens each session with an ``mcp/session`` line naming
the client (``claude-code``). Calls are grouped by session, not by client
name: two sessions of one client (two windows of one editor, two runs of
one agent, each request of a stateless server) are separate groups, each
labelled by its client. Calls are keyed by session and call id, so two
sessions' ``call-1`` stay apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from dsh_nb.cards.model import STATUSES, card_status
from dsh_nb.cards.talk import CardTalk
from dsh_nb.tools.audit import journal
from dsh_nb.tools.audit.journalfile import JournalEvent

__all__ = ["SESSION_EVENT", "CallBook", "CallEntry", "heard"]

SESSION_EVENT: Final = "mcp/session"  # a served client session's first line
_MAX_SESSIONS: Final = 10_000  # session names a long follow remembers


@dataclass(slots=True, eq=False)
class CallEntry:
    """One call of a journal, as its events so far describe it.

    ``session`` is the id of the client session it came in on (None in a
    notebook's own log); ``client`` is that session's client name.
    """

    call_id: str
    name: str
    arguments: Any
    result: Mapping[str, Any] | None = None
    status: str | None = None
    client: str | None = None
    approval: str | None = field(default=None)
    body_running: bool = False
    talk: CardTalk = field(default_factory=CardTalk)  # its progress and lines
    session: str | None = None


class CallBook:
    """The calls of a journal, grouped by the client session they came in on.

    ``sessions`` maps each session id (None for events without one) to its
    calls, in the order the sessions first called; :meth:`client_of` names
    a session's client. ``add`` returns the entry an event created or
    changed (None for events that are not the core's journal, or a result
    of a call never seen).
    """

    def __init__(self) -> None:
        self.entries: list[CallEntry] = []
        self.sessions: dict[str | None, list[CallEntry]] = {}
        self._latest: dict[tuple[str | None, str], CallEntry] = {}
        self._names: dict[str, str] = {}
        self.bad = 0  # events skipped: a status the cards do not know

    def client_of(self, session: str | None) -> str | None:
        """A session's client name (its id when no line named the client)."""
        return None if session is None else self._names.get(session, session)

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
            entry = CallEntry(
                call_id,
                str(data.get("name", "")),
                data.get("arguments"),
                client=self.client_of(event.agent),
                session=event.agent,
            )
            self.entries.append(entry)
            self.sessions.setdefault(event.agent, []).append(entry)
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
        group = self.sessions.get(entry.session)
        if group is not None and entry in group:
            group.remove(entry)
            if not group:
                del self.sessions[entry.session]
        if entry in self.entries:
            self.entries.remove(entry)


def heard(entry: CallEntry, kind: str, data: Mapping[str, Any]) -> bool:
    """Add a ``tool/progress``, ``tool/log``, ``tool/sample`` or
    ``tool/sampled`` event to the call's card."""
    from dsh_nb.cards.talk import sample_lines
    from dsh_nb.tools.context import LogLine, Progress

    said = {"tool/sample": "prompt", "tool/sampled": "text"}.get(kind)
    if said is not None and isinstance(data.get(said), str):
        label = "asks the model" if kind == "tool/sample" else "the model answered"
        for line in sample_lines(label, data[said]):
            entry.talk = entry.talk.with_line(line)
        return True

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
