"""Journal files: JSON Lines of ``{"type", "data"}`` events, read or tailed.

``%tool_log --save`` writes one agent's session log this way; a server that
journals many clients (``python -m dsh_nb serve --journal``) writes the same
lines with the client session's id beside them, ``{"type", "data",
"agent"}``, each session opened by an ``mcp/session`` line naming the
client. Reading keeps that tag, so a replay can group the calls by client.
:class:`JournalTail` reads what another process appends, one complete line
at a time: a line still being written waits for its
newline, and a file that is truncated or replaced (log rotation) is read
again from its start.

Only a regular file is read (:func:`open_regular`): a FIFO would block the
reader (a kernel's loop, when it follows), and a link to ``/dev/zero``
would read until memory runs out. One bad line never ends a read either:
a line that is not an event (garbage, an object nested past what the
parser takes) is skipped and counted (:func:`scan_journal`).
"""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO, Final

from dsh_nb.tools.jsonvalue import NotJsonError, snapshot_json
from dsh_nb.tools.surrogates import escape_tree

__all__ = [
    "JournalEvent",
    "JournalTail",
    "NotRegularFileError",
    "TailRead",
    "json_object",
    "not_regular",
    "open_regular",
    "parse_line",
    "read_journal",
    "read_objects",
    "scan_journal",
]

_MAX_PENDING: Final = 64 * 1024 * 1024  # a "line" longer than this is not one


@dataclass(frozen=True, slots=True)
class JournalEvent:
    """One event, and the client session it belongs to, if tagged."""

    type: str
    data: Mapping[str, Any]
    agent: str | None = None


class NotRegularFileError(OSError):
    """A path to read is a FIFO, a device, a socket: not a regular file."""


