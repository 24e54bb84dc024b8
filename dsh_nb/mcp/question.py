"""The approval question a served ``ask`` puts to an MCP client.

The question is plain text, one fact a line, and the client shows it to a
person who decides on it. Its arguments come from the model, so nothing in
them may draw a line of its own or hide part of the call:

* every character that can reorder or break what a reader sees (controls,
  bidi embeddings, overrides and isolates, line and paragraph separators,
  the invisible direction marks) is shown as a ``[U+202E]`` marker, as the
  cards show it, so an argument cannot draw a fake "Why this is asked:";
* arguments too long to show whole are cut per argument, not at one point
  of their JSON, so every argument's name stays in sight and a dangerous
  one cannot be pushed past the cut; the question says plainly that they
  were cut and how many characters are hidden.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from dsh_nb.cards.escape import visible

if TYPE_CHECKING:
    from dsh_nb.tools.pipeline.approval import ApprovalRequest

__all__ = ["ARGS_SHOWN", "question"]

#: Characters of the arguments' JSON shown whole; longer ones are cut.
ARGS_SHOWN: Final = 600
_KEYS_SHOWN: Final = 20  # arguments listed one a line, at most
_KEY_CHARS: Final = 60  # of one argument's name
_VALUE_CHARS: Final = 120  # of one argument's value, once cut
# What visible() keeps but a one-line field must not carry.
_LINE_BREAKERS: Final = {
    c: f"[U+{c:04X}]" for c in (0x0A, 0x0D, 0x2028, 0x2029, 0x200E, 0x200F, 0x061C)
}


def _field(text: str) -> str:
    """``text`` as one visible line."""
    return visible(text).translate(_LINE_BREAKERS)


def _cut(text: str, limit: int) -> tuple[str, int]:
    if len(text) <= limit:
        return text, 0
    return text[:limit] + "…", len(text) - limit


def _json(value: object) -> str | None:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None


def _arguments(arguments: object) -> list[str]:
    whole = _json(arguments)
    if whole is None:
        return ["Arguments: (not JSON; not shown)"]
    if len(whole) <= ARGS_SHOWN:
        return [f"Arguments: {_field(whole)}"]
    if not isinstance(arguments, Mapping):
        shown, hidden = _cut(whole, ARGS_SHOWN)
        return [
            f"Arguments (cut: {hidden:,} of {len(whole):,} characters hidden): "
            + _field(shown)
        ]
    lines: list[str] = []
    hidden = 0
    items = list(arguments.items())
    for key, value in items[:_KEYS_SHOWN]:
        name, name_hidden = _cut(str(key), _KEY_CHARS)
        text, value_hidden = _cut(_json(value) or "(not JSON)", _VALUE_CHARS)
        hidden += name_hidden + value_hidden
        lines.append(f"  {_field(name)}: {_field(text)}")
    rest = items[_KEYS_SHOWN:]
    if rest:
        more = sum(len(_json({k: v}) or "") for k, v in rest)
        hidden += more
        lines.append(f"  … and {len(rest):,} more arguments, not shown")
    header = (
        f"Arguments (cut to fit: {hidden:,} of {len(whole):,} characters "
        "hidden; decline if you cannot see enough):"
    )
    return [header, *lines]


def question(request: ApprovalRequest, arguments: object) -> str:
    """The question for ``request``, a call with ``arguments``."""
    lines = [f'Allow the tool "{_field(request.tool_name)}" to run once?']
    if request.reason:
        lines.append(f"Why this is asked: {_field(request.reason)}")
    lines.extend(_arguments(arguments))
    lines.append("Accept to run it, decline to refuse.")
    return "\n".join(lines)
