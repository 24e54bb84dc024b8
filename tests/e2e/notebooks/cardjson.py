"""Turn the wire form of a card into the payload dsh_nb.cards renders.

The e2e notebooks write their cards as the views' wire form (``oldText``,
``output``); the renderer gets what the kernel really sends: planned hunks,
parsed ANSI spans, bounded content.
"""

from __future__ import annotations

from typing import Any

from dsh_nb.cards import CARD_MIME, CardModel, TraceEntry, render_card
from dsh_nb.tools.presentation import view_from_json

__all__ = ["payload"]


def payload(card: dict[str, Any]) -> dict[str, Any]:
    """Render ``card`` (views in wire form) as the kernel would send it."""
    model = CardModel(
        tool=card["tool"],
        call_id=card.get("callId"),
        status=card.get("status", "done"),
        is_error=card.get("isError", False),
        approval=card.get("approval"),
        call=view_from_json(card["call"], result=False) if "call" in card else None,
        result=view_from_json(card["result"], result=True)
        if "result" in card
        else None,
        trace=tuple(TraceEntry(**t) for t in card.get("trace", ())),
    )
    data: dict[str, Any] = render_card(model).data[CARD_MIME]
    if "cwd" in card:
        data["cwd"] = card["cwd"]
    return data
