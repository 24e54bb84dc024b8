"""Resolve a :class:`CardModel` into what every card part draws.

One place decides which card a call gets, its title (relativized for file
cards, contract §7.3), its terminal cwd and exit label, so the HTML,
Markdown and plain parts never disagree.
"""

from __future__ import annotations

import json
import ntpath
import posixpath
import re
import signal as _signal
from collections.abc import Sequence
from typing import Any, Final

from dsh_nb.cards.hunks import FilePlan, plan_diffs
from dsh_nb.cards.model import CardLimits, CardModel
from dsh_nb.tools.jsonvalue import ABSENT, to_plain
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
    "cap",
    "exit_label",
    "output_tail",
    "pretty_json",
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


def _opaque(value: object) -> str:
    return f"<{type(value).__qualname__}>"


def pretty_json(value: Any, *, compact: bool = False) -> str:
    """Format JSON for reading; a non-JSON leaf shows as ``<TypeName>``."""
    return json.dumps(
        to_plain(value),
        indent=None if compact else 2,
        separators=(",", ":") if compact else None,
        ensure_ascii=False,
        default=_opaque,
    )


def cap(text: str, limit: int) -> tuple[str, str | None]:
    """Cut ``text`` to ``limit`` characters; return it and a notice if cut."""
    if len(text) <= limit:
        return text, None
    return text[:limit], (
        f"truncated: {len(text) - limit:,} of {len(text):,} characters not shown"
    )


def output_tail(text: str, limit: int) -> tuple[str, int]:
    """Keep at most ``limit`` final characters, from a line start if possible.

    Returns the kept text and how many characters were dropped. Terminal
    output is cut from the front: the end (errors, summaries) matters most.
    """
    if len(text) <= limit:
        return text, 0
    start = len(text) - limit
    if text[start - 1] != "\n":
        newline = text.find("\n", start)
        if 0 <= newline < len(text) - 1:
            start = newline + 1
    return text[start:], start


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
        "content",
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
        "raw_input",
        "title",
    )

    def __init__(self, model: CardModel, limits: CardLimits) -> None:
        self.model = model
        self.limits = limits
        call, result = model.call, model.result
        view = result if result is not None else call
        self.kind: str = view.card if view is not None else "generic"
        self.title = _title(model)
        self.raw_input: Any = ABSENT
        self.content: Sequence[Any] | None = None
        self.locations: Sequence[FileLocation] = ()
        if isinstance(call, GenericCallView):
            self.raw_input = call.raw_input
            self.locations = call.locations or ()
            if result is None:
                self.content = call.content
        elif isinstance(call, DiffCallView):
            self.locations = call.locations or ()
        if isinstance(result, GenericResultView):
            self.content = result.content
        kind_name = "other"
        if isinstance(call, GenericCallView) and call.kind is not None:
            kind_name = call.kind.value
        if self.kind != "generic":
            kind_name = "execute" if self.kind == "terminal" else "edit"
        self.icon = ICONS[kind_name]
        terminal = call if isinstance(call, TerminalCallView) else None
        self.description = terminal.description if terminal else None
        self.cwd = None
        if self.kind == "terminal":
            self.cwd = _terminal_cwd(terminal.cwd if terminal else None, model.cwd)
        done = result if isinstance(result, TerminalResultView) else None
        self.output = done.output if done else None
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
