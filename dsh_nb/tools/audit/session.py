"""Agents (scopes) and their append-only session logs.

A scope is an :class:`Agent`, compared by identity: two agents with the same
name are different scopes. Each agent carries a :class:`SessionLog`, the
durable record the approval seam audits into and a UI replays from.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dsh_nb.tools._disposer import Disposer
from dsh_nb.tools.audit.journalfile import read_objects
from dsh_nb.tools.audit.resultsize import DEFAULT_MAX_RESULT_BYTES
from dsh_nb.tools.audit.secrets import redact
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.jsonvalue import FrozenDict, NotJsonError, snapshot_json, to_plain
from dsh_nb.tools.surrogates import escape_tree

__all__ = ["Agent", "SessionLog", "defer"]

_log = logging.getLogger(__name__)

EventListener = Callable[[Mapping[str, Any]], None]


# An event not built yet is kept as a tuple ``(kind, *frozen_args)``, built
# by the builder registered for ``kind`` (:func:`defer`). The kind is a str,
# not the builder itself: a tuple of atoms (str, int, bool, None) stops
# being tracked by the garbage collector once a collection has seen it, so
# a long session's journal does not make every later collection longer.
# Built events are FrozenDicts, so ``isinstance(entry, tuple)`` tells them
# apart.
_Deferred = tuple[Any, ...]
_BUILDERS: dict[str, Callable[..., FrozenDict]] = {}
_TYPES: dict[str, str] = {}


def defer(kind: str, type_: str, build: Callable[..., FrozenDict]) -> None:
    """Register ``build`` for deferred ``type_`` entries ``(kind, *args)``."""
    _BUILDERS[kind] = build
    _TYPES[kind] = type_


def _build(entry: _Deferred) -> FrozenDict:
    return _BUILDERS[entry[0]](*entry[1:])


class SessionLog:
    """An append-only list of ``{"type", "data"}`` events.

    Events are deep-frozen JSON at append time, so what a listener or a later
    reader sees is exactly what was recorded.
    """

    def __init__(self, events: Iterable[Mapping[str, Any]] = ()) -> None:
        self._events: list[FrozenDict | _Deferred] = []
        # Entries from here on may still be _Deferred (a mark, not a count:
        # appending then costs nothing extra, and a read builds only the new).
        self._unbuilt_from = 0
        self._listeners: list[EventListener] = []
        self._listeners_changed()
        # Index of each type's latest event: the seams ask "is a turn open?"
        # and "what is the policy?" on every call, in O(1), not by scanning.
        # Deferred entries are indexed only when something asks or a built
        # event follows them (from _unindexed_from on): the journal's two
        # appends per call then skip the index.
        self._last: dict[str, int] = {}
        self._unindexed_from = 0
        self._max_result_bytes = DEFAULT_MAX_RESULT_BYTES
        for event in events:
            self._record(self._freeze(event.get("type"), event.get("data", {})))

    @property
    def max_result_bytes(self) -> int:
        """Bytes of each result's content the log (and a card) keeps.

        The one home of the bound: the journal reads it for every result,
        the notebook's card reads it, and ``%config
        DshConfig.max_result_bytes`` writes it. A bigger result is still
        returned whole to its caller; the log keeps a cut copy and the full
        size (``resultBytes``), so a 100 MB result does not stay in memory
        for the session.
        """
        return self._max_result_bytes

    @max_result_bytes.setter
    def max_result_bytes(self, value: int) -> None:
        if type(value) is not int or value < 1:
            raise ValueError(f"max_result_bytes must be a positive int; got {value!r}")
        self._max_result_bytes = value

    @staticmethod
    def _freeze(type_: object, data: object) -> FrozenDict:
        if not isinstance(type_, str) or not type_:
            raise ValueError(f"event type must be a non-empty string, not {type_!r}")
        try:
            # Escaped: the log is written as UTF-8, which has no lone surrogates.
            frozen: FrozenDict = snapshot_json(
                escape_tree({"type": type_, "data": data})
            )
        except NotJsonError as exc:
            raise ValueError(
                f"event {type_!r} data must be lossless JSON: {exc}"
            ) from None
        return frozen

    @property
    def events(self) -> tuple[FrozenDict, ...]:
        """Every event so far, oldest first."""
        return tuple(self._built())

    def _built(self) -> list[FrozenDict]:
        """``_events`` with every deferred event built (once)."""
        events = self._events
        end = len(events)
        for i in range(self._unbuilt_from, end):
            event = events[i]
            if isinstance(event, tuple):
                events[i] = _build(event)
        self._unbuilt_from = end
        return events  # type: ignore[return-value]

    def __len__(self) -> int:
        return len(self._events)

    def append(self, type_: str, data: Mapping[str, Any] | None = None) -> FrozenDict:
        """Record one event and notify listeners; a raising listener is logged."""
        return self._append_frozen(self._freeze(type_, {} if data is None else data))

    def _append_frozen(self, event: FrozenDict) -> FrozenDict:
        """Append an event built from frozen JSON parts, without copying.

        For the core's journal (:mod:`dsh_nb.tools.audit.journal`), whose parts
        are the call's own frozen arguments and result.
        """
        events = self._events
        if self._unindexed_from < len(events):
            self._index()
        self._last[event["type"]] = len(events)
        self._unindexed_from = len(events) + 1
        events.append(event)
        if self._listeners:
            for listener in tuple(self._listeners):
                try:
                    listener(event)
                except Exception as exc:  # noqa: BLE001 - never split a pair
                    _log.warning("session listener failed: %s", error_message(exc))
        return event

    def _append_built(self, entry: _Deferred) -> None:
        self._append_frozen(_build(entry))

    def _listeners_changed(self) -> None:
        # ``_append_deferred(entry)`` appends the event ``entry`` stands
        # for, built when read. For the core's journal: its parts are frozen
        # values, so building later gives exactly the event building now
        # would, and a call pays for the event objects only if someone
        # reads the log. With listeners attached the event is built and
        # delivered at once. Without, it is the list's own append.
        self._append_deferred: Callable[[_Deferred], None] = (
            self._append_built if self._listeners else self._events.append
        )

    def _index(self) -> None:
        """Bring ``_last`` up to date with the deferred entries not seen yet."""
        events, last = self._events, self._last
        end = len(events)
        for i in range(self._unindexed_from, end):
            entry = events[i]  # deferred, or built by a read since
            last[_TYPES[entry[0]] if isinstance(entry, tuple) else entry["type"]] = i
        self._unindexed_from = end

    def _record(self, event: FrozenDict) -> None:
        self._last[event["type"]] = len(self._events)
        self._events.append(event)
        self._unindexed_from = len(self._events)

    def last(self, type_: str) -> FrozenDict | None:
        """The most recent event of one type, or None."""
        if self._unindexed_from < len(self._events):
            self._index()
        index = self._last.get(type_)
        if index is None:
            return None
        event = self._events[index]
        if isinstance(event, tuple):
            built: FrozenDict = _build(event)
            self._events[index] = built
            return built
        return event

    def on_append(self, fn: EventListener) -> Disposer:
        """Call ``fn(event)`` after every append; returns a dispose."""
        self._listeners.append(fn)
        self._listeners_changed()

        def dispose() -> None:
            self._listeners.remove(fn)
            self._listeners_changed()

        return Disposer(dispose)

    def start_turn(self, data: Mapping[str, Any] | None = None) -> None:
        """Open a turn: the approval seam only runs inside one."""
        self.append("turn/start", data)

    def end_turn(self, data: Mapping[str, Any] | None = None) -> None:
        """Close the current turn."""
        self.append("turn/end", data)

    def in_open_turn(self) -> bool:
        """Whether a ``turn/start`` comes after the last ``turn/end``."""
        return self._last.get("turn/start", -1) > self._last.get("turn/end", -1)

    def of_type(self, type_: str) -> list[FrozenDict]:
        """Every event of one type, oldest first."""
        return [e for e in self._built() if e["type"] == type_]

    def to_jsonl(self) -> str:
        """Serialise as JSON Lines, one event a line, secrets redacted."""
        return "".join(
            redact(json.dumps(to_plain(e), ensure_ascii=False)) + "\n"
            for e in self._built()
        )

    def write_jsonl(self, path: str | os.PathLike[str]) -> None:
        """Write every event to ``path`` as JSON Lines."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_jsonl())

    @classmethod
    def read_jsonl(cls, path: str | os.PathLike[str]) -> SessionLog:
        """Read a log written by :meth:`write_jsonl`; blank lines are skipped."""
        return cls(read_objects(path))

    def __repr__(self) -> str:
        return f"<SessionLog {len(self._events)} events>"


class Agent:
    """A scope: tools, listeners and guards can be registered on its behalf."""

    __slots__ = ("__weakref__", "cwd", "name", "session")

    def __init__(self, name: str, *, cwd: str | None = None) -> None:
        self.name = name
        self.cwd = cwd
        self.session = SessionLog()

    def __repr__(self) -> str:
        return f"<Agent {self.name!r} at {id(self):#x}>"
