"""What a running tool told its card: a progress bar and its log lines.

A tool's ``ToolContext`` reports progress and lines (``ctx.log``, what it
printed, its ``logging`` records and warnings); the card keeps the latest
progress and the last ``MAX_CARD_LINES`` lines (:class:`CardTalk`, a
frozen value, so a card is rendered from a snapshot) and draws them in
every form: the JSON payload's ``talk``, the HTML fallback (a bar, and the
lines folded under a summary once there are more than a few), and plain
text and Markdown.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final

from dsh_nb.cards.escape import esc
from dsh_nb.cards.markup import BG_ALT, BORDER, ERR, FG_MUTED, INFO, WARN, el, pre
from dsh_nb.tools.context.values import LogLine, Progress

__all__ = [
    "MAX_CARD_LINES",
    "CardTalk",
    "sample_lines",
    "talk_html",
    "talk_json",
    "talk_text",
]

#: The lines a card keeps (the newest); older ones are counted.
MAX_CARD_LINES: Final = 200
#: Up to this many lines show open; more fold under a summary.
OPEN_LINES: Final = 6
_LEVEL_COLOURS: Final = {"warning": WARN, "error": ERR, "critical": ERR}
#: Lines of a sample's prompt or reply a card shows; the rest are counted.
SAMPLE_LINES: Final = 20
#: Characters of one shown line of a sample.
SAMPLE_LINE_CHARS: Final = 500


@dataclass(frozen=True, slots=True)
class CardTalk:
    """A card's snapshot of what its call said while it ran."""

    progress: Progress | None = None
    lines: tuple[LogLine, ...] = ()
    hidden: int = 0  # older lines the card no longer holds

    def with_progress(self, report: Progress) -> CardTalk:
        return dataclasses.replace(self, progress=report)

    def with_line(self, line: LogLine) -> CardTalk:
        lines = (*self.lines, line)
        hidden = self.hidden
        if len(lines) > MAX_CARD_LINES:
            lines, hidden = lines[1:], hidden + 1
        return CardTalk(self.progress, lines, hidden)

    @property
    def empty(self) -> bool:
        return self.progress is None and not self.lines


def _counts(report: Progress) -> str:
    done = f"{report.done:g}"
    return done if report.total is None else f"{done} / {report.total:g}"


def talk_json(talk: CardTalk) -> dict[str, Any]:
    """The payload's ``talk``: ``progress``, ``lines``, ``hiddenLines``."""
    out: dict[str, Any] = {}
    if talk.progress is not None:
        out["progress"] = talk.progress.to_json()
    if talk.lines:
        out["lines"] = [line.to_json() for line in talk.lines]
    if talk.hidden:
        out["hiddenLines"] = talk.hidden
    return out


def _bar(report: Progress) -> str:
    fraction = report.fraction
    label = _counts(report)
    if report.message:
        label += f" · {report.message}"
    track = (
        f"height:6px;background:{BG_ALT};border:1px solid {BORDER};border-radius:3px"
    )
    if fraction is None:
        inner = ""  # unknown total: the count says it all
    else:
        width = f"{fraction * 100:.1f}%"
        fill = f"height:100%;width:{width};background:{INFO};border-radius:2px"
        inner = el("div", "", fill)
    return el(
        "div",
        el("div", inner, track)
        + el("div", esc(label), f"color:{FG_MUTED};font-size:12px"),
        "margin:4px 0",
        "dsh-ToolCard-progress",
    )


def _line_html(line: LogLine) -> str:
    colour = _LEVEL_COLOURS.get(line.level)
    text = esc(line.text)
    if line.source == "logging" and line.logger:
        text = esc(f"{line.logger}: ") + text
    return el("span", text, f"color:{colour}") if colour else text


def talk_html(talk: CardTalk) -> str:
    """The HTML fallback's section: the bar, then the lines (folded if many)."""
    parts = []
    if talk.progress is not None:
        parts.append(_bar(talk.progress))
    if talk.lines:
        body = "\n".join(_line_html(line) for line in talk.lines)
        if talk.hidden:
            body = esc(f"… {talk.hidden} earlier lines\n") + body
        block = pre(body, "dsh-ToolCard-log")
        count = len(talk.lines) + talk.hidden
        if count > OPEN_LINES:
            summary = el(
                "summary",
                esc(f"log ({count} lines)"),
                f"cursor:pointer;color:{FG_MUTED};margin:2px 0",
            )
            block = el("details", summary + block, "margin:4px 0")
        parts.append(block)
    return "".join(parts)


def talk_text(talk: CardTalk, *, last: int = OPEN_LINES) -> str:
    """Plain text: the progress line and the last few lines."""
    out = []
    if talk.progress is not None:
        report = talk.progress
        fraction = report.fraction
        share = "" if fraction is None else f" ({fraction:.0%})"
        message = f" {report.message}" if report.message else ""
        out.append(f"progress: {_counts(report)}{share}{message}")
    shown = talk.lines[-last:]
    earlier = len(talk.lines) - len(shown) + talk.hidden
    if earlier:
        out.append(f"… {earlier} earlier lines")
    out.extend(line.text for line in shown)
    return "\n".join(out)


def sample_lines(label: str, text: str, level: str = "info") -> list[LogLine]:
    """A sample's prompt or reply as a card's lines (source ``"sample"``).

    ``label`` starts the first line ("asks the model", "the model
    answered"); at most ``SAMPLE_LINES`` lines of ``SAMPLE_LINE_CHARS``
    are shown, then "… N more lines". The live card and a replayed one
    draw the same lines.
    """
    lines = text.splitlines() or [""]
    shown = [
        line if len(line) <= SAMPLE_LINE_CHARS else line[:SAMPLE_LINE_CHARS] + "…"
        for line in lines[:SAMPLE_LINES]
    ]
    shown[0] = f"{label}: {shown[0]}"
    if len(lines) > SAMPLE_LINES:
        shown.append(f"… {len(lines) - SAMPLE_LINES} more lines")
    return [LogLine(level, line, "sample") for line in shown]
