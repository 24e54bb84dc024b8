"""Hostile tool text in JupyterLab: bounded cards, visible bidi, no TeX.

``hostile_text.ipynb`` calls a tool that returns 3 MB (issue 15 item 7),
shows a card and its Markdown fallback whose text holds U+202E, U+2066,
an escape sequence and ``$\\href{...}{click}$`` (items 10 and 11), an
approval prompt with the same in its header, and a control Markdown output
that MathJax does typeset, so the "no TeX" checks can fail.
"""

from __future__ import annotations

from typing import Any

from e2e_lab import TIMEOUT_MS, LabServer, page_errors, run_notebook
from playwright.sync_api import expect

SPEC, CALL, CARD, MARKDOWN, PROMPT, CONTROL, RAW = 2, 3, 4, 5, 6, 7, 8
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\x1b"


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def _output(page: Any, index: int) -> Any:
    return _cell(page, index).locator(".jp-OutputArea-output")


def test_hostile_text_is_bounded_visible_and_never_typeset(
    page: Any, lab_server: LabServer
) -> None:
    run_notebook(page, lab_server, "hostile_text.ipynb")
    # MathJax is on in this page: the control output is typeset.
    control = _output(page, CONTROL)
    expect(control.locator("mjx-container")).to_have_count(1, timeout=TIMEOUT_MS)

    # Item 7: a 3 MB result draws at most the card's limits.
    card = _cell(page, CALL).locator(".dsh-ToolCard")
    expect(card).to_have_attribute("data-status", "done", timeout=TIMEOUT_MS)
    expect(_output(page, CALL).last).to_have_text("3000000\n", timeout=TIMEOUT_MS)
    drawn = card.evaluate("el => el.textContent.length")
    assert 200_000 <= drawn < 201_000, drawn
    notice = card.locator(".dsh-ToolCard-notice")
    expect(notice).to_contain_text("2,800,000 of 3,000,000 characters not shown")

    # A hand-made payload over its own limits is still drawn within them.
    raw = _cell(page, RAW).locator(".dsh-ToolCard")
    expect(raw).to_have_count(2, timeout=TIMEOUT_MS)
    rows = raw.nth(0).locator(".dsh-ToolCard-line")
    assert rows.count() == 50
    expect(raw.nth(0).locator(".dsh-ToolCard-skip")).to_have_text(
        "\u22ef 4,950 more rows"
    )
    texts = raw.nth(1).locator(".dsh-ToolCard-text")
    lengths = texts.evaluate_all("els => els.map(e => e.textContent.length)")
    assert lengths == [1000, 1000], lengths

    # Item 10: bidi overrides, isolates and controls are shown, not obeyed.
    spoof = _cell(page, CARD).locator(".dsh-ToolCard")
    title = spoof.locator(".dsh-ToolCard-title").text_content() or ""
    assert title.startswith("report[U+202E]fdp.exe [U+2066]x[U+2069] [U+001B][2J")
    body = spoof.locator(".dsh-ToolCard-text").text_content() or ""
    assert "[U+202E]" in body and "[U+001B]" in body
    header = _output(page, PROMPT).locator(".widget-html-content").first
    expect(header).to_contain_text("rm[U+202E]txt.exe", timeout=TIMEOUT_MS)
    expect(header).to_contain_text("[U+2066]ok[U+2069]")
    for index in (CARD, MARKDOWN, PROMPT):
        text = _cell(page, index).locator(".jp-OutputArea").text_content() or ""
        assert not any(c in text for c in BIDI), (index, text)

    # Item 11: no TeX in tool text: not in the Markdown fallback, the
    # %%tool spec or the prompt; the literal text is there, no link.
    for index in (SPEC, MARKDOWN, PROMPT):
        area = _cell(page, index).locator(".jp-OutputArea")
        expect(area).to_contain_text("\\href{https://x.invalid}{click}")
        assert area.locator("mjx-container").count() == 0, index
        # (JupyterLab's own heading anchor, "#...", is not a link out.)
        links = area.locator("a[href*='x.invalid']:not(.jp-InternalAnchorLink)")
        assert links.count() == 0, index
    assert page_errors(page) == []
