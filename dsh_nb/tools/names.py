"""Tool names that every model API accepts, and a fix for those it refuses.

OpenAI rejects a whole request when one tool name falls outside
``^[a-zA-Z0-9_-]{1,64}$`` (Anthropic's rule is the same), so a tool named
``größe`` or ``"load data"`` must fail where it is defined, with a name that
would work, not later inside a model call.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["TOOL_NAME_PATTERN", "check_tool_name", "suggest_tool_name"]

TOOL_NAME_PATTERN: Final = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""What a tool name must fully match to reach every model API."""

_FOLD: Final = {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ł": "l"}
_OTHER: Final = re.compile(r"[^a-zA-Z0-9_-]+")


def suggest_tool_name(name: str) -> str:
    """A valid name close to ``name``: accents folded, the rest made ``_``."""
    text = "".join(_FOLD.get(c, _FOLD.get(c.lower(), c)) for c in name)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = _OTHER.sub("_", text).strip("_")[:64].rstrip("_")
    return text or "tool"


def check_tool_name(name: str, where: str) -> str | None:
    """Return a message for a name model APIs refuse, else ``None``."""
    if TOOL_NAME_PATTERN.fullmatch(name):
        return None
    bad = sorted({c for c in name if not TOOL_NAME_PATTERN.fullmatch(c)})
    why = f"has {', '.join(map(repr, bad))}" if bad else ""
    if len(name) > 64:
        why = f"is {len(name)} characters long" + (f" and {why}" if why else "")
    return (
        f"{where}: tool name {name!r} {why}; model APIs accept only 1-64 ASCII "
        f"letters, digits, '_' and '-'. Try name={suggest_tool_name(name)!r}"
    )
