"""``%tool_log --follow FILE``: a journal another process writes, live.

A task on the kernel's event loop polls the file (a :class:`JournalTail`:
whole lines only, truncation and rotation survived) and turns each new call
into a card under the cell that started it, updated in place through its
display handle when the result arrives. A header line names the client
and its session whenever the next card comes from another session.
Re-running the magic, or ``%tool_log --follow --stop``, or unloading the
extension, stops it. The
task never touches a widget and never blocks the loop: a poll is one small
read, then it sleeps.
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.cards.callbook import CallBook, CallEntry
from dsh_nb.cards.callcard import entry_card
from dsh_nb.notebook.replay import client_header
from dsh_nb.tools.audit.journalfile import (
    JournalTail,
    NotRegularFileError,
    open_regular,
)
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.presenter import ToolPresenter

if TYPE_CHECKING:
    from IPython.display import DisplayHandle

    from dsh_nb.notebook.state import KernelState

__all__ = ["INTERVAL", "MAX_CARDS", "Follower", "follow", "run", "stop"]

INTERVAL: Final = 0.2  # seconds between polls
MAX_CARDS: Final = 200  # cards one follow shows; later calls are counted

_followers: weakref.WeakKeyDictionary[KernelState, Follower] = (
    weakref.WeakKeyDictionary()
)
_hooked: weakref.WeakSet[KernelState] = weakref.WeakSet()
_log = logging.getLogger(__name__)


def _display(obj: object, raw: bool = False) -> DisplayHandle | None:
    from IPython.display import display

    show: Callable[..., Any] = display
    handle: DisplayHandle | None = show(obj, raw=raw, display_id=True)
    return handle


class Follower:
    """One followed journal: its tail, its calls, their display handles."""

    def __init__(
        self,
        state: KernelState,
        path: str,
        *,
        interval: float = INTERVAL,
        max_cards: int = MAX_CARDS,
    ) -> None:
        self.path = path
        self.interval = interval
        self.max_cards = max_cards
        self._state = state
        self._tail = JournalTail(path)
        self._book = CallBook()
        self._presenter = ToolPresenter(state.registry)
        self._handles: dict[int, DisplayHandle | None] = {}
        self._last_session: str | None = None
        self._clients: set[str | None] = set()
        self.calls = 0
        self.shown = 0
        self.bad_lines = 0
        self._note = ""
        self._state_text = "following"
        self._status = _display(self._status_bundle(), raw=True)
        self.task: asyncio.Task[None] = asyncio.get_running_loop().create_task(
            self._run(), name=f"dsh_nb follow {path}"
        )

    async def _run(self) -> None:
        try:
            while True:
                try:
                    self.poll()
                except Exception as exc:  # noqa: BLE001 - a bad poll, not the follow
                    _log.warning("follow: a poll failed: %s", error_message(exc))
                    self._set_note(f"a read failed: {error_message(exc)}")
                await asyncio.sleep(self.interval)
        finally:
            self._tail.close()

    def poll(self) -> None:
        """Read what is new and show it (one step of the loop)."""
        try:
            read = self._tail.poll()
        except OSError as exc:
            self._set_note(f"cannot read the file: {exc.strerror or exc}")
            return
        changed = bool(read.notes or read.bad_lines)
        if read.notes:
            self._note = read.notes[-1]
        self.bad_lines += read.bad_lines
        before = self._book.bad
        for event in read.events:
            entry = self._book.add(event)
            if entry is None:
                continue
            try:
                changed = self._show(entry) or changed
            except Exception as exc:  # noqa: BLE001 - one bad card, not the task
                _log.warning("follow: a card failed: %s", error_message(exc))
        if self._book.bad != before:  # events the cards cannot show
            self.bad_lines += self._book.bad - before
            changed = True
        if changed:
            self._refresh()

    def _show(self, entry: CallEntry) -> bool:
        key = id(entry)
        card = entry_card(entry, self._presenter, cwd=self._state.agent.cwd)
        if key in self._handles:
            handle = self._handles[key]
            if handle is not None:
                update: Callable[..., None] = handle.update
                update(card)
            if entry.result is not None or entry.status == "cancelled":
                del self._handles[key]  # settled: nothing more will change it
                self._book.forget(entry)
            return False
        client = entry.client
        self.calls += 1
        self._clients.add(client)
        if self.shown >= self.max_cards:
            self._book.forget(entry)
            return True
        session = entry.session
        if client is not None and session != self._last_session:
            _display(client_header(client, -1, session), raw=True)
        self._last_session = session
        self.shown += 1
        handle = _display(card)
        if entry.result is None and entry.status != "cancelled":
            self._handles[key] = handle
        else:
            self._book.forget(entry)
        return True

    def _set_note(self, note: str) -> None:
        if note != self._note:
            self._note = note
            self._refresh()

    def _status_bundle(self) -> dict[str, str]:
        from dsh_nb.cards.escape import esc, visible

        noun = "call" if self.calls == 1 else "calls"
        parts = [f"{self._state_text} {self.path!r}", f"{self.calls} {noun}"]
        named = [c for c in self._clients if c is not None]
        if named:
            parts.append(f"{len(named)} client{'s' if len(named) != 1 else ''}")
        if self.calls > self.shown:
            hidden = self.calls - self.shown
            parts.append(f"{hidden} not shown (dsh_nb.replay shows all)")
        if self.bad_lines:
            parts.append(f"{self.bad_lines} lines skipped (not journal events)")
        if self._note:
            parts.append(self._note)
        if self._state_text == "following":
            parts.append("stop: %tool_log --follow --stop")
        text = visible(" · ".join(parts))
        html = (
            "<div class='dsh-Follow' style='font-family:var(--jp-ui-font-family,"
            " sans-serif);font-size:12px;color:var(--jp-ui-font-color2, #666)'>"
            f"{esc(text)}</div>"
        )
        return {"text/plain": text, "text/html": html}

    def _refresh(self) -> None:
        if self._status is not None:
            update: Callable[..., None] = self._status.update
            update(self._status_bundle(), raw=True)

    def stop(self) -> None:
        """Cancel the task; the status line says it stopped."""
        if self.task.done() and self._state_text == "stopped":
            return
        self.task.cancel()
        self._tail.close()
        self._state_text = "stopped following"
        self._refresh()
        self._state_text = "stopped"


def follow(state: KernelState, path: str) -> Follower:
    """Follow ``path`` from now on, in the current cell; stop any other."""
    stop(state)
    if os.path.isdir(path):
        raise IsADirectoryError(path)
    if os.path.exists(path):  # a FIFO would block the kernel's loop: refuse it
        open_regular(path).close()
    follower = Follower(state, path)
    if state not in _hooked:  # unloading the extension stops it too
        _hooked.add(state)
        state.disposers.append(lambda: stop(state))
    _followers[state] = follower
    return follower


def stop(state: KernelState) -> bool:
    """Stop the journal ``state`` follows; False if it follows none."""
    return _stop(state)


def _stop(state: KernelState) -> bool:
    follower = _followers.pop(state, None)
    if follower is None:
        return False
    follower.stop()
    return True


def run(state: KernelState, path: str, *, stop: bool = False) -> None:
    """What ``%tool_log --follow [FILE] [--stop]`` does."""
    from IPython.core.error import UsageError

    if stop:
        if path:
            raise UsageError("%tool_log --follow --stop takes no file")
        print("stopped following" if _stop(state) else "not following a journal")
        return
    if not path:
        raise UsageError("%tool_log --follow needs a file: %tool_log --follow FILE")
    try:
        follow(state, path)
    except IsADirectoryError:
        raise UsageError(f"{path!r} is a folder; follow a journal file") from None
    except NotRegularFileError as exc:
        raise UsageError(str(exc)) from None
    except RuntimeError as exc:  # no running loop: %autoawait off, a script
        raise UsageError(f"%tool_log --follow needs the kernel's loop: {exc}") from None
