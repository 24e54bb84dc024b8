"""MCP's non-text content blocks, as a person reads them on a card.

An MCP server's result may hold images, audio, embedded resources and
resource links (``connect_mcp`` keeps MCP's own JSON shape for them). Drawn
as JSON, an image is a wall of base64; here each kind gets a one-line
caption, an embedded text resource its text, and an image its picture.

Only raster formats become pictures, and only when the data is plain
base64: an ``<img>`` of a ``data:`` URL with those types runs no script,
while SVG can carry script and is shown by its caption alone. No block
becomes a link: a URI is text, so ``javascript:`` can never be clicked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PICTURE_TYPES", "Media", "describe"]

PICTURE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


@dataclass(frozen=True, slots=True)
class Media:
    """How one non-text block is drawn.

    ``caption`` is one line for every part (HTML, Markdown, plain text);
    ``text`` is an embedded resource's text, drawn under the caption;
    ``picture`` is the base64 data when the block is a drawable image,
    with ``mime`` its type.
    """

    caption: str
    text: str | None = None
    picture: str | None = None
    mime: str | None = None


def _size(data: str) -> str:
    raw = len(data) * 3 // 4 - data[-2:].count("=")
    return "1 byte" if raw == 1 else f"{raw:,} bytes"


def _str(block: Mapping[str, Any], key: str) -> str | None:
    value = block.get(key)
    return value if isinstance(value, str) else None


def _binary(kind: str, block: Mapping[str, Any]) -> Media | None:
    data, mime = _str(block, "data"), _str(block, "mimeType")
    if data is None:
        return None
    label = f"{kind} ({mime or 'unknown type'}, {_size(data)})"
    if kind != "image":
        return Media(caption=label)
    if mime not in PICTURE_TYPES:
        return Media(caption=f"{label}: not drawn (only PNG, JPEG, GIF and WebP are)")
    if not _BASE64.fullmatch(data):
        return Media(caption=f"{label}: not drawn (its data is not base64)")
    return Media(caption=label, picture=data, mime=mime)


def _resource(block: Mapping[str, Any]) -> Media | None:
    resource = block.get("resource")
    if not isinstance(resource, Mapping):
        return None
    uri = _str(resource, "uri") or "(no uri)"
    mime = _str(resource, "mimeType")
    typed = f", {mime}" if mime else ""
    text = _str(resource, "text")
    if text is not None:
        return Media(caption=f"resource {uri}{typed}", text=text)
    blob = _str(resource, "blob")
    size = f", {_size(blob)}" if blob is not None else ""
    return Media(caption=f"resource {uri}{typed}{size}")


def _link(block: Mapping[str, Any]) -> Media | None:
    uri = _str(block, "uri")
    if uri is None:
        return None
    name = _str(block, "title") or _str(block, "name")
    what = _str(block, "description")
    caption = f"link {uri}" + (f" ({name})" if name and name != uri else "")
    return Media(caption=caption + (f": {what}" if what else ""))


def describe(block: Any) -> Media | None:
    """How to draw ``block``, or None to draw it as JSON (any other shape)."""
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
    if kind in ("image", "audio"):
        return _binary(str(kind), block)
    if kind == "resource":
        return _resource(block)
    if kind == "resource_link":
        return _link(block)
    return None
