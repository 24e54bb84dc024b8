"""What in an HTML string could run or fetch: for model-text tests.

The HTML is read by the standard library's HTML tokenizer; every tag
must be one Markdown makes, no attribute may be an event handler or a
style, and every address must be http(s), mailto or relative. Shared by
the unit and the kernel tests (the browser test audits the live DOM).
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

__all__ = ["MARKDOWN_TAGS", "live_markup"]

MARKDOWN_TAGS = frozenset(
    {
        "p", "a", "code", "pre", "em", "strong", "br", "hr", "ul", "ol", "li",
        "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "del", "s",
        "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
_SCHEME = re.compile(r"^([a-z][a-z0-9+.\-]*):", re.I)
_URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "srcdoc"}


class _Audit(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in MARKDOWN_TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name == "style":
                self.problems.append(f"<{tag} {name}=...>")
            if name in _URL_ATTRS:
                # What a browser would follow: entities decoded, controls
                # and whitespace dropped.
                url = re.sub(r"[\x00-\x20\x7f]", "", html.unescape(value or ""))
                scheme = _SCHEME.match(url)
                if scheme and scheme[1].lower() not in {"http", "https", "mailto"}:
                    self.problems.append(f"<{tag} {name}={value!r}>")

    handle_startendtag = handle_starttag


def live_markup(markup: str) -> list[str]:
    """Each tag, handler or address in ``markup`` that could run or fetch."""
    audit = _Audit()
    audit.feed(markup)
    audit.close()
    return audit.problems
