"""Terminal output to HTML: SGR colours become spans, everything else goes.

We convert ourselves instead of using ansi2html because that library turns
OSC 8 hyperlinks into ``<a href>`` (we must never create links from tool
output), escapes only ``& < >`` (we escape through :func:`esc` everywhere)
and is LGPL. The converter is one regular expression and a small SGR state
machine; it runs in linear time.

Supported SGR: reset, bold, dim, italic, underline, inverse, strike, the 16
colours (normal and bright), 256 colours and truecolour, in both the
``38;5;n`` and the ``38:2::r:g:b`` forms. Every other escape sequence (cursor
moves, erase, OSC including hyperlinks and titles, DCS/APC/PM strings, C1
controls) and every other control character is removed. A carriage return
inside a line keeps only the text after it, as a terminal shows progress bars.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final, NamedTuple

from dsh_nb.cards.escape import esc
from dsh_nb.cards.markup import BG, FG

__all__ = ["ansi_spans", "ansi_to_html_lines", "strip_ansi"]

_SEQ: Final = re.compile(
    # CSI: parameter bytes, intermediate bytes, final byte.
    r"(?:\x1b\[|\x9b)(?P<params>[0-?]*)[ -/]*(?P<final>[@-~])"
    # OSC (titles, hyperlinks, clipboard) ended by BEL or ST.
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    # DCS, SOS, PM and APC strings.
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    # Other escapes (charset selection, keypad modes, an unfinished CSI).
    r"|\x1b[ -/]*[0-~]"
    # Any other control character, a lone ESC included; tab and LF stay.
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)
_SGR: Final = re.compile(r"(?:\x1b\[|\x9b)[0-9;:]*m")

# JupyterLab's ANSI palette: readable on light and dark backgrounds.
_PALETTE: Final = (
    "#3e424d",
    "#e75c58",
    "#00a250",
    "#ddb62b",
    "#208ffb",
    "#d160c4",
    "#60c6c8",
    "#c5c1b4",
    "#282c36",
    "#b22b31",
    "#007427",
    "#b27d12",
    "#0065ca",
    "#a03196",
    "#258f8f",
    "#a1a6b2",
)
_CUBE: Final = (0, 95, 135, 175, 215, 255)


class _Style(NamedTuple):
    fg: str | None = None
    bg: str | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    strike: bool = False
    inverse: bool = False


_PLAIN: Final = _Style()


def _int(text: str) -> int:
    if not text:
        return 0
    if len(text) > 9 or not text.isdigit():
        return -1
    return int(text)


def _hex(r: int, g: int, b: int) -> str:
    return f"#{min(r, 255):02x}{min(g, 255):02x}{min(b, 255):02x}"


def _colour_256(index: int) -> str | None:
    if 0 <= index < 16:
        return _PALETTE[index]
    if 16 <= index < 232:
        index -= 16
        return _hex(_CUBE[index // 36], _CUBE[index // 6 % 6], _CUBE[index % 6])
    if 232 <= index < 256:
        level = 8 + (index - 232) * 10
        return _hex(level, level, level)
    return None


def _extended(args: list[str]) -> tuple[str | None, int]:
    """Read ``5;n`` or ``2;r;g;b`` after a 38/48; return colour and count used.

    A malformed colour swallows the rest of the sequence, so its numbers are
    not misread as other attributes (a stray ``1`` as bold).
    """
    mode = _int(args[0]) if args else -1
    if mode == 5 and len(args) >= 2:
        return _colour_256(_int(args[1])), 2
    if mode == 2 and len(args) >= 4:
        rgb = [_int(v) for v in args[1:4]]
        return (None if min(rgb) < 0 else _hex(*rgb)), 4
    return None, len(args)


def _colon_colour(sub: list[str]) -> str | None:
    """Read the ``38:5:n`` / ``38:2:[space]:r:g:b`` sub-parameter forms."""
    if sub and _int(sub[0]) == 2:
        values = sub[-3:] if len(sub) >= 5 else sub[1:4]
        return _extended(["2", *values])[0]
    return _extended(sub)[0]


def _apply_sgr(style: _Style, params: str) -> _Style:
    fg, bg, bold, dim, italic, underline, strike, inverse = style
    fields = params.split(";")
    i = 0
    while i < len(fields):
        field = fields[i]
        i += 1
        if ":" in field:
            sub = field.split(":")
            code = _int(sub[0])
            if code == 38:
                fg = _colon_colour(sub[1:]) or fg
            elif code == 48:
                bg = _colon_colour(sub[1:]) or bg
            elif code == 4:
                underline = _int(sub[1]) != 0
            continue
        code = _int(field)
        if code == 0:
            fg, bg, bold, dim, italic, underline, strike, inverse = _PLAIN
        elif code == 1:
            bold = True
        elif code == 2:
            dim = True
        elif code == 3:
            italic = True
        elif code in (4, 21):
            underline = True
        elif code == 7:
            inverse = True
        elif code == 9:
            strike = True
        elif code == 22:
            bold = dim = False
        elif code == 23:
            italic = False
        elif code == 24:
            underline = False
        elif code == 27:
            inverse = False
        elif code == 29:
            strike = False
        elif 30 <= code <= 37:
            fg = _PALETTE[code - 30]
        elif 90 <= code <= 97:
            fg = _PALETTE[code - 82]
        elif 40 <= code <= 47:
            bg = _PALETTE[code - 40]
        elif 100 <= code <= 107:
            bg = _PALETTE[code - 92]
        elif code == 39:
            fg = None
        elif code == 49:
            bg = None
        elif code in (38, 48):
            colour, used = _extended(fields[i:])
            i += used
            if colour is not None and code == 38:
                fg = colour
            elif colour is not None:
                bg = colour
    return _Style(fg, bg, bold, dim, italic, underline, strike, inverse)


def _css(style: _Style) -> str:
    fg, bg = style.fg, style.bg
    if style.inverse:
        fg, bg = bg or BG, fg or FG
    parts = []
    if fg:
        parts.append(f"color:{fg}")
    if bg:
        parts.append(f"background-color:{bg}")
    if style.bold:
        parts.append("font-weight:bold")
    if style.dim:
        parts.append("opacity:0.7")
    if style.italic:
        parts.append("font-style:italic")
    lines = [
        name
        for on, name in ((style.underline, "underline"), (style.strike, "line-through"))
        if on
    ]
    if lines:
        parts.append("text-decoration:" + " ".join(lines))
    return ";".join(parts)


def _carriage_returns(text: str) -> str:
    """Keep the text after a line's last CR, and the SGR codes before it."""
    if "\r" not in text:
        return text
    out = []
    for line in text.split("\n"):
        line = line.rstrip("\r")
        if "\r" in line:
            head, _, tail = line.rpartition("\r")
            line = "".join(_SGR.findall(head)) + tail
        out.append(line)
    return "\n".join(out)


