"""Draw a planned file diff as HTML: a unified-diff table per hunk.

Each hunk is a table of three cells, old numbers, new numbers and the code,
each holding one ``<pre>`` with a line per row. Unchanged rows are bare text,
so a row costs a few bytes and a 2,000-row diff stays small; the columns
align because no line wraps. Where styles are stripped (GitHub), the
``<pre>`` columns still read as a diff.
"""

from __future__ import annotations

from typing import Final

from dsh_nb.cards.escape import esc
from dsh_nb.cards.hunks import NO_EOL, FilePlan, Gap, Hunk, Row, gap_rows
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
}
_MARK_STYLE: Final = _LINE_STYLE["\\"]
_CR: Final = f'<span style="color:{FG_MUTED}">^M</span>'
_HUNK_TD: Final = (
    f"padding:2px 6px;text-align:left;background:{HUNK_BG};color:{FG_MUTED};"
    f"font-family:{CODE_FONT};font-size:{CODE_SIZE};white-space:pre;border:none"
)
_SUMMARY: Final = (
    f"cursor:pointer;padding:1px 6px;color:{FG_MUTED};background:{BG_ALT};"
    f"font-family:{CODE_FONT};font-size:{CODE_SIZE}"
)


def _table(olds: str, news: str, code: str, width: int, header: str) -> str:
    num = f'<td style="{_NUM_TD}"><pre style="{_NUM_PRE};min-width:{width}ch">\n'
    head = ""
    if header:
        head = f'<tr><td colspan="3" style="{_HUNK_TD}">{esc(header)}</td></tr>'
    return (
        f'<table style="{_TABLE}"><tbody>{head}<tr>'
        f"{num}{olds}</pre></td>{num}{news}</pre></td>"
        f'<td style="{_CODE_TD}"><pre style="{_CODE_PRE}">\n{code}</pre></td>'
        "</tr></tbody></table>"
    )


def _rows_table(rows: list[Row], width: int, show_cr: bool, header: str) -> str:
    olds: list[str] = []
    news: list[str] = []
    code: list[str] = []
    # One escape for the whole table: row texts hold no newline.
    texts = esc("\n".join(row[3] for row in rows)).split("\n")
    for (kind, old, new, _, cr), text in zip(rows, texts, strict=True):
        olds.append(str(old) if old else "")
        news.append(str(new) if new else "")
        body = text + _CR if cr and show_cr else text
        if kind == " ":
            # A block line ends its own line; bare text needs a newline.
            code.append(f" {body}\n")
        elif kind == "\\":
            code.append(f'<span style="{_LINE_STYLE[kind]}">{body}</span>')
        else:
            code.append(f'<span style="{_LINE_STYLE[kind]}">{kind}{body}</span>')
    return _table("\n".join(olds), "\n".join(news), "".join(code), width, header)


def _gap_table(plan: FilePlan, gap: Gap, show_cr: bool) -> str:
    """Draw an unchanged region with whole-string operations, not per row."""
    start, stop = gap.old_start, gap.old_start + gap.count
    text = "\n".join(plan.old_lines[start:stop]).removesuffix("\x00")
    if "\r" in text and show_cr:
        return _rows_table(gap_rows(plan, gap), plan.width, show_cr, "")
    shift = gap.new_start - gap.old_start
    olds = "\n".join(map(str, range(start + 1, stop + 1)))
    news = "\n".join(map(str, range(start + 1 + shift, stop + 1 + shift)))
    code = " " + esc(text.removesuffix("\r")).replace("\n", "\n ") + "\n"
    if gap.ends_file(plan):
        olds += "\n"
        news += "\n"
        code += f'<span style="{_MARK_STYLE}">{esc(NO_EOL)}</span>'
    return _table(olds, news, code, plan.width, "")


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


def _gap(plan: FilePlan, block: Gap, show_cr: bool) -> str:
    label = f"\u22ef {block.count:,} unchanged line{'s' * (block.count != 1)}"
    if not block.included:
        return el("div", esc(label + " (not included)"), _SUMMARY, "dsh-ToolCard-gap")
    summary = el("summary", esc(label), _SUMMARY)
    table = _gap_table(plan, block, show_cr)
    return el("details", summary + table, "", "dsh-ToolCard-gap")


def diff_html(plan: FilePlan) -> str:
    """Draw one planned file as a bordered unified-diff block."""
    parts = [_header(plan)]
    if plan.skipped:
        parts.append(_notice(plan.skipped))
    show_cr = not plan.crlf
    for block in plan.blocks:
        if isinstance(block, Hunk):
            parts.append(_rows_table(block.rows, plan.width, show_cr, block.header))
        else:
            parts.append(_gap(plan, block, show_cr))
    if plan.truncated:
        parts.append(_notice(plan.truncated, ERR))
    return el(
        "div",
        el("div", "".join(parts), "overflow-x:auto"),
        f"margin:6px 0;border:1px solid {BORDER};border-radius:4px;overflow:hidden",
        "dsh-ToolCard-diff",
    )
