"""Draw a planned file diff as HTML: one unified-diff table per file.

The table has three cells, old numbers, new numbers and the code, each one
``<pre>`` with a line per row; hunk headers, unchanged-region counts and cut
markers are lines of the code cell with blank numbers beside them. Unchanged
rows are bare text, so a row costs a few bytes and a card with hundreds of
hunks stays small; the columns align because no line wraps. Where styles
are stripped (GitHub), the ``<pre>`` columns still read as a diff.
"""

from __future__ import annotations

from typing import Final

from dsh_nb.cards.difftext import gap_text, skip_text
from dsh_nb.cards.escape import esc
from dsh_nb.cards.hunks import FilePlan, Gap, Skip
from dsh_nb.cards.markup import (
    ADD_BG,
    BG_ALT,
    BORDER,
    CODE_FONT,
    CODE_SIZE,
    DEL_BG,
    ERR,
    FG,
    FG_MUTED,
    HUNK_BG,
    OK,
    el,
)

__all__ = ["diff_html"]

_NUM_TD: Final = "padding:0;width:1%;vertical-align:top;text-align:right;border:none"
_CODE_TD: Final = "padding:0;vertical-align:top;text-align:left;border:none"
_PRE: Final = (
    f"margin:0;padding:0 6px;font-family:{CODE_FONT};font-size:{CODE_SIZE};"
    "line-height:1.45;white-space:pre;tab-size:4;border:none;border-radius:0;"
)
_NUM_PRE: Final = _PRE + f"color:{FG_MUTED};background:{BG_ALT};text-align:right"
_CODE_PRE: Final = _PRE + f"color:{FG};background:transparent"
_TABLE: Final = (
    "border-collapse:collapse;border:none;width:100%;margin:0;"
    "table-layout:auto;background:transparent"
)
_LINE: Final = "display:block;margin:0 -6px;padding:0 6px;"
_LINE_STYLE: Final = {
    "-": f"{_LINE}background:{DEL_BG}",
    "+": f"{_LINE}background:{ADD_BG}",
    "\\": f"{_LINE}color:{FG_MUTED}",
    "@": f"{_LINE}background:{HUNK_BG};color:{FG_MUTED}",
    "~": f"{_LINE}color:{FG_MUTED};font-style:italic",
}
_CR: Final = f'<span style="color:{FG_MUTED}">^M</span>'


def _span(kind: str, body: str) -> str:
    return f'<span style="{_LINE_STYLE[kind]}">{body}</span>'


def _table(plan: FilePlan, show_cr: bool) -> str:
    olds: list[str] = []
    news: list[str] = []
    code: list[str] = []

    def note(kind: str, text: str) -> None:
        olds.append("")
        news.append("")
        code.append(_span(kind, esc(text)))

    gap = ""
    for block in plan.blocks:
        if isinstance(block, Gap):
            gap = gap_text(block.count)
            continue
        # An unchanged region before a hunk is counted on its header line.
        note("@", f"{block.header}  {gap}" if gap else block.header)
        gap = ""
        rows = [r for r in block.rows if not isinstance(r, Skip)]
        # One escape per hunk: row texts hold no newline.
        texts = iter(esc("\n".join(r[3] for r in rows)).split("\n"))
        for row in block.rows:
            if isinstance(row, Skip):
                note("~", skip_text(row))
                continue
            kind, old, new, _, cr = row
            text = next(texts)
            olds.append(str(old) if old else "")
            news.append(str(new) if new else "")
            body = text + _CR if cr and show_cr else text
            if kind == " ":
                # A block line ends its own line; bare text needs a newline.
                code.append(f" {body}\n")
            elif kind == "\\":
                code.append(_span(kind, body))
            else:
                code.append(_span(kind, kind + body))
    if gap:
        note("~", gap)
    num = f'<td style="{_NUM_TD}"><pre style="{_NUM_PRE};min-width:{plan.width}ch">\n'
    return (
        f'<table style="{_TABLE}"><tbody><tr>'
        f"{num}{chr(10).join(olds)}</pre></td>{num}{chr(10).join(news)}</pre></td>"
        f'<td style="{_CODE_TD}"><pre style="{_CODE_PRE}">\n{"".join(code)}</pre>'
        "</td></tr></tbody></table>"
    )


def _notice(text: str, colour: str = FG_MUTED) -> str:
    return el(
        "div",
        esc(text),
        f"padding:4px 8px;color:{colour};font-style:italic",
        "dsh-ToolCard-notice",
    )


def _header(plan: FilePlan) -> str:
    stats = ""
    if plan.added or plan.removed:
        stats = el("span", f"+{plan.added:,}", f"color:{OK};margin-left:8px") + el(
            "span", f"\u2212{plan.removed:,}", f"color:{ERR};margin-left:6px"
        )
    tags = "".join(
        el("span", tag, f"color:{FG_MUTED};margin-left:8px;font-style:italic")
        for tag, on in (("new file", plan.new_file), ("CRLF", plan.crlf))
        if on
    )
    return el(
        "div",
        esc(plan.path) + stats + tags,
        f"padding:3px 8px;background:{BG_ALT};border-bottom:1px solid {BORDER};"
        f"font-family:{CODE_FONT};font-size:{CODE_SIZE};overflow-wrap:anywhere",
        "dsh-ToolCard-diffHeader",
    )


def diff_html(plan: FilePlan) -> str:
    """Draw one planned file as a bordered unified-diff block."""
    parts = [_header(plan)]
    if plan.skipped:
        parts.append(_notice(plan.skipped))
    if plan.blocks:
        parts.append(_table(plan, not plan.crlf))
    if plan.truncated:
        parts.append(_notice(plan.truncated, ERR))
    return el(
        "div",
        el("div", "".join(parts), "overflow-x:auto"),
        f"margin:6px 0;border:1px solid {BORDER};border-radius:4px;overflow:hidden",
        "dsh-ToolCard-diff",
    )