def strip_ansi(text: str) -> str:
    """Return what a terminal would show of ``text``, without any styling."""
    return _SEQ.sub("", _carriage_returns(text))


def _styled(text: str) -> Iterator[tuple[_Style, str]]:
    """Yield ``(style, text)`` runs; one style change ends a run."""
    text = _carriage_returns(text)
    style = _PLAIN
    pending: list[str] = []
    pos = 0
    for match in _SEQ.finditer(text):
        if match.start() > pos:
            pending.append(text[pos : match.start()])
        pos = match.end()
        params = match.group("params")
        if match.group("final") == "m" and not params.startswith(("<", "=", ">", "?")):
            new = _apply_sgr(style, params)
            if new != style:
                yield style, "".join(pending)
                pending.clear()
                style = new
    pending.append(text[pos:])
    yield style, "".join(pending)


def ansi_to_html_lines(text: str) -> list[str]:
    """Convert terminal output to one escaped HTML string per line.

    Each line closes its own spans, so any run of lines is well-formed on its
    own (the caller may split them into a collapsed and a visible part).
    """
    lines: list[str] = []
    current: list[str] = []
    css_cache: dict[_Style, str] = {_PLAIN: ""}
    for style, chunk in _styled(text):
        css = css_cache.get(style)
        if css is None:
            css = css_cache[style] = _css(style)
        for k, piece in enumerate(chunk.split("\n")):
            if k:
                lines.append("".join(current))
                current.clear()
            if piece and css:
                current.append(f'<span style="{css}">{esc(piece)}</span>')
            elif piece:
                current.append(esc(piece))
    lines.append("".join(current))
    return lines


def _style_json(style: _Style) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if style.fg:
        out["fg"] = style.fg
    if style.bg:
        out["bg"] = style.bg
    for name in ("bold", "dim", "italic", "underline", "strike", "inverse"):
        if getattr(style, name):
            out[name] = True
    return out


def ansi_spans(text: str) -> tuple[list[list[Any]], list[dict[str, Any]]]:
    """Parse terminal output for the JSON part: runs and the styles they use.

    Returns ``spans``, each ``[text, style_index]``, and ``styles``, where
    index 0 is the plain style ``{}``; colours are ``#rrggbb`` only, so the
    renderer never copies payload text into CSS.
    """
    index: dict[_Style, int] = {_PLAIN: 0}
    styles: list[dict[str, Any]] = [{}]
    spans: list[list[Any]] = []
    for style, chunk in _styled(text):
        if not chunk:
            continue
        at = index.get(style)
        if at is None:
            at = index[style] = len(styles)
            styles.append(_style_json(style))
        if spans and spans[-1][1] == at:
            spans[-1][0] += chunk
        else:
            spans.append([chunk, at])
    return spans, styles
