"""The theme palette and the few tags every HTML card part is built from.

Tool strings reach these tags only through :func:`~dsh_nb.cards.escape.esc`;
attribute values are only the constants defined here.

A card's ``text/html`` is what people see wherever our renderer is not:
VS Code, Colab, nbviewer, GitHub, ``jupyter nbconvert --to html``. Each
colour is a ``--dsh-*`` variable that :data:`THEME_STYLE` (one ``<style>``
block at the top of a card, scoped to ``.dsh-ToolCard``) sets from what the
page offers: JupyterLab's ``--jp-*`` variables, else VS Code's
``--vscode-*`` ones, else our own light or dark colours, picked by the
page's theme sign (VS Code's ``vscode-dark`` / ``vscode-light`` body class,
JupyterLab's and nbconvert's ``data-jp-theme-light``) or by
``prefers-color-scheme``. Coloured text (success, error, warning, link)
always comes from our own palette, whose colours keep a 4.5:1 contrast on
the light or dark background they are chosen for; theme accents (JupyterLab
``#388e3c`` green on white: 4.1:1) do not. A card paints its own
background, so its text reads on any page. Where a page drops the style
block (a sanitizer), each inline value still falls back to JupyterLab's
variable, VS Code's, then a light colour, as before.
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
    "PILL",
    "PRE_STYLE",
    "THEME_STYLE",
    "UI_FONT",
    "WARN",
    "el",
    "pill",
    "pre",
]

_LIGHT: Final = {
    "fg": "#1f2328",
    "muted": "#59636e",
    "bg": "#ffffff",
    "alt": "#f6f8fa",
    "border": "#d1d9e0",
    "ok": "#1a7f37",
    "err": "#cf222e",
    "warn": "#9a6700",
    "info": "#0969da",
}
_DARK: Final = {
    "fg": "#e6edf3",
    "muted": "#9198a1",
    "bg": "#0d1117",
    "alt": "#151b23",
    "border": "#3d444d",
    "ok": "#3fb950",
    "err": "#ff7b72",
    "warn": "#d29922",
    "info": "#58a6ff",
}
# Which page variable each base colour follows first, then VS Code's.
_FOLLOW: Final = {
    "fg": ("--jp-content-font-color1", "--vscode-editor-foreground"),
    "muted": ("", "--vscode-descriptionForeground"),
    "bg": ("--jp-layout-color1", "--vscode-editor-background"),
    # JupyterLab's second layout colour is too light in its dark theme
    # (#424242) for coloured text: code blocks take ours there.
    "alt": ("", "--vscode-textCodeBlock-background"),
    "border": ("--jp-border-color2", "--vscode-panel-border"),
}


def _chain(name: str, literal: str) -> str:
    jp, vscode = _FOLLOW.get(name, ("", ""))
    value = literal
    for var in (vscode, jp):
        if var:
            value = f"var({var},{value})"
    return value


def _palette(palette: dict[str, str]) -> str:
    return ";".join(f"--dsh-p-{k}:{v}" for k, v in palette.items())


def _colour(name: str) -> str:
    """An inline colour: the card's variable, else the page's, else light."""
    return f"var(--dsh-{name},{_chain(name, _LIGHT[name])})"


# Each colour follows the page's variables, else the palette the page's
# theme picks (--dsh-p-*: declared on the same element, so resolved there).
_FOLLOWS: Final = ";".join(
    f"--dsh-{k}:{_chain(k, f'var(--dsh-p-{k})')}" for k in _LIGHT
)
_DARK_PAGE: Final = (
    "body.vscode-dark .dsh-ToolCard,body.vscode-high-contrast .dsh-ToolCard,"
    "body[data-jp-theme-light=false] .dsh-ToolCard"
)
_LIGHT_PAGE: Final = (
    "body.vscode-light .dsh-ToolCard,body.vscode-high-contrast-light .dsh-ToolCard,"
    "body[data-jp-theme-light=true] .dsh-ToolCard"
)
THEME_STYLE: Final = (
    f"<style>.dsh-ToolCard{{{_FOLLOWS};{_palette(_LIGHT)}}}"
    f"@media (prefers-color-scheme:dark){{.dsh-ToolCard{{{_palette(_DARK)}}}}}"
    f"{_DARK_PAGE}{{{_palette(_DARK)}}}{_LIGHT_PAGE}{{{_palette(_LIGHT)}}}</style>"
)
"""The card's theme: one constant style block, scoped to our classes."""

FG: Final = _colour("fg")
FG_MUTED: Final = _colour("muted")
BG: Final = _colour("bg")
BG_ALT: Final = _colour("alt")
BORDER: Final = _colour("border")
OK: Final = _colour("ok")
ERR: Final = _colour("err")
WARN: Final = _colour("warn")
INFO: Final = _colour("info")
PILL: Final = {
    "ok": "#1a7f37",
    "err": "#cf222e",
    "warn": "#8a5c00",
    "info": "#0969da",
    "muted": "#59636e",
}
"""Solid label backgrounds: white text on each reads at 4.5:1 on any page."""
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
    """Return a small rounded label; ``text`` is tool text and gets escaped.

    ``colour`` is one of :data:`PILL`'s values: white text needs a solid,
    dark enough background whatever the page's theme.
    """
    style = (
        "display:inline-block;padding:0 7px;border-radius:9px;font-size:11px;"
        f"line-height:18px;color:#fff;background:{colour};white-space:nowrap"
    )
    return el("span", esc(text), style, cls)
