"""Resolve a :class:`CardModel` into what every card part draws.

One place decides which card a call gets, its title (relativized for file
cards, contract §7.3), its terminal cwd and exit label, so the HTML,
Markdown and plain parts never disagree.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
import signal as _signal
from collections.abc import Sequence
from typing import Any, Final

from dsh_nb.cards.bounds import Shown, bound_blocks, bound_value, cap, output_tail
from dsh_nb.cards.hunks import FilePlan, plan_diffs
from dsh_nb.cards.model import CardLimits, CardModel
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.presentation import (
    DiffCallView,
    DiffResultView,
    FileDiff,
    FileLocation,
    GenericCallView,
    GenericResultView,
    TerminalCallView,
    TerminalResultView,
)
from dsh_nb.tools.presenter import relativize_title

__all__ = [
    "ICONS",
    "CardLayout",
    "exit_label",
    "signal_name",
]

# Symbols common fonts have (DejaVu, Menlo, Segoe UI Symbol), not emoji.
ICONS: Final = {
    "read": "\u2630",
    "edit": "\u270e",
    "delete": "\u2716",
    "move": "\u21c4",
    "search": "\u26b2",
    "execute": "\u25b6",
    "fetch": "\u2913",
    "other": "\u25c6",
}
_WIN_ABS: Final = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")


def signal_name(value: str) -> str:
    """Name a signal: ``"15"`` and ``"TERM"`` both give ``"SIGTERM"``."""
    text = value.strip()
    if text.isascii() and text.isdigit() and len(text) < 4:
        try:
            return _signal.Signals(int(text)).name
        except ValueError:
            return f"signal {text}"
    if text.isascii() and text.isalpha() and not text.upper().startswith("SIG"):
        return "SIG" + text.upper()
    return text


def exit_label(exit_code: int | None, signal: str | None) -> tuple[str, bool] | None:
    """Return the exit pill's text and whether it is a success, if any."""
    if signal is not None:
        return signal_name(signal), False
    if exit_code is None:
        return None
    if exit_code < 0:
        return f"{signal_name(str(-exit_code))} (exit {exit_code})", False
    return f"exit {exit_code}", exit_code == 0


def _short(text: str, limit: int) -> str:
    """Cut a one-line field (title, cwd) to the limit, saying how much."""
    head, notice = cap(text, limit)
    return head if notice is None else f"{head}\u2026 [{notice}]"


def _is_abs(path: str) -> bool:
    return path.startswith("/") or _WIN_ABS.match(path) is not None


def _terminal_cwd(view_cwd: str | None, session_cwd: str | None) -> str | None:
    # Inside the session's folder a cwd is shown relative to it, as titles
    # are: a saved notebook then holds no machine's absolute path.
    if view_cwd is None:
        return session_cwd
    if session_cwd is None or not _is_abs(session_cwd):
        return view_cwd
    module: Any = posixpath if session_cwd.startswith("/") else ntpath
    joined: str = module.normpath(module.join(session_cwd, view_cwd))
    inside: str = module.relpath(joined, session_cwd)
    if inside == module.pardir or inside.startswith(module.pardir + module.sep):
        return view_cwd if _is_abs(view_cwd) else joined
    return inside


def _relativize(title: str, path: str | None, cwd: str | None) -> str:
    if path is None or cwd is None:
        return title
    return relativize_title(title, path, cwd)


def _title(model: CardModel) -> str:
    call, result = model.call, model.result
    if result is not None and result.title is not None:
        if isinstance(result, DiffResultView) and result.diffs:
            return _relativize(result.title, result.diffs[0].path, model.cwd)
        return result.title
    if isinstance(call, GenericCallView):
        path = call.locations[0].path if call.locations else None
        return _relativize(call.title, path, model.cwd)
    if isinstance(call, DiffCallView):
        if call.locations:
            return _relativize(call.title, call.locations[0].path, model.cwd)
        path = call.diffs[0].path if call.diffs else None
        return _relativize(call.title, path, model.cwd)
    if call is not None:
        return call.title
    return model.tool or "tool call"


class CardLayout:
    """A model resolved for drawing; diff plans are computed on first use."""

    __slots__ = (
        "_plans",
        "blocks",
        "cwd",
        "description",
        "diffs",
        "exit",
        "icon",
        "kind",
        "limits",
        "locations",
        "model",
        "output",
        "output_dropped",
        "output_total",
        "raw",
        "title",
    )

    def __init__(self, model: CardModel, limits: CardLimits) -> None:
        self.model = model
        self.limits = limits
        call, result = model.call, model.result
        view = result if result is not None else call
        self.kind: str = view.card if view is not None else "generic"
        limit = limits.max_output_chars
        self.title = _short(_title(model), limit)
        raw_input: Any = ABSENT
        content: Sequence[Any] | None = None
        self.locations: Sequence[FileLocation] = ()
        if isinstance(call, GenericCallView):
            raw_input = call.raw_input
            self.locations = call.locations or ()
            if result is None:
                content = call.content
        elif isinstance(call, DiffCallView):
            self.locations = call.locations or ()
        if isinstance(result, GenericResultView):
            content = result.content
        self.blocks: list[Shown] = bound_blocks(content or (), limit)
        self.raw: Shown | None = None
        if raw_input is not ABSENT and self.kind == "generic":
            self.raw = bound_value(raw_input, limit)
        kind_name = "other"
        if isinstance(call, GenericCallView) and call.kind is not None:
            kind_name = call.kind.value
        if self.kind != "generic":
            kind_name = "execute" if self.kind == "terminal" else "edit"
        self.icon = ICONS[kind_name]
        terminal = call if isinstance(call, TerminalCallView) else None
        description = terminal.description if terminal else None
        self.description = None if description is None else _short(description, limit)
        self.cwd = None
        if self.kind == "terminal":
            cwd = _terminal_cwd(terminal.cwd if terminal else None, model.cwd)
            self.cwd = None if cwd is None else _short(cwd, limit)
        done = result if isinstance(result, TerminalResultView) else None
        self.output: str | None = None
        self.output_dropped = self.output_total = 0
        if done is not None and done.output is not None:
            self.output, self.output_dropped = output_tail(done.output, limit)
            self.output_total = len(done.output)
        self.exit = exit_label(done.exit_code, done.signal) if done else None
        self.diffs: Sequence[FileDiff] = ()
        if isinstance(result, DiffResultView):
            self.diffs = result.diffs
        elif isinstance(call, DiffCallView) and result is None:
            self.diffs = call.diffs
        self._plans: list[FilePlan] | None = None

    def plans(self) -> list[FilePlan]:
        """Plan the diffs once for both the HTML and the text parts."""
        if self._plans is None:
            self._plans = plan_diffs(self.diffs, self.limits)
        return self._plans
