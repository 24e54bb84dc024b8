"""Model text rendered by markdown-it and cleaned by nh3 holds no live markup.

Every payload of the XSS corpus and the Markdown-specific ones, alone and
inside the Markdown constructs a reply uses (lists, quotes, headings,
links, tables), renders to Markdown's own tags only; the text stays
readable; :func:`stable_prefix` cuts only between finished blocks.
"""

from __future__ import annotations

import pytest
from html_audit import live_markup
from xss_payloads import MARKDOWN_PAYLOADS, PAYLOADS

from dsh_nb.cards.modeltext import model_text_html, stable_prefix

CORPUS = (*PAYLOADS, *MARKDOWN_PAYLOADS)
CONTEXTS = (
    "{p}",
    "Hello {p} and [y]({p}) done",
    "- item\n  {p}",
    "> {p}",
    "# {p}",
    "{p}\n===",
    "[x]: {p}\n\n[x]",
    "| a |\n|---|\n| {p} |",
    "```\n{p}\n```\n{p}",
    "1. a\n   ```\n   x\n{p}",
)


@pytest.mark.parametrize(("name", "payload"), CORPUS, ids=[n for n, _ in CORPUS])
def test_no_payload_is_live_in_any_context(name: str, payload: str) -> None:
    for context in CONTEXTS:
        text = context.replace("{p}", payload)
        assert live_markup(model_text_html(text)) == [], (context, text)


def test_markdown_still_renders() -> None:
    html = model_text_html(
        "# Title\n\nSome **bold**, `a < b` and [a link](https://example.org).\n\n"
        "- one\n- two\n\n```python\nif a < b:\n    pass\n```\n"
    )
    assert "<h1>Title</h1>" in html
    assert "<strong>bold</strong>" in html
    assert "<code>a &lt; b</code>" in html
    assert '<a href="https://example.org" rel="noopener noreferrer nofollow">' in html
    assert "<li>one</li>" in html
    assert "<pre><code>if a &lt; b:\n    pass\n</code></pre>" in html


def test_raw_html_and_script_links_show_as_text() -> None:
    html = model_text_html('<img src=x onerror="alert(1)"> [x](javascript:alert(1))')
    assert "&lt;img src=x onerror=" in html
    assert "<a" not in html and "[x](javascript:alert(1))" in html
    assert model_text_html("![pixel](https://t.example/p.png)") == (
        '<p>!<a href="https://t.example/p.png" rel="noopener noreferrer nofollow">'
        "pixel</a></p>\n"
    )


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        ("one paragraph, still growing", 0),
        ("first\n\nsecond", len("first\n\n")),
        ("a\r\n\r\nb\rc\n\nd", len("a\r\n\r\nb\rc\n\n")),
        ("- a\n- b\n\nafter", len("- a\n- b\n\n")),
        ("```\nx\n\ny\n", 0),  # an open fence is one block
        ("para\n\n```\ncode\n```\ntail", len("para\n\n```\ncode\n```\n")),
    ],
)
def test_stable_prefix_cuts_between_finished_blocks(text: str, cut: int) -> None:
    assert stable_prefix(text) == cut