_KINDS: Final = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def not_regular(path: str | os.PathLike[str]) -> str | None:
    """Say what ``path`` is when it is there and not a regular file.

    For a reader about to ``open`` by name: ``stat`` never blocks on a
    FIFO, and the words are the ones :func:`open_regular` uses.
    """
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return f"{os.fspath(path)!r} is a folder, not a regular file"
    kind = next((name for test, name in _KINDS if test(mode)), "special")
    return f"{os.fspath(path)!r} is {kind}, not a regular file"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` for reading, binary, only if it is a regular file.

    The file is opened without blocking and checked on the open
    descriptor (no window between a check and the open): a FIFO would
    block ``open`` itself until a writer came, and a device (a link to
    ``/dev/zero``) never ends. A folder raises ``IsADirectoryError``,
    anything else not regular :class:`NotRegularFileError`, naming it.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(f"{os.fspath(path)!r} is a folder, not a file")
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "special")
            raise NotRegularFileError(
                f"{os.fspath(path)!r} is {kind}, not a regular file: not read"
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def json_object(line: str, where: str, what: str = "an event") -> dict[str, Any]:
    """Parse one JSON Lines line that must hold an object.

    ``ValueError`` names ``where`` (``path:line``) and the fault, so every
    reader of a JSON Lines file reports a bad line the same way (an
    object nested too deeply for the parser is one too).
    """
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{where}: nested too deeply to read") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: {what} must be an object")
    return raw


def read_objects(
    path: str | os.PathLike[str], what: str = "an event"
) -> list[dict[str, Any]]:
    """Every object of a JSON Lines file, in order; blank lines are skipped.

    Only a regular file is read (:func:`open_regular`).
    """
    with open_regular(path) as raw, io.TextIOWrapper(raw, encoding="utf-8") as fh:
        return [
            json_object(line, f"{os.fspath(path)}:{number}", what)
            for number, line in enumerate(fh, 1)
            if line.strip()
        ]


def parse_line(line: str, where: str = "line") -> JournalEvent:
    """Read one journal line; ``ValueError`` names ``where`` and the fault."""
    raw = json_object(line, where)
    kind = raw.get("type")
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"{where}: an event needs a non-empty string type")
    data = raw.get("data", {})
    if not isinstance(data, dict):
        raise ValueError(f"{where}: an event's data must be an object")
    agent = raw.get("agent")
    try:
        # As a session log holds it: deep-frozen, lone surrogates escaped.
        frozen = snapshot_json(escape_tree(data))
    except NotJsonError as exc:
        raise ValueError(f"{where}: {exc}") from None
    except RecursionError:
        raise ValueError(f"{where}: nested too deeply to read") from None
    return JournalEvent(
        kind,
        frozen,
        agent if isinstance(agent, str) else None,
    )


def read_journal(path: str | os.PathLike[str]) -> list[JournalEvent]:
    """Every event of a journal file; blank lines are skipped.

    A last line with no newline that does not parse is a write still under
    way (the file is live), and is left out; any other bad line is an error
    naming the file and the line. :func:`scan_journal` skips and counts.
    """
    return list(_read(path, strict=True).events)


def scan_journal(path: str | os.PathLike[str]) -> TailRead:
    """Every event of a journal file, and how many lines were not events.

    As ``%tool_log --follow`` reads garbage: a bad line is skipped and
    counted (``bad_lines``), so one line never hides the rest; a last
    line with no newline that does not parse (a write under way) is left
    out without counting.
    """
    return _read(path, strict=False)


def _read(path: str | os.PathLike[str], *, strict: bool) -> TailRead:
    with open_regular(path) as fh:
        lines = fh.read().split(b"\n")
    events = []
    bad = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{os.fspath(path)}:{number}"
        try:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{where}: not UTF-8 ({exc.reason})") from None
            events.append(parse_line(text, where))
        except ValueError:
            if number == len(lines):  # no newline after it: still being written
                break
            if strict:
                raise
            bad += 1
    return TailRead(tuple(events), (), bad)


@dataclass(frozen=True, slots=True)
class TailRead:
    """What one poll found: new events, and what happened to the file."""

    events: tuple[JournalEvent, ...] = ()
    notes: tuple[str, ...] = ()
    bad_lines: int = 0


class JournalTail:
    """Follow a journal file as it grows; each poll reads what is new.

    The file stays open between polls, so lines appended just before a
    rotation are still read from the old file before the new one.

    Parameters
    ----------
    path
        The file; it may not exist yet.
    from_start
        Read what the file already holds too (default: only what comes next).

    "Next" starts when the tail is made, not at its first poll: a follow's
    first poll runs whenever the loop gets to it, and lines written in
    between were skipped as old.
    """

    def __init__(self, path: str | os.PathLike[str], *, from_start: bool = False):
        self.path = os.fspath(path)
        self._from_start = from_start
        self._fh: BinaryIO | None = None
        self._identity: tuple[int, int] | None = None
        self._pending = b""
        self._started = False
        self._missing = False
        self._refused = ""
        if not from_start:
            self._open([])  # "next" starts now: at the end of what it holds

    def poll(self, max_bytes: int = 4 * 1024 * 1024) -> TailRead:
        """Read the complete lines appended since the last poll."""
        notes: list[str] = []
        events: list[JournalEvent] = []
        bad = 0
        if self._fh is None:
            self._open(notes)
        if self._fh is not None:
            found, wrong = self._lines(self._fh.read(max_bytes))
            events += found
            bad += wrong
            if self._check(notes):  # truncated or replaced: read it again
                found, wrong = self._lines(self._fh.read(max_bytes))
                events += found
                bad += wrong
        return TailRead(tuple(events), tuple(notes), bad)

    def close(self) -> None:
        """Stop following: close the file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def _open(self, notes: list[str]) -> None:
        first = not self._started
        self._started = True
        try:
            fh = open_regular(self.path)  # kept open between polls
        except FileNotFoundError:
            if not self._missing and not first:
                notes.append("the file is gone; waiting for it to come back")
            self._missing = True
            return
        except (NotRegularFileError, IsADirectoryError) as exc:
            if self._refused != str(exc):  # said once, checked every poll
                notes.append(str(exc))
            self._refused = str(exc)
            return
        self._refused = ""
        stat = os.fstat(fh.fileno())
        if first and not self._from_start:
            fh.seek(stat.st_size)
        elif not first:
            notes.append("the file is there now; reading it from its start")
        self._fh, self._identity, self._missing = fh, (stat.st_dev, stat.st_ino), False

    def _check(self, notes: list[str]) -> bool:
        """Notice truncation and replacement; True when reading restarts."""
        assert self._fh is not None
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return False  # moved away, not yet replaced: keep the old file
        if (stat.st_dev, stat.st_ino) != self._identity:
            notes.append("the file was replaced; reading the new one from its start")
            self.close()
            self._pending = b""
            self._started = True
            try:
                fh = open_regular(self.path)  # kept open between polls
            except FileNotFoundError:
                return False
            except (NotRegularFileError, IsADirectoryError) as exc:
                notes.append(str(exc))  # replaced by a FIFO, a device: not read
                self._refused = str(exc)
                return False
            new = os.fstat(fh.fileno())
            self._fh, self._identity = fh, (new.st_dev, new.st_ino)
            return True
        if stat.st_size < self._fh.tell():
            notes.append("the file was truncated; reading it again from its start")
            self._fh.seek(0)
            self._pending = b""
            return True
        return False

    def _lines(self, chunk: bytes) -> tuple[list[JournalEvent], int]:
        if not chunk:
            return [], 0
        data = self._pending + chunk
        *complete, rest = data.split(b"\n")
        if len(rest) > _MAX_PENDING:
            rest = b""  # not a journal line: drop it rather than grow forever
        self._pending = rest
        return _parse_all(complete)


def _parse_all(lines: Iterable[bytes]) -> tuple[list[JournalEvent], int]:
    events: list[JournalEvent] = []
    bad = 0
    for raw in lines:
        if not raw.strip():
            continue
        try:
            events.append(parse_line(raw.decode("utf-8")))
        except (ValueError, UnicodeDecodeError):
            bad += 1
    return events, bad
