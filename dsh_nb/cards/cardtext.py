"""The ``text/markdown`` and ``text/plain`` parts of a card.

Tool text in Markdown sits either inside a fence longer than any backtick run
it contains, or on a line where every ASCII punctuation character is
backslash-escaped, so it can open no link, image, HTML tag or fence. Both
parts make control characters visible (:func:`visible`), so a plain-text
console showing the card is never driven by escape sequences from a tool.
"""

from __future__ import annotations

import re
from typing import Final

from dsh_nb.cards.ansi import strip_ansi
from dsh_nb.cards.bounds import Shown
from dsh_nb.cards.difftext import diff_text
from dsh_nb.cards.escape import visible
from dsh_nb.cards.layout import CardLayout
from dsh_nb.cards.talk import talk_text

__all__ = ["card_markdown", "card_plain", "fence", "md_inline"]

_PUNCT: Final = re.compile(r"([!-/:-@\[-`{-~])")
_TICKS: Final = re.compile(r"`+")
_INLINE_MAX: Final = 80


def md_inline(text: str) -> str:
    """Make ``text`` literal on one Markdown line."""
    return _PUNCT.sub(r"\\\1", visible(text).replace("\n", " "))


def fence(body: str, info: str = "") -> str:
    """Fence ``body`` with more backticks than any run inside it."""
    longest = max((len(run) for run in _TICKS.findall(body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{body}\n{ticks}"


def _output_tail(card: CardLayout) -> tuple[str, str | None]:
    """Return the bounded output without escapes, and the notice if cut."""
    text = strip_ansi(card.output or "")
    if not card.output_dropped:
        return text, None
    return text, (
        f"output truncated: the first {card.output_dropped:,} of "
        f"{card.output_total:,} characters are not shown"
    )


def card_markdown(card: CardLayout) -> str:
    """Draw the card as Markdown: a heading, a status line, fenced text."""
    model = card.model
    status = [md_inline(model.status)]
    if card.exit is not None:
        status.append(md_inline(card.exit[0]))
    if model.approval is not None:
        status.append(md_inline(f"approval: {model.approval}"))
    if model.tool and model.tool != card.title:
        status.append(md_inline(f"tool: {model.tool}"))
    parts = [
        f"#### {card.icon} {md_inline(card.title)}",
        "*" + " · ".join(status) + "*",
    ]
    if card.kind == "terminal":
        if card.description is not None:
            parts.append(md_inline(card.description))
        if card.cwd is not None:
            parts.append(md_inline(f"cwd: {card.cwd}"))
        if card.output is not None:
            text, notice = _output_tail(card)
            if notice:
                parts.append(f"*{md_inline(notice)}*")
            parts.append(fence(visible(text.rstrip("\n")), "console"))
    for loc in card.locations:
        where = loc.path if loc.line is None else f"{loc.path}:{loc.line}"
        parts.append(f"- {md_inline(where)}")
    if card.raw is not None and not card.blocks:
        parts.append(fence(visible(card.raw.text), card.raw.info))
        if card.raw.notice:
            parts.append(f"*{md_inline(card.raw.notice)}*")
    for block in card.blocks:
        if block.caption is not None:
            parts.append(f"*{md_inline(block.caption)}*")
            if block.text:
                parts.append(fence(visible(block.text), block.info))
        elif block.text or not block.notice:
            parts.append(fence(visible(block.text), block.info))
        if block.notice:
            parts.append(f"*{md_inline(block.notice)}*")
    if card.kind == "diff":
        plans = card.plans()
        if plans:
            parts.append(fence(visible("\n".join(diff_text(p) for p in plans)), "diff"))
        else:
            parts.append("*no file changes*")
    if model.talk is not None and not model.talk.empty:
        parts.append(fence(visible(talk_text(model.talk)), "text"))
    # MathJax would typeset "$HOME $PATH" in tool text; the class opts out.
    body = "\n\n".join(parts)
    return f'<div class="mathjax_ignore tex2jax_ignore">\n\n{body}\n\n</div>\n'


def card_plain(card: CardLayout) -> str:
    """Draw the card as a compact summary: ``[done] add — 3`` and any text."""
    model = card.model
    flag = ", error" if model.is_error and model.status == "done" else ""
    title = card.title if card.kind != "terminal" else f"$ {card.title}"
    head = f"[{model.status}{flag}] {title}"
    if card.exit is not None:
        head += f" ({card.exit[0]})"
    head = visible(head).replace("\n", " ")
    body = ""
    if card.kind == "terminal" and card.output is not None:
        text, notice = _output_tail(card)
        lines = text.rstrip("\n").split("\n") if text.rstrip("\n") else []
        keep = card.limits.max_output_lines
        shown = lines[-keep:]
        if len(lines) > keep:
            shown.insert(0, f"\u2026 {len(lines) - keep:,} earlier lines not shown")
        if notice:
            shown.insert(0, notice)
        body = "\n".join(shown)
    elif card.kind == "diff":
        keep = card.limits.max_output_lines
        body = "\n".join(diff_text(p, keep) for p in card.plans())
    elif card.blocks:
        body = "\n".join(_plain_block(b) for b in card.blocks)
    elif card.raw is not None:
        body = card.raw.text
    if model.talk is not None and not model.talk.empty:
        body = "\n".join(p for p in (talk_text(model.talk), body) if p)
    body = visible(body)
    if not body:
        return head
    if "\n" not in body and len(head) + len(body) <= _INLINE_MAX:
        return f"{head} \u2014 {body}"
    return f"{head}\n{body}"


def _plain_block(block: Shown) -> str:
    lines = [f"[{block.caption}]"] if block.caption is not None else []
    if block.text:
        lines.append(block.text)
    elif block.notice and not lines:
        lines.append(block.notice)
    return "\n".join(lines)
