"""A call's arguments as a key/value list people read before approving.

The approval prompt shows what a call will do. A tool with ``present_call``
has its card (a diff, a command and its folder) right above the prompt; for
any other tool the raw JSON is hard to read, so this draws each argument on
its own row: strings as text, other values as compact JSON, and a long or
multi-line value folded in ``<details>`` behind its first line. Every
string is escaped; there is no script.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from dsh_nb.cards.escape import esc

__all__ = ["FOLD_AT", "arguments_html", "value_text"]

FOLD_AT: Final = 80  # characters a value shows before it is folded
_ROW = "margin:2px 0;display:flex;gap:8px;align-items:baseline"
_KEY = "font-weight:600;white-space:nowrap"
_PRE = "margin:2px 0;white-space:pre-wrap;max-height:24em;overflow:auto"


def value_text(value: Any) -> str:
    """A value as people read it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def _value(text: str) -> str:
    first = text.split("\n", 1)[0]
    if len(text) <= FOLD_AT and first == text:
        return f"<code>{esc(text)}</code>"
    head = first[:FOLD_AT].rstrip() + "…"
    lines = text.count("\n") + 1
    size = f"{len(text):,} characters" + (f", {lines} lines" if lines > 1 else "")
    return (
        f"<details><summary><code>{esc(head)}</code> ({size})</summary>"
        f'<pre style="{_PRE}">{esc(text)}</pre></details>'
    )


def arguments_html(arguments: Any) -> str:
    """The arguments as escaped HTML rows, ``key: value``; long values folded."""
    if not isinstance(arguments, Mapping):
        return f'<div class="dsh-ApprovalArgs">{_value(value_text(arguments))}</div>'
    if not arguments:
        return '<div class="dsh-ApprovalArgs"><i>no arguments</i></div>'
    rows = "".join(
        f'<div style="{_ROW}"><span style="{_KEY}">{esc(str(key))}:</span>'
        f"<span>{_value(value_text(value))}</span></div>"
        for key, value in arguments.items()
    )
    return f'<div class="dsh-ApprovalArgs">{rows}</div>'
