"""The theme palette and the few tags every HTML card part is built from.

Tool strings reach these tags only through :func:`~dsh_nb.cards.escape.esc`;
attribute values are only the constants defined here. Colours
are JupyterLab CSS variables with fallbacks, so a card follows the theme in
JupyterLab and still reads on nbviewer and GitHub, where the variables are
undefined.
"""

from __future__ import annotations

from typing import Final

from dsh_nb.cards.escape import esc

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
    "pill",
    "pre",
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
