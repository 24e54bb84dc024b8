"""A model's text as HTML: parsed by a real Markdown parser, then sanitised.

A model's (or an MCP peer's) text is hostile. Sent as ``text/markdown``,
a trusted output's raw HTML would run in JupyterLab, and whether a line
is "inside a code fence" depends on Markdown's whole block structure
(a fence in a list item ends with the item), which no line-by-line
reading gets right. So the text is rendered here, once, by markdown-it
(CommonMark, with raw HTML off: tags in the text come out as text), and
the HTML it makes is cleaned by nh3 (the ammonia allowlist), which keeps
only Markdown's own tags and http(s)/mailto links. Whatever a frontend
does with the ``text/html`` part, it holds no markup the text wrote.

:func:`stable_prefix` tells a streaming display how much of a growing
text is made of finished top-level blocks, so those can be shown once
and only the unfinished tail is re-sent; :func:`split_point` also cuts a
single long block (a code fence is closed and reopened around the cut).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

__all__ = ["model_text_html", "split_point", "stable_prefix"]

_TAGS: Final = frozenset(
    {
        "p", "a", "code", "pre", "em", "strong", "br", "hr", "ul", "ol", "li",
        "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "del", "s",
        "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
_ATTRIBUTES: Final = {"a": {"href", "title"}, "ol": {"start"}}
_SCHEMES: Final = frozenset({"http", "https", "mailto"})
_LINE_END: Final = re.compile(r"\r\n?|\n")


@lru_cache(maxsize=1)
def _parser() -> Any:
    # Imported here: only a chat or a replay shows model text.
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False})
    md.enable(["table", "strikethrough"])
    # An image would be fetched on display (a tracking pixel); as a link
    # it is fetched only when clicked.
    md.disable("image")
    return md


def model_text_html(text: str) -> str:
    """Render ``text`` as Markdown to HTML holding only Markdown's markup.

    Raw HTML in the text is shown as text; links keep only http(s) and
    mailto addresses; images become links.

    Examples
    --------
    >>> model_text_html("**hi** <img src=x onerror=alert(1)>")
    '<p><strong>hi</strong> &lt;img src=x onerror=alert(1)&gt;</p>\\n'
    """
    import nh3

    rendered: str = _parser().render(text)
    return nh3.clean(
        rendered,
        tags=set(_TAGS),
        attributes={tag: set(names) for tag, names in _ATTRIBUTES.items()},
        url_schemes=set(_SCHEMES),
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def stable_prefix(text: str) -> int:
    """How many leading characters of ``text`` are finished Markdown blocks.

    A top-level block followed by another top-level block is complete:
    more text can only extend the last one. The answer is where the last
    top-level block's first line starts (0 when there is only one), so a
    stream can render ``text[:n]`` once and keep re-rendering the rest.
    A reference definition below a link already shown is the one thing
    this misses; the link then shows as text.
    """
    starts = [
        token.map[0]
        for token in _parser().parse(text)
        if token.level == 0 and token.nesting >= 0 and token.map is not None
    ]
    if len(starts) < 2:
        return 0
    # Lines as the parser counts them: \r\n, \r and \n each end one.
    breaks = _LINE_END.finditer(text)
    end = 0
    for _ in range(starts[-1]):
        end = next(breaks).end()
    return end


def split_point(text: str) -> tuple[int, str, str]:
    """Where to cut a long streaming ``text``: ``(n, close, reopen)``.

    Render ``text[:n] + close`` as a finished display and go on with
    ``reopen + text[n:]``. Between finished blocks when there are any;
    otherwise after the last whole line (or at the end), closing and
    reopening a top-level code fence that the cut falls in.
    """
    cut = stable_prefix(text)
    if cut > 0:
        return cut, "", ""
    cut = text.rfind("\n") + 1 or len(text)
    tokens = [t for t in _parser().parse(text) if t.level == 0 and t.map]
    fence = tokens[-1] if tokens and tokens[-1].type == "fence" else None
    if fence is None or text.count("\n", 0, cut) >= fence.map[1]:
        return cut, "", ""
    opening = text[: text.find("\n") + 1]
    return cut, fence.markup + "\n", opening
