"""Bound what a card shows, once, for every part.

Each text a card draws (a content block, the raw input, terminal output) is
cut here to the card's limits, with a notice that gives the full size; the
HTML, Markdown, plain and JSON parts all draw the cut copy, so no part is
larger than the limits allow and none disagrees with another about what was
left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dsh_nb.cards.media import describe
from dsh_nb.tools.jsonvalue import to_plain

__all__ = [
    "Shown",
    "bound_blocks",
    "bound_value",
    "cap",
    "output_tail",
    "pretty_json",
]


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Shown:
    """One bounded text as the card draws it.

    ``info`` is ``"text"`` or ``"json"`` (the fence info and how to draw);
    ``block`` is the original content block when it was drawn whole, so the
    JSON part can pass it on unchanged; ``total`` is the full length.
    An image, audio, resource or link block (:mod:`dsh_nb.cards.media`) has
    its ``kind``, a one-line ``caption``, and for a drawable image the
    base64 ``picture`` with its ``mime`` type.
    """

    text: str
    info: str
    notice: str | None = None
    total: int = 0
    block: Any = None
    kind: str | None = None
    caption: str | None = None
    picture: str | None = None
    mime: str | None = None


def bound_value(value: Any, limit: int) -> Shown:
    """Bound a raw input: a string as-is, anything else as pretty JSON."""
    raw = value if isinstance(value, str) else pretty_json(value)
    text, notice = cap(raw, limit)
    return Shown(
        text=text,
        info="text" if isinstance(value, str) else "json",
        notice=notice,
        total=len(raw),
    )


def _block_text(block: Any) -> tuple[str, str]:
    if isinstance(block, Mapping) and block.get("type") == "text":
        text = block.get("text")
        if isinstance(text, str):
            return text, "text"
    return pretty_json(block), "json"


def _bound_media(block: Mapping[str, Any], limit: int) -> Shown | None:
    media = describe(block)
    if media is None:
        return None
    kind = str(block.get("type"))
    if media.picture is not None:
        if len(media.picture) <= limit:
            return Shown(
                text="",
                info="text",
                kind=kind,
                caption=media.caption,
                picture=media.picture,
                mime=media.mime,
            )
        return Shown(
            text="",
            info="text",
            kind=kind,
            caption=media.caption,
            notice=f"image not drawn: {len(media.picture):,} characters of "
            f"base64, over the card's limit of {limit:,}",
        )
    text, notice = cap(media.text or "", limit)
    return Shown(
        text=text,
        info="text",
        notice=notice,
        total=len(media.text or ""),
        kind=kind,
        caption=media.caption,
    )


def bound_blocks(blocks: Sequence[Any], limit: int) -> list[Shown]:
    """Bound content blocks: each to ``limit`` characters, all together to 2x.

    Blocks past the total budget are not drawn; one last notice counts them,
    so a result of a million small blocks is as bounded as one huge block.
    An image's base64 counts against the same budget.
    """
    out: list[Shown] = []
    budget = 2 * limit
    for index, block in enumerate(blocks):
        if budget <= 0:
            rest = len(blocks) - index
            out.append(
                Shown(
                    text="",
                    info="text",
                    notice=f"truncated: {rest:,} more content blocks not shown",
                )
            )
            break
        media = (
            _bound_media(block, min(limit, budget))
            if isinstance(block, Mapping)
            else None
        )
        if media is not None:
            budget -= (
                len(media.text) + len(media.picture or "") + len(media.caption or "")
            )
            out.append(media)
            continue
        raw, info = _block_text(block)
        text, notice = cap(raw, min(limit, budget))
        budget -= len(text)
        whole = notice is None
        out.append(
            Shown(
                text=text,
                info=info,
                notice=notice,
                total=len(raw),
                block=to_plain(block) if whole else None,
            )
        )
    return out
