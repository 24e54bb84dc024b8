"""The ``text/markdown`` and ``text/plain`` parts of a card.

Tool text in Markdown sits either inside a fence longer than any backtick run
it contains, or on a line where every ASCII punctuation character is
backslash-escaped, so it can open no link, image, HTML tag or fence. Both
parts make control characters visible (:func:`visible`), so a plain-text
console showing the card is never driven by escape sequences from a tool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from dsh_nb.cards.ansi import strip_ansi
from dsh_nb.cards.escape import visible
from dsh_nb.cards.hunks import diff_text
from dsh_nb.cards.layout import CardLayout, cap, output_tail, pretty_json
from dsh_nb.tools.jsonvalue import ABSENT

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
    """Return the output without escapes, cut from the front to the limit."""
    full = strip_ansi(card.output or "")
    text, dropped = output_tail(full, card.limits.max_output_chars)
    if not dropped:
        return text, None
    return text, (
        f"output truncated: the first {dropped:,} of {len(full):,} "
        "characters are not shown"
    )


def _block_text(block: Any) -> tuple[str, str]:
    if isinstance(block, Mapping) and block.get("type") == "text":
        text = block.get("text")
        if isinstance(text, str):
            return text, "text"
    return pretty_json(block), "json"


def _raw_input(card: CardLayout) -> tuple[str, str] | None:
    if card.raw_input is ABSENT or card.kind != "generic":
        return None
    raw = card.raw_input
    return (raw, "text") if isinstance(raw, str) else (pretty_json(raw), "json")


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
    limit = card.limits.max_output_chars
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
    raw = _raw_input(card)
    if raw is not None and not card.content:
        text, notice = cap(raw[0], limit)
        parts.append(fence(visible(text), raw[1]))
    for block in card.content or ():
        body, info = _block_text(block)
        text, notice = cap(body, limit)
        parts.append(fence(visible(text), info))
        if notice:
            parts.append(f"*{md_inline(notice)}*")
    if card.kind == "diff":
        plans = card.plans()
        if plans:
            parts.append(fence(visible("\n".join(diff_text(p) for p in plans)), "diff"))
        else:
            parts.append("*no file changes*")
    return "\n\n".join(parts) + "\n"


def card_plain(card: CardLayout) -> str:
    """Draw the card as a compact summary: ``[done] add — 3`` and any text."""
    model = card.model
    flag = ", error" if model.is_error and model.status == "done" else ""
    title = card.title if card.kind != "terminal" else f"$ {card.title}"
    head = f"[{model.status}{flag}] {title}"
    if card.exit is not None:
        head += f" ({card.exit[0]})"
    head = visible(head).replace("\n", " ")
    limit = card.limits.max_output_chars
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
        body = "\n".join(diff_text(p) for p in card.plans())
    elif card.content:
        body = "\n".join(cap(_block_text(b)[0], limit)[0] for b in card.content)
    elif card.raw_input is not ABSENT and card.kind == "generic":
        raw = card.raw_input
        body = cap(
            raw if isinstance(raw, str) else pretty_json(raw, compact=True), limit
        )[0]
    body = visible(body)
    if not body:
        return head
    if "\n" not in body and len(head) + len(body) <= _INLINE_MAX:
        return f"{head} \u2014 {body}"
    return f"{head}\n{body}"
