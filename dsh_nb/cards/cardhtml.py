"""The ``text/html`` part: a self-contained card with inline styles only.

No script, no event handler, no link, no external resource: what works
without JavaScript (``<details>``) does the collapsing. The only tags are
those in :data:`TAGS` and the only attributes ``class``, ``style`` and
``colspan``, all with our own constant values.
"""

from __future__ import annotations

from typing import Final

from dsh_nb.cards.ansi import ansi_to_html_lines
from dsh_nb.cards.bounds import Shown
from dsh_nb.cards.diffhtml import diff_html
from dsh_nb.cards.escape import esc
from dsh_nb.cards.layout import CardLayout
from dsh_nb.cards.markup import (
    BG,
    BORDER,
    CODE_FONT,
    CODE_SIZE,
    ERR,
    FG,
    FG_MUTED,
    INFO,
    OK,
    PILL,
    PRE_STYLE,
    THEME_STYLE,
    UI_FONT,
    WARN,
    el,
    pill,
    pre,
)
from dsh_nb.cards.media import PICTURE_TYPES
from dsh_nb.cards.tables import table_html, table_of
from dsh_nb.cards.talk import talk_html

__all__ = ["TAGS", "card_html"]

TAGS: Final = frozenset(
    {
        "div",
        "span",
        "pre",
        "details",
        "summary",
        "table",
        "tbody",
        "tr",
        "td",
        "ul",
        "li",
    }
)
STATUS_COLOURS: Final = {
    "pending": FG_MUTED,
    "awaiting-approval": WARN,
    "running": INFO,
    "done": OK,
    "denied": ERR,
    "error": ERR,
    "timed-out": ERR,
    "cancelled": FG_MUTED,
}
STATUS_PILLS: Final = {
    "pending": PILL["muted"],
    "awaiting-approval": PILL["warn"],
    "running": PILL["info"],
    "done": PILL["ok"],
    "denied": PILL["err"],
    "error": PILL["err"],
    "timed-out": PILL["err"],
    "cancelled": PILL["muted"],
}
_MUTED: Final = f"color:{FG_MUTED}"
_SUMMARY: Final = f"cursor:pointer;color:{FG_MUTED};margin:2px 0"
_SECTION: Final = "margin:4px 0"
_FLAT_PRE: Final = PRE_STYLE.replace("border-radius:3px", "border-radius:0")
_TD: Final = "padding:1px 8px;text-align:left;vertical-align:top;border:none"


def _notice(text: str, colour: str = FG_MUTED) -> str:
    return el("div", esc(text), f"color:{colour};font-style:italic;margin:2px 0")


def _header(card: CardLayout) -> str:
    model = card.model
    colour = PILL["err"] if model.is_error else STATUS_PILLS[model.status]
    font = CODE_FONT if card.kind == "terminal" else UI_FONT
    parts = [
        el("span", esc(card.icon), "flex:none", "dsh-ToolCard-icon"),
        el(
            "span",
            esc(card.title),
            f"font-weight:600;font-family:{font};overflow-wrap:anywhere;"
            "flex:1 1 auto;min-width:0",
            "dsh-ToolCard-title",
        ),
    ]
    if model.tool and model.tool != card.title:
        parts.append(
            el(
                "span",
                esc(model.tool),
                f"{_MUTED};font-family:{CODE_FONT};font-size:11px",
                "dsh-ToolCard-tool",
            )
        )
    parts.append(pill(model.status, colour, "dsh-ToolCard-status"))
    if model.approval is not None:
        good = model.approval == "allowed-once"
        parts.append(
            pill(
                f"approval: {model.approval}",
                PILL["ok"] if good else PILL["warn"],
                "dsh-ToolCard-approval",
            )
        )
    if card.exit is not None:
        label, success = card.exit
        parts.append(
            pill(label, PILL["ok"] if success else PILL["err"], "dsh-ToolCard-exit")
        )
    return el(
        "div",
        "".join(parts),
        "display:flex;align-items:center;gap:8px;flex-wrap:wrap;padding:4px 8px",
        "dsh-ToolCard-header",
    )


def _terminal(card: CardLayout) -> list[str]:
    out = []
    if card.description is not None:
        out.append(el("div", esc(card.description), f"{_MUTED};{_SECTION}"))
    if card.cwd is not None:
        out.append(
            el(
                "div",
                esc(f"cwd: {card.cwd}"),
                f"{_MUTED};font-family:{CODE_FONT};font-size:{CODE_SIZE}",
                "dsh-ToolCard-cwd",
            )
        )
    if card.output is None:
        return out
    text, dropped = card.output, card.output_dropped
    if dropped:
        out.append(
            _notice(
                f"output truncated: the first {dropped:,} of "
                f"{card.output_total:,} characters are not shown",
                ERR,
            )
        )
    lines = ansi_to_html_lines(text)
    if lines and not lines[-1]:
        lines.pop()
    if not lines:
        out.append(_notice("(no output)"))
        return out
    keep = card.limits.max_output_lines
    if len(lines) > keep:
        hidden = lines[:-keep]
        summary = el(
            "summary",
            esc(
                f"show all {len(lines):,} lines ({len(hidden):,} earlier lines hidden)"
            ),
            _SUMMARY,
        )
        body = pre("\n".join(hidden), "dsh-ToolCard-output", _FLAT_PRE)
        out.append(el("details", summary + body, "", "dsh-ToolCard-more"))
        lines = lines[-keep:]
    out.append(pre("\n".join(lines), "dsh-ToolCard-output", _FLAT_PRE))
    return out


