"""A recorded request's match key: what a replayed request must equal.

What "the same request" means is :func:`match_key`: the request body as
the adapter built it, in canonical JSON, less what cannot change the
model's answer and differs between where a run happens. Today that is the
approval-policy marker (``<approval-policy value="ask"/>``) a kernel's
registry adds to the system prompt and a script's has not: a recording
made by ``%tool_eval`` replays in a script or CI, and the other way round.
The ``never`` policy's sentence stays in the key: it tells the model
something, so a change of it must be recorded again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["canonical", "comparable", "match_key"]

_MARKER: Final = re.compile(r'\s*<approval-policy value="[^"<>]*"/>')


def _unmarked(text: str) -> str:
    return _MARKER.sub("", text).strip() if "<approval-policy" in text else text


def comparable(request: Any) -> Any:
    """The request less the approval-policy marker (see the module doc)."""
    if not isinstance(request, Mapping):
        return request
    out = dict(request)
    system = out.get("system")
    if isinstance(system, str):
        out["system"] = _unmarked(system)
        if not out["system"]:
            del out["system"]
    elif isinstance(system, list):
        blocks = [
            {**b, "text": _unmarked(b["text"])}
            if isinstance(b, Mapping) and isinstance(b.get("text"), str)
            else b
            for b in system
        ]
        blocks = [
            b for b in blocks if not (isinstance(b, Mapping) and b.get("text") == "")
        ]
        if blocks:
            out["system"] = blocks
        else:
            del out["system"]
    messages = out.get("messages")
    if isinstance(messages, list):
        kept = []
        for message in messages:
            if (
                isinstance(message, Mapping)
                and message.get("role") in ("system", "developer")
                and isinstance(message.get("content"), str)
            ):
                content = _unmarked(message["content"])
                if not content:
                    continue
                message = {**message, "content": content}
            kept.append(message)
        out["messages"] = kept
    return out


def match_key(request: Any) -> str:
    """What a replayed request must equal: :func:`comparable`, canonical."""
    return canonical(comparable(request))


def canonical(value: object) -> str:
    """One JSON text per value: how requests are compared and written."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=_plain)


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (list, tuple, frozenset, set)):
        return list(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    raise TypeError(f"not JSON: {type(value).__name__}")
