"""No tool string can become live markup in any part of a card.

Every payload of ``tests/xss_payloads.py`` goes through every field a tool
controls; the HTML part is parsed and may hold only our own tags and
attributes, and the payload's text must still be there, as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

import pytest
from xss_payloads import PAYLOADS

from dsh_nb.cards import CardModel, TraceEntry, render_card
from dsh_nb.cards.ansi import strip_ansi
from dsh_nb.cards.escape import visible
from dsh_nb.cards.hunks import looks_binary
from dsh_nb.cards.markup import THEME_STYLE
from dsh_nb.tools.presentation import (
    DiffCallView,
    DiffResultView,
    FileDiff,
    FileLocation,
    GenericCallView,
    GenericResultView,
    TerminalCallView,
    TerminalResultView,
)

TAGS = {
    "div",
    "span",
    "pre",
    "details",
    "summary",
    "table",
    "tbody",
    "tr",
    "td",
    "ul",
    "li",
}
ATTRS = {"class", "style", "colspan"}
# What our own style and class values are made of: no quotes, no angle
# brackets, no url(), no expression(), no backslash escapes.
SAFE_VALUE = re.compile(r"[A-Za-z0-9 #%(),.:;_\-]*")


class Checked(HTMLParser):
    """Parse a card's HTML, failing on anything outside the allowlists."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, value in attrs:
            if name not in ATTRS:
                self.problems.append(f"attribute {name!r} on <{tag}>")
            value = value or ""
            if "javascript" in value.lower() or "url(" in value.lower():
                self.problems.append(f"attribute value {value!r}")
            if not SAFE_VALUE.fullmatch(value):
                self.problems.append(f"unexpected characters in {name}={value!r}")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.problems.append(f"self-closing <{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        if tag not in TAGS:
            self.problems.append(f"end tag </{tag}>")

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append(f"comment {data!r}")

    def handle_decl(self, decl: str) -> None:
        self.problems.append(f"declaration {decl!r}")

    def handle_pi(self, data: str) -> None:
        self.problems.append(f"processing instruction {data!r}")

    def unknown_decl(self, data: str) -> None:
        self.problems.append(f"CDATA or unknown declaration {data!r}")


def check(html: str) -> str:
    # The one style block is our constant, once, first in the card; no tool
    # text can open another (every "<" it holds is escaped).
    if THEME_STYLE in html:
        assert html.count("<style") == 1
        assert html.index(THEME_STYLE) == html.index(">") + 1
        html = html.replace(THEME_STYLE, "", 1)
    assert "<style" not in html
    parser = Checked()
    parser.feed(html)
    parser.close()
    assert parser.problems == []
    return "".join(parser.text)


def lines_of(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


# Each field: build a model holding the payload there, and say which text
# must show up in the card (the payload as drawn, line by line).
Field = Callable[[str], CardModel]


def _generic(**call: object) -> CardModel:
    return CardModel(tool="t", call=GenericCallView(title="t", **call))  # type: ignore[arg-type]


FIELDS: dict[str, tuple[Field, Callable[[str], str]]] = {
    "tool name": (lambda p: CardModel(tool=p), visible),
    "generic title": (
        lambda p: CardModel(tool="t", call=GenericCallView(title=p)),
        visible,
    ),
    "result title": (
        lambda p: CardModel(tool="t", result=GenericResultView(title=p)),
        visible,
    ),
    "location path": (
        lambda p: _generic(locations=[FileLocation(path=p, line=3)]),
        visible,
    ),
    "raw input string": (lambda p: _generic(raw_input=p), visible),
    "raw input value": (lambda p: _generic(raw_input={"k": [p]}), lambda p: ""),
    "raw input key": (lambda p: _generic(raw_input={p: 1}), lambda p: ""),
    "text block": (
        lambda p: CardModel(
            tool="t", result=GenericResultView(content=[{"type": "text", "text": p}])
        ),
        visible,
    ),
    "other block": (
        lambda p: CardModel(
            tool="t", result=GenericResultView(content=[{"type": p, "uri": p}])
        ),
        lambda p: "",
    ),
    "error block": (
        lambda p: CardModel(
            tool="t",
            status="error",
            is_error=True,
            result=GenericResultView(content=[{"type": "text", "text": p}]),
        ),
        visible,
    ),
    "command": (lambda p: CardModel(tool="b", call=TerminalCallView(title=p)), visible),
    "description": (
        lambda p: CardModel(tool="b", call=TerminalCallView(title="x", description=p)),
        visible,
    ),
    "terminal cwd": (
        lambda p: CardModel(tool="b", call=TerminalCallView(title="x", cwd=p)),
        lambda p: "",
    ),
    "session cwd": (
        lambda p: CardModel(tool="b", cwd=p, call=TerminalCallView(title="x")),
        lambda p: visible("cwd: " + p),
    ),
    "output": (
        lambda p: CardModel(
            tool="b",
            call=TerminalCallView(title="x"),
            result=TerminalResultView(output=p + "\n", exit_code=1),
        ),
        strip_ansi,
    ),
    "signal": (
        lambda p: CardModel(tool="b", result=TerminalResultView(output="", signal=p)),
        lambda p: "",
    ),
    "diff path": (
        lambda p: CardModel(
            tool="e",
            call=DiffCallView(
                title="edit", diffs=[FileDiff(path=p, old_text="a\n", new_text="b\n")]
            ),
        ),
        visible,
    ),
    "diff old text": (
        lambda p: CardModel(
            tool="e",
            result=DiffResultView(
                diffs=[FileDiff(path="f", old_text=p + "\nsame\n", new_text="same\n")]
            ),
        ),
        lambda p: "" if looks_binary(p) else p.replace("\r", "\n"),
    ),
    "diff new text": (
        lambda p: CardModel(
            tool="e",
            result=DiffResultView(
                diffs=[FileDiff(path="f", old_text=None, new_text=p)]
            ),
        ),
        lambda p: "" if looks_binary(p) else p.replace("\r", "\n"),
    ),
    "diff title": (
        lambda p: CardModel(
            tool="e",
            cwd="/srv",
            result=DiffResultView(
                title=p, diffs=[FileDiff(path="/srv/f", old_text=None, new_text="x")]
            ),
        ),
        visible,
    ),
    "trace": (
        lambda p: CardModel(
            tool="t", trace=(TraceEntry(stage=p, actor=p, decision=p, duration_ms=1.0),)
        ),
        visible,
    ),
    "approval": (lambda p: CardModel(tool="t", approval=p), lambda p: ""),
}


@pytest.mark.parametrize("field", sorted(FIELDS))
@pytest.mark.parametrize(("name", "payload"), PAYLOADS, ids=[n for n, _ in PAYLOADS])
def test_payload_stays_text(field: str, name: str, payload: str) -> None:
    build, shown = FIELDS[field]
    card = render_card(build(payload))
    assert set(card.data) == {
        "application/vnd.dsh.tool-card+json",
        "text/html",
        "text/markdown",
        "text/plain",
    }
    text = check(card.data["text/html"])
    for line in lines_of(visible(shown(payload))):
        assert line in text
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert "\x1b" not in card.data[mime]
        assert "\x00" not in card.data[mime]


def test_corpus_is_large_and_varied() -> None:
    assert len(PAYLOADS) >= 50
    assert len({name for name, _ in PAYLOADS}) == len(PAYLOADS)
    joined = "".join(p for _, p in PAYLOADS)
    for needle in (
        "<script",
        "onerror",
        "javascript:",
        "<svg",
        "\u202e",
        "\x00",
        "\x1b]8",
    ):
        assert needle in joined


@pytest.mark.parametrize(("name", "payload"), PAYLOADS, ids=[n for n, _ in PAYLOADS])
def test_markdown_part_renders_no_markup(name: str, payload: str) -> None:
    mistune = pytest.importorskip("mistune")
    model = CardModel(
        tool=payload,
        call=GenericCallView(
            title=payload, locations=[FileLocation(path=payload)], raw_input=payload
        ),
        result=GenericResultView(content=[{"type": "text", "text": payload}]),
    )
    terminal = CardModel(
        tool="b",
        call=TerminalCallView(title=payload, description=payload, cwd=payload),
        result=TerminalResultView(output=payload, signal=payload),
    )
    diff = CardModel(
        tool="e",
        result=DiffResultView(
            title=payload, diffs=[FileDiff(path=payload, old_text=payload, new_text="")]
        ),
    )
    for m in (model, terminal, diff):
        markdown = render_card(m).data["text/markdown"]
        # Our one wrapper opts the part out of MathJax; the rest is literal.
        assert markdown.startswith(MD_OPEN) and markdown.endswith(MD_CLOSE)
        rendered = mistune.html(markdown[len(MD_OPEN) : -len(MD_CLOSE)])
        seen = Tags()
        seen.feed(rendered)
        seen.close()
        assert seen.tags <= {"h4", "p", "em", "pre", "code", "ul", "li"}, rendered
        assert seen.attrs <= {("code", "class")}, rendered


MD_OPEN = '<div class="mathjax_ignore tex2jax_ignore">\n\n'
MD_CLOSE = "\n\n</div>\n"


class Tags(HTMLParser):
    """Record the tags and (tag, attribute) pairs of rendered Markdown."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: set[tuple[str, str]] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs.update((tag, name) for name, _ in attrs)
