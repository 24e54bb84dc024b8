"""The whole XSS corpus, in every card field, runs nothing in JupyterLab.

``xss_corpus.ipynb`` renders each payload of ``tests/xss_payloads.py``
into four cards (generic: tool, title, raw input key and value, content
blocks, location, result, approval, trace, cwd; terminal: command,
description, cwd, output, signal; diff: path, old and new text, in call
and result; a raw input string). One cell displays the cards' full
bundles, which the labextension renders; the next displays the
``text/html`` part alone. The notebook is run, so its outputs are
trusted: JupyterLab renders that HTML unsanitized and would run any
script in it. That is the hard case this test checks.

JupyterLab also runs MathJax over trusted HTML, so ``$...$`` in a tool
string would be typeset. The cards opt out (``mathjax_ignore``); MathJax's
own elements are still allowed in the audit (they run no payload), and the
last test checks that the HTML fallback shows every payload's text verbatim.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_lab import (
    TIMEOUT_MS,
    LabServer,
    close_page,
    new_page,
    page_errors,
    run_notebook,
    screenshot_on_failure,
)
from xss_payloads import PAYLOADS, XSS_FLAG

from dsh_nb.cards.escape import visible
from dsh_nb.cards.markup import THEME_STYLE

PAYLOAD_MODULE = Path(__file__).resolve().parents[1] / "xss_payloads.py"
KINDS = ("generic", "terminal", "diff", "raw_string")
CARDS = len(KINDS) * len(PAYLOADS)
RENDERER_CELL = 2
HTML_CELL = 3
# Everything either rendering may create; a payload tag would show up here.
RENDERER_TAGS = {
    "button",
    "details",
    "div",
    "li",
    "path",
    "pre",
    "span",
    "summary",
    "svg",
    "table",
    "tbody",
    "td",
    "tr",
    "ul",
}
HTML_TAGS = {
    "details",
    "div",
    "li",
    "pre",
    "span",
    "summary",
    "table",
    "tbody",
    "td",
    "tr",
    "ul",
}
LIVE = "script, img, iframe, object, embed, a, form, input, video, audio, "
LIVE += "math, style, link, meta, base, template, marquee, body, source, foreignObject"
# MathJax output (lab typesets trusted HTML): its tags are checked apart.
TYPESET = "mjx-container"
MATHML = {"math", "mrow", "mi", "mo", "mn", "mtext", "mspace", "mstyle", "msup"}
MATHML |= {"msub", "msubsup", "mfrac", "msqrt", "mroot", "mtable", "mtr", "mtd"}

# Per cell: tags, attributes that could run code or fetch, and texts.
AUDIT = """(cell) => {
    const outputs = [...cell.querySelectorAll('.jp-OutputArea-output')];
    const tags = new Set();
    const bad = [];
    // The card's own theme block (one constant <style>), not a payload's.
    const ours = el => el.localName === 'style' && el.textContent === THEME;
    let themes = 0;
    for (const out of outputs) {
        for (const el of out.querySelectorAll('*')) {
            if (ours(el)) {
                themes += 1;
                continue;
            }
            if (!el.closest(TYPESET)) {
                tags.add(el.tagName.toLowerCase());
            }
            for (const attr of el.attributes) {
                const name = attr.name.toLowerCase();
                const value = attr.value.toLowerCase();
                const urlish = ['href', 'xlink:href', 'src', 'srcdoc', 'action',
                    'formaction', 'background', 'poster', 'data'].includes(name);
                const css = name === 'style'
                    && /url\\(|expression|javascript|\\\\/.test(value);
                if (name.startsWith('on') || urlish || css) {
                    bad.push(`<${el.tagName} ${attr.name}="${attr.value.slice(0, 60)}">`);
                }
            }
        }
    }
    const text = sel => [...cell.querySelectorAll(sel)].map(e => e.textContent);
    return {
        outputs: outputs.length,
        trusted: outputs.filter(o => o.classList.contains('jp-mod-trusted')).length,
        html: cell.querySelectorAll('.jp-RenderedHTMLCommon').length,
        renderer: cell.querySelectorAll('.dsh-ToolCardRenderer').length,
        tags: [...tags].sort(),
        bad,
        // MathJax's assistive <math> copy is not a payload's markup.
        themes,
        live: [...cell.querySelectorAll(LIVE)].filter(
            e => !(e.localName === 'math' && e.closest(TYPESET)) && !ours(e)).length,
        typeset: outputs.map((o, i) => o.querySelector(TYPESET) ? i : -1)
            .filter(i => i >= 0),
        typesetTags: [...new Set([...cell.querySelectorAll(TYPESET + ' *')]
            .map(e => e.localName))].sort(),
        foreignSvg: cell.querySelectorAll(
            '.jp-OutputArea-output svg:not(.dsh-ToolCard-icon)').length,
        titles: text('.dsh-ToolCard-title'),
        texts: text('.dsh-ToolCard-text'),
        locations: text('.dsh-ToolCard-location'),
        inputs: text('.dsh-ToolCard-input'),
    };
}""".replace("LIVE", repr(LIVE)).replace("TYPESET", repr(TYPESET))
AUDIT = AUDIT.replace(
    "THEME", json.dumps(THEME_STYLE.removeprefix("<style>").removesuffix("</style>"))
)


def _mismatch(seen: list[str], expected: list[str]) -> str:
    """Name the first differing entry, for a readable failure."""
    if len(seen) != len(expected):
        return f"{len(seen)} entries, expected {len(expected)}"
    for i, (got, want) in enumerate(zip(seen, expected, strict=True)):
        if got != want:
            name = PAYLOADS[i % len(PAYLOADS)][0]
            return f"entry {i} ({name}): {got[:80]!r} != {want[:80]!r}"
    return ""


@pytest.fixture(scope="module")
def corpus(browser: Any, lab_server: LabServer) -> Iterator[tuple[Any, list[str]]]:
    """Run ``xss_corpus.ipynb`` once; yield the page and the dialogs seen."""
    shutil.copy2(PAYLOAD_MODULE, lab_server.root / PAYLOAD_MODULE.name)
    page = new_page(browser, lab_server)
    dialogs: list[str] = []

    def record(dialog: Any) -> None:
        dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", record)
    try:
        run_notebook(page, lab_server, "xss_corpus.ipynb")
        # 800 cards, each text/html with its theme block: JupyterLab takes
        # longer than one default timeout to lay them all out.
        started = time.monotonic()
        page.wait_for_function(
            "([cell, n]) => cell.querySelectorAll('.jp-OutputArea-output').length >= n",
            arg=[_cell(page, HTML_CELL).element_handle(), CARDS],
            timeout=4 * TIMEOUT_MS,
        )
        print(f"corpus laid out in {time.monotonic() - started:.1f} s")
        # Let a would-be onerror, onload or ontoggle handler fire.
        page.wait_for_timeout(1000)
        yield page, dialogs
    finally:
        close_page(page)
        lab_server.shutdown_sessions()


@pytest.fixture(autouse=True)
def _screenshot(
    request: pytest.FixtureRequest, corpus: tuple[Any, list[str]]
) -> Iterator[None]:
    yield
    screenshot_on_failure(request, corpus[0])


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def test_no_payload_runs_in_either_rendering(corpus: tuple[Any, list[str]]) -> None:
    page, dialogs = corpus
    trusted = page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.widgets
            .filter(c => c.model.type === 'code').map(c => c.model.trusted)"""
    )
    assert trusted == [True, True, True]
    generic = [p for _, p in PAYLOADS]

    ours = _cell(page, RENDERER_CELL).evaluate(AUDIT)
    assert ours["outputs"] == CARDS
    assert ours["renderer"] == CARDS and ours["html"] == 0  # the labextension won
    assert set(ours["tags"]) <= RENDERER_TAGS, ours["tags"]
    assert ours["bad"] == []
    assert ours["live"] == 0 and ours["foreignSvg"] == 0
    assert ours["typeset"] == []
    # Each payload arrived, as text, in each field checked, with control and
    # bidi characters made visible exactly as the text/html card shows them.
    seen = [visible(p) for p in generic]
    assert _mismatch(ours["titles"], seen * len(KINDS)) == ""
    # One text each: the result's content replaces the call's (contract 7.3).
    assert _mismatch(ours["texts"], seen) == ""
    assert _mismatch(ours["locations"][: len(PAYLOADS)], [f"{p}:3" for p in seen]) == ""
    assert _mismatch(ours["inputs"][len(PAYLOADS) :], seen) == ""

    html = _cell(page, HTML_CELL).evaluate(AUDIT)
    assert html["outputs"] == CARDS
    # Trusted outputs: lab rendered the HTML as is, with no sanitizer.
    assert html["html"] == CARDS and html["trusted"] == CARDS
    assert html["renderer"] == 0
    assert set(html["tags"]) <= HTML_TAGS, html["tags"]
    assert html["bad"] == []
    assert html["themes"] == CARDS  # exactly one theme block a card
    assert html["live"] == 0 and html["foreignSvg"] == 0
    assert all(t.startswith("mjx-") or t in MATHML for t in html["typesetTags"])

    assert page.evaluate(f"() => typeof window[{XSS_FLAG!r}]") == "undefined"
    assert dialogs == []
    assert page_errors(page) == []


def test_html_fallback_shows_tool_text_verbatim(
    corpus: tuple[Any, list[str]],
) -> None:
    page, _ = corpus
    html = _cell(page, HTML_CELL).evaluate(AUDIT)
    assert html["typeset"] == []
    shown = [visible(p) for _, p in PAYLOADS]
    assert _mismatch(html["titles"], shown * len(KINDS)) == ""
