"""The card's JSON part: the render intent the JupyterLab renderer draws.

``call``/``result`` are the views' ``to_json()``; see :mod:`~dsh_nb.cards.bundle`
for the whole payload's shape.
"""

from __future__ import annotations

import math
from typing import Any

from dsh_nb.cards.model import CardModel
from dsh_nb.tools.shown import shown

__all__ = ["card_payload"]


def card_payload(model: CardModel) -> dict[str, Any]:
    """Build the JSON render intent of one call (wire names, JSON only)."""
    out: dict[str, Any] = {"tool": model.tool}
    if model.call_id is not None:
        out["callId"] = model.call_id
    out["status"] = model.status
    out["isError"] = model.is_error
    if model.call is not None:
        out["call"] = model.call.to_json()
    if model.result is not None:
        out["result"] = model.result.to_json()
    if model.approval is not None:
        out["approval"] = model.approval
    if model.trace:
        out["trace"] = [
            {"stage": e.stage, "actor": e.actor, "decision": e.decision}
            for e in model.trace
        ]
    # A value that cannot serialize would lose the whole display later, so
    # find it now and drop only this part. to_json() already detached it.
    _check_json(out)
    return out


def _check_json(value: Any) -> None:
    """Raise if ``value`` is not JSON; cost is per node, not per character."""
    stack = [value]
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError(f"{item!r} is not JSON")
        elif isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    raise TypeError(f"JSON object keys must be str; got {shown(key)}")
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            raise TypeError(f"{type(item).__name__} is not JSON: {shown(item)}")