def _media(block: Shown) -> str:
    caption = el(
        "div",
        esc(block.caption or ""),
        f"{_MUTED};margin:2px 0",
        "dsh-ToolCard-caption",
    )
    if block.picture is None or block.mime not in PICTURE_TYPES:
        return caption
    # The type is a raster one and the data plain base64 (media.describe):
    # the URL can hold no quote and no script.
    src = f"data:{block.mime};base64,{block.picture}"
    return caption + (
        f'<img class="dsh-ToolCard-image" src="{esc(src)}" '
        f'alt="{esc(block.caption or "image")}" style="max-width:100%">'
    )


def _block(block: Shown, error: bool) -> str:
    if block.caption is not None:
        media = _media(block)
        if block.text:
            media += pre(esc(block.text), "dsh-ToolCard-content", PRE_STYLE)
        return media + (_notice(block.notice, ERR) if block.notice else "")
    if not block.text and block.notice:
        return _notice(block.notice, ERR)
    shape = None if error or block.notice else table_of(block.text)
    if shape is not None:
        return table_html(shape, block.text)
    style = PRE_STYLE + (f";border-left:3px solid {ERR}" if error else "")
    html = pre(esc(block.text), "dsh-ToolCard-content", style)
    return html + (_notice(block.notice, ERR) if block.notice else "")


def _generic(card: CardLayout) -> list[str]:
    out = []
    if card.locations:
        items = "".join(
            el("li", esc(loc.path if loc.line is None else f"{loc.path}:{loc.line}"))
            for loc in card.locations
        )
        out.append(
            el(
                "ul",
                items,
                f"margin:4px 0;padding-left:20px;font-family:{CODE_FONT};"
                f"font-size:{CODE_SIZE}",
                "dsh-ToolCard-locations",
            )
        )
    if card.raw is not None:
        raw = card.raw
        summary = el("summary", "input", _SUMMARY)
        body = pre(esc(raw.text)) + (_notice(raw.notice, ERR) if raw.notice else "")
        out.append(el("details", summary + body, _SECTION, "dsh-ToolCard-input"))
    for block in card.blocks:
        out.append(_block(block, card.model.is_error))
    return out


def _failure(card: CardLayout) -> str:
    """What the body raised: its type and message, the traceback folded."""
    failure = card.model.failure
    assert failure is not None
    limit = card.limits.max_output_chars
    head = f"{failure.type}: {failure.message}"[:limit]
    summary = el("summary", esc(f"{head} (traceback)"), f"{_SUMMARY};color:{ERR}")
    body = pre(esc(failure.traceback[-limit:]), "dsh-ToolCard-traceback")
    return el("details", summary + body, _SECTION, "dsh-ToolCard-failure")


def _trace(card: CardLayout) -> str:
    rows = []
    for entry in card.model.trace:
        decision = entry.decision
        colour = (
            ERR if decision.startswith("deny") else OK if decision == "allow" else FG
        )
        rows.append(
            "<tr>"
            + el("td", esc(entry.stage), _TD)
            + el("td", esc(entry.actor), f"{_TD};font-family:{CODE_FONT}")
            + el("td", esc(decision), f"{_TD};color:{colour}")
            + "</tr>"
        )
    table = el(
        "table",
        el("tbody", "".join(rows)),
        f"border-collapse:collapse;margin:2px 0;font-size:12px;color:{FG}",
    )
    summary = el("summary", esc(f"trace ({len(rows)})"), _SUMMARY)
    return el("details", summary + table, _SECTION, "dsh-ToolCard-trace")


def card_html(card: CardLayout) -> str:
    """Draw the whole card."""
    model = card.model
    sections = []
    if card.kind == "terminal":
        sections.extend(_terminal(card))
    sections.extend(_generic(card))
    if card.kind == "diff":
        plans = card.plans()
        sections.extend(diff_html(plan) for plan in plans)
        if not plans:
            sections.append(_notice("no file changes"))
    if model.talk is not None and not model.talk.empty:
        sections.append(talk_html(model.talk))
    if model.failure is not None:
        sections.append(_failure(card))
    if model.trace:
        sections.append(_trace(card))
    border = ERR if model.is_error else STATUS_COLOURS[model.status]
    root = (
        f"font-family:{UI_FONT};font-size:13px;line-height:1.4;color:{FG};"
        f"background:{BG};border:1px solid {BORDER};border-left:3px solid {border};"
        "border-radius:4px;margin:4px 0;overflow:hidden;text-align:left"
    )
    body = ""
    if sections:
        body = el(
            "div",
            "".join(sections),
            f"padding:4px 8px 6px;border-top:1px solid {BORDER}",
            "dsh-ToolCard-body",
        )
    # mathjax_ignore: JupyterLab would typeset "$HOME $PATH" in tool text.
    cls = f"dsh-ToolCard dsh-mod-{esc(model.status)} mathjax_ignore tex2jax_ignore"
    head = THEME_STYLE + _header(card)
    return f'<div class="{cls}" style="{root}">{head}{body}</div>'
