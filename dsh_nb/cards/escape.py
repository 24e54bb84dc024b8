"""The one escape: tool text made visible, then safe for HTML.

Every string that comes from a tool reaches HTML through :func:`esc` and
nothing else. :func:`visible` alone serves the Markdown and plain parts, so
no part lets a control character drive a terminal or a bidi override
reorder what a reader sees.
"""

from __future__ import annotations

import html
import re
from typing import Final

__all__ = ["esc", "visible"]

# C0 controls other than tab and newline, DEL, C1 controls, and the bidi
# embeddings, overrides and isolates that can reorder what a reader sees
# (a file named "txt.exe" shown as "exe.txt"), and lone surrogates, which
# cannot be encoded to send the display.
_SPECIAL: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _build_table() -> dict[int, str]:
    specials = [
        *(c for c in range(0x20) if c not in (0x09, 0x0A)),
        *range(0x7F, 0xA0),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        *range(0xD800, 0xE000),
    ]
    return {c: f"[U+{c:04X}]" for c in specials}


_VISIBLE: Final = _build_table()


def visible(text: str) -> str:
    """Make control and bidi characters visible; CRLF becomes LF.

    Each becomes a ``[U+001B]`` marker (control pictures are missing from
    common monospace fonts). Nothing is dropped, so a reader sees what the
    tool sent, text cannot reorder itself, and a terminal showing
    ``text/plain`` is never driven by it.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if _SPECIAL.search(text) is None:
        return text
    return text.translate(_VISIBLE)


def esc(text: str) -> str:
    """Escape tool text for HTML content or a quoted attribute value."""
    return html.escape(visible(text), quote=True)
