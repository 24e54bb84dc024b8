"""The one escape helper and the theme palette every card part uses.

Every string that comes from a tool reaches HTML through :func:`esc` and
nothing else; attribute values are only the constants defined here. Colours
are JupyterLab CSS variables with fallbacks, so a card follows the theme in
JupyterLab and still reads on nbviewer and GitHub, where the variables are
undefined.
"""

from __future__ import annotations

import html
import re
from typing import Final

__all__ = [
    "ADD_BG",
    "BG",
    "BG_ALT",
    "BORDER",
    "CODE_FONT",
    "CODE_SIZE",
    "DEL_BG",
    "ERR",
    "FG",
    "FG_MUTED",
    "HUNK_BG",
    "INFO",
    "OK",
    "PRE_STYLE",
    "UI_FONT",
    "WARN",
    "el",
    "esc",
    "pill",
    "pre",
    "visible",
]

FG: Final = "var(--jp-content-font-color1, #1f2328)"
FG_MUTED: Final = "var(--jp-content-font-color2, #59636e)"
BG: Final = "var(--jp-layout-color1, #ffffff)"
BG_ALT: Final = "var(--jp-layout-color2, #f6f8fa)"
BORDER: Final = "var(--jp-border-color2, #d1d9e0)"
OK: Final = "var(--jp-success-color1, #1a7f37)"
ERR: Final = "var(--jp-error-color1, #d1242f)"
WARN: Final = "var(--jp-warn-color1, #9a6700)"
INFO: Final = "var(--jp-info-color1, #0969da)"
ADD_BG: Final = "rgba(46, 160, 67, 0.18)"
DEL_BG: Final = "rgba(248, 81, 73, 0.18)"
HUNK_BG: Final = "rgba(84, 174, 255, 0.15)"
UI_FONT: Final = "var(--jp-ui-font-family, system-ui, sans-serif)"
CODE_FONT: Final = (
    "var(--jp-code-font-family, ui-monospace, Menlo, Consolas, monospace)"
)
CODE_SIZE: Final = "var(--jp-code-font-size, 13px)"

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


def el(tag: str, body: str, style: str = "", cls: str = "") -> str:
    """Wrap already-safe ``body`` in ``tag``; ``style``/``cls`` are constants."""
    attrs = ""
    if cls:
        attrs += f' class="{cls}"'
    if style:
        attrs += f' style="{style}"'
    return f"<{tag}{attrs}>{body}</{tag}>"


PRE_STYLE: Final = (
    f"margin:0;padding:6px 8px;font-family:{CODE_FONT};font-size:{CODE_SIZE};"
    "line-height:1.4;white-space:pre-wrap;overflow-wrap:anywhere;"
    f"background:{BG_ALT};color:{FG};border-radius:3px"
)


def pre(body: str, cls: str = "", style: str = PRE_STYLE) -> str:
    """Wrap safe ``body`` in a ``<pre>``; its first newline survives parsing."""
    # HTML drops a newline right after <pre>; give it one to drop.
    return el("pre", "\n" + body, style, cls)


def pill(text: str, colour: str, cls: str = "dsh-ToolCard-pill") -> str:
    """Return a small rounded label; ``text`` is tool text and gets escaped."""
    style = (
        "display:inline-block;padding:0 7px;border-radius:9px;font-size:11px;"
        f"line-height:18px;color:#fff;background:{colour};white-space:nowrap"
    )
    return el("span", esc(text), style, cls)
