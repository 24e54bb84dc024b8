"""One streamed part of a reply (its text or its reasoning) in the cell.

Re-sending a growing text whole every 50 ms is quadratic: 2 MB of reply
became 254 MB of display updates, and all of it stayed in the notebook.
So the part is shown as a run of displays: only the last one (the
unfinished tail, about :data:`SEGMENT` characters at most) is updated in
place; once the tail is long enough, its finished part is sent one last
time and a new display is appended for the rest. A cell keeps at most
:data:`KEEP` characters of a part; past that one line counts what was
left out (``… N more characters``), and the whole text stays in the
chat's messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

__all__ = ["EVERY", "KEEP", "SEGMENT", "StreamedPart"]

EVERY: Final = 0.05
"""Seconds between in-place updates of the tail."""
SEGMENT: Final = 4_000
"""Characters past which the tail's finished part becomes its own display."""
KEEP: Final = 100_000
"""Characters of one part a cell keeps."""

Render = Callable[[str, str, int], dict[str, Any]]
Split = Callable[[str], tuple[int, str, str]]


def _show(bundle: dict[str, Any]) -> Any:
    from IPython.display import display

    show: Callable[..., Any] = display
    return show(bundle, raw=True, display_id=True)


class StreamedPart:
    """Deltas in, bounded displays out.

    ``render(markup, raw, index)`` makes the bundle of the ``index``-th
    display from its text (``markup`` with a cut code fence closed or
    reopened, ``raw`` as it came); ``split(tail)`` says where a long tail
    may be cut (see :func:`dsh_nb.cards.modeltext.split_point`).
    """

    __slots__ = (
        "_chunks",
        "_count",
        "_done",
        "_handle",
        "_length",
        "_more",
        "_pending",
        "_render",
        "_reopen",
        "_sent",
        "_split",
    )

    def __init__(self, render: Render, split: Split) -> None:
        self._render = render
        self._split = split
        self._chunks: list[str] = []
        self._length = 0
        self._done = 0  # characters already in finished displays
        self._reopen = ""  # what the tail's display starts with (a fence)
        self._count = 0  # displays shown
        self._handle: Any = None
        self._more: Any = None
        self._pending: asyncio.TimerHandle | None = None
        self._sent = ""  # what the tail's display shows now

    def add(self, delta: str) -> None:
        """Take one delta; show it at once the first time, else soon."""
        if self._length >= KEEP:
            self._length += len(delta)  # counted, not kept
        else:
            self._chunks.append(delta)
            self._length += len(delta)
        if self._handle is None:
            self.flush()
        elif self._pending is None:
            self._pending = asyncio.get_running_loop().call_later(EVERY, self.flush)

    def _text(self) -> str:
        if len(self._chunks) > 1:
            self._chunks[:] = ["".join(self._chunks)]
        return self._chunks[0] if self._chunks else ""

    def flush(self) -> None:
        """Send what changed: finished displays, the tail, the count."""
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        kept = self._text()[:KEEP]
        tail = kept[self._done :]
        while len(tail) > SEGMENT:
            # Cut within the first SEGMENT characters, read as the display
            # reads them (after a reopened fence): each piece stays small.
            cut, close, reopen = self._split(self._reopen + tail[:SEGMENT])
            cut -= len(self._reopen)
            if cut <= 0:  # one line longer than a segment
                cut, close, reopen = SEGMENT, "", ""
            self._send(tail[:cut], close)
            self._handle, self._sent = None, ""  # the next text goes below it
            self._done += cut
            self._reopen = reopen
            tail = tail[cut:]
        if (tail or self._handle is not None) and tail != self._sent:
            self._send(tail, "")
        hidden = self._length - len(kept)
        if hidden > 0:
            line = {"text/plain": f"… {hidden:,} more characters"}
            if self._more is None:
                self._more = _show(line)
            else:
                self._more.update(line, raw=True)

    def _send(self, raw: str, close: str) -> None:
        self._sent = raw
        markup = self._reopen + raw + close
        if self._handle is None:
            self._handle = _show(self._render(markup, raw, self._count))
            self._count += 1
        else:
            bundle = self._render(markup, raw, self._count - 1)
            self._handle.update(bundle, raw=True)
