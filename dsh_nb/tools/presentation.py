"""The card vocabulary: how a tool wants one call shown in a UI.

``present_call(args)`` returns a call view (pending state) and
``present_result(args, result)`` a result view (completed state). Both unions
are closed and discriminated by ``card``; ``to_json`` gives the wire form
(``rawInput``, ``exitCode``, ``oldText``, ``newText``) that the card MIME type
and session logs carry, and :func:`view_from_json` reads it back on replay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar, Literal

from dsh_nb.tools.jsonvalue import ABSENT, to_plain

__all__ = [
    "DiffCallView",
    "DiffResultView",
    "FileDiff",
    "FileLocation",
    "GenericCallView",
    "GenericResultView",
    "TerminalCallView",
    "TerminalResultView",
    "ToolCallKind",
    "ToolCallView",
    "ToolResultView",
    "view_from_json",
]


class ToolCallKind(str, Enum):
    """Picks the icon of a generic card."""

    READ = "read"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"
    SEARCH = "search"
    EXECUTE = "execute"
    FETCH = "fetch"
    OTHER = "other"

    def __str__(self) -> str:
        return self.value


def _kind(value: object) -> ToolCallKind | None:
    if value is None:
        return None
    try:
        return ToolCallKind(value)
    except ValueError:
        names = ", ".join(k.value for k in ToolCallKind)
        raise ValueError(f"kind must be one of {names}; got {value!r}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class FileLocation:
    """A file the call reads or modifies; ``line`` is 1-based."""

    path: str
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path}
        if self.line is not None:
            out["line"] = self.line
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FileLocation:
        return cls(path=data["path"], line=data.get("line"))


@dataclass(frozen=True, slots=True, kw_only=True)
class FileDiff:
    """One file's change; ``old_text=None`` is a new file (or unknown before)."""

    path: str
    old_text: str | None
    new_text: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "oldText": self.old_text, "newText": self.new_text}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FileDiff:
        return cls(
            path=data["path"], old_text=data.get("oldText"), new_text=data["newText"]
        )


def _locations(value: Sequence[Any] | None) -> tuple[FileLocation, ...] | None:
    if value is None:
        return None
    return tuple(
        v if isinstance(v, FileLocation) else FileLocation.from_json(v) for v in value
    )


def _diffs(value: Sequence[Any]) -> tuple[FileDiff, ...]:
    return tuple(v if isinstance(v, FileDiff) else FileDiff.from_json(v) for v in value)


def _blocks(value: Sequence[Any] | None) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


@dataclass(frozen=True, slots=True, kw_only=True)
class GenericCallView:
    """The default pending card: a title, an icon, the salient input."""

    card: ClassVar[Literal["generic"]] = "generic"
    title: str
    kind: ToolCallKind | None = None
    raw_input: Any = ABSENT
    content: Sequence[Any] | None = None
    locations: Sequence[FileLocation] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _kind(self.kind))
        object.__setattr__(self, "content", _blocks(self.content))
        object.__setattr__(self, "locations", _locations(self.locations))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"card": "generic", "title": self.title}
        if self.kind is not None:
            out["kind"] = self.kind.value
        if self.raw_input is not ABSENT:
            out["rawInput"] = to_plain(self.raw_input)
        if self.content is not None:
            out["content"] = [to_plain(b) for b in self.content]
        if self.locations is not None:
            out["locations"] = [loc.to_json() for loc in self.locations]
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalCallView:
    """A foreground shell command, shown as a terminal."""

    card: ClassVar[Literal["terminal"]] = "terminal"
    title: str
    description: str | None = None
    cwd: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"card": "terminal", "title": self.title}
        if self.description is not None:
            out["description"] = self.description
        if self.cwd is not None:
            out["cwd"] = self.cwd
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffCallView:
    """A file create or modify, shown as an inline diff."""

    card: ClassVar[Literal["diff"]] = "diff"
    title: str
    diffs: Sequence[FileDiff] = field(default_factory=tuple)
    locations: Sequence[FileLocation] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "diffs", _diffs(self.diffs))
        object.__setattr__(self, "locations", _locations(self.locations))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"card": "diff", "title": self.title}
        out["diffs"] = [d.to_json() for d in self.diffs]
        if self.locations is not None:
            out["locations"] = [loc.to_json() for loc in self.locations]
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class GenericResultView:
    """The default completed card; ``content=None`` shows the raw result."""

    card: ClassVar[Literal["generic"]] = "generic"
    title: str | None = None
    content: Sequence[Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "content", _blocks(self.content))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"card": "generic"}
        if self.title is not None:
            out["title"] = self.title
        if self.content is not None:
            out["content"] = [to_plain(b) for b in self.content]
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class TerminalResultView:
    """A completed command: its output and exit status (or signal)."""

    card: ClassVar[Literal["terminal"]] = "terminal"
    title: str | None = None
    output: str | None = None
    exit_code: int | None = None
    signal: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"card": "terminal"}
        if self.title is not None:
            out["title"] = self.title
        if self.output is not None:
            out["output"] = self.output
        if self.exit_code is not None:
            out["exitCode"] = self.exit_code
        if self.signal is not None:
            out["signal"] = self.signal
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class DiffResultView:
    """The applied change, even when it repeats the call-time diff."""

    card: ClassVar[Literal["diff"]] = "diff"
    title: str | None = None
    diffs: Sequence[FileDiff] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "diffs", _diffs(self.diffs))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"card": "diff"}
        if self.title is not None:
            out["title"] = self.title
        out["diffs"] = [d.to_json() for d in self.diffs]
        return out


ToolCallView = GenericCallView | TerminalCallView | DiffCallView
ToolResultView = GenericResultView | TerminalResultView | DiffResultView

_CALL_VIEWS: dict[str, type[Any]] = {
    "generic": GenericCallView,
    "terminal": TerminalCallView,
    "diff": DiffCallView,
}
_RESULT_VIEWS: dict[str, type[Any]] = {
    "generic": GenericResultView,
    "terminal": TerminalResultView,
    "diff": DiffResultView,
}
_WIRE_TO_FIELD = {
    "rawInput": "raw_input",
    "exitCode": "exit_code",
}


def view_from_json(
    data: Mapping[str, Any], *, result: bool
) -> ToolCallView | ToolResultView:
    """Build a call view (``result=False``) or result view from its wire form.

    An unknown ``card`` tag raises ``ValueError``: the union is closed.
    """
    table = _RESULT_VIEWS if result else _CALL_VIEWS
    card = data.get("card")
    cls = table.get(card) if isinstance(card, str) else None
    if cls is None:
        raise ValueError(f"unknown card {card!r}; expected one of {', '.join(table)}")
    kwargs = {_WIRE_TO_FIELD.get(k, k): v for k, v in data.items() if k != "card"}
    view: ToolCallView | ToolResultView = cls(**kwargs)
    return view
