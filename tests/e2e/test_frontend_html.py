"""The ``text/html`` fallbacks as VS Code, Colab and nbconvert show them.

VS Code and Colab cannot run here, so each is emulated in headless
Chromium as far as their output area matters to our HTML: a page with VS
Code's ``--vscode-*`` variables (the Dark Modern and Light Modern values),
its background and its ``vscode-dark`` / ``vscode-light`` body class; a
plain page under ``prefers-color-scheme`` light and dark (what Colab's
output frame and nbviewer give: none of JupyterLab's or VS Code's
variables); and the pages ``jupyter nbconvert --to html`` writes (light
and ``--theme dark``), which nbviewer shows. On each, every visible text
node of the cards and the evaluation report is measured: WCAG contrast of
its colour (opacity and translucent backgrounds composed) on what is
really behind it, at least 4.5:1. ``DSH_SHOTS`` names a folder for
screenshots of a card and of an approval in the emulated VS Code dark.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat
import pytest

from dsh_nb.cards import CardModel, render_card
from dsh_nb.cards.question import approval_question
from dsh_nb.evals import CallRecord, CaseInfo, EvalReport, TrialResult
from dsh_nb.notebook.stdinprompt import STDIN_NOTE
from dsh_nb.tools import (
    DiffResultView,
    FileDiff,
    GenericCallView,
    GenericResultView,
    TerminalCallView,
    TerminalResultView,
)

VSCODE = {
    "vscode-dark": {
        "--vscode-foreground": "#cccccc",
        "--vscode-editor-foreground": "#cccccc",
        "--vscode-editor-background": "#1f1f1f",
        "--vscode-descriptionForeground": "#9d9d9d",
        "--vscode-textCodeBlock-background": "#2b2b2b",
        "--vscode-panel-border": "#2b2b2b",
        "--vscode-input-background": "#313131",
        "--vscode-input-foreground": "#cccccc",
        "--vscode-input-border": "#3c3c3c",
        "--vscode-errorForeground": "#f85149",
        "--vscode-textLink-foreground": "#4daafc",
    },
    "vscode-light": {
        "--vscode-foreground": "#3b3b3b",
        "--vscode-editor-foreground": "#3b3b3b",
        "--vscode-editor-background": "#ffffff",
        "--vscode-descriptionForeground": "#3b3b3b",
        "--vscode-textCodeBlock-background": "#f8f8f8",
        "--vscode-panel-border": "#e5e5e5",
        "--vscode-input-background": "#ffffff",
        "--vscode-input-foreground": "#3b3b3b",
        "--vscode-input-border": "#cecece",
        "--vscode-errorForeground": "#f85149",
        "--vscode-textLink-foreground": "#0d9488",
    },
}
MIN_CONTRAST = 4.5

CONTRAST_JS = """
(root) => {
  root.querySelectorAll('details').forEach(d => { d.open = true; });
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom, alpha) =>
    [0, 1, 2].map(i => top[i] * alpha + bottom[i] * (1 - alpha));
  const backdrop = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) layers.push(c);
      if (c && c[3] >= 1) break;
    }
    let base = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) {
      base = over(layers[i], base, layers[i][3]);
    }
    return base;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const text = node.textContent.trim();
    const el = node.parentElement;
    if (!text || !el.checkVisibility()) continue;
    let alpha = 1;
    for (let e = el; e; e = e.parentElement) {
      alpha *= Number(getComputedStyle(e).opacity);
    }
    const fg = parse(getComputedStyle(el).color);
    const bg = backdrop(el);
    const seen = over(fg, bg, fg[3] * alpha);
    const [a, b] = [lum(seen), lum(bg)];
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    out.push({text: text.slice(0, 40), ratio, color: getComputedStyle(el).color,
              bg: 'rgb(' + bg.map(Math.round).join(',') + ')'});
  }
  return out;
}
"""


# -- what is drawn -----------------------------------------------------------------


def cards() -> list[str]:
    """One card of each kind and state, as the static HTML part."""
    old = "".join(f"old line {i}\n" for i in range(2_000))
    new = "".join(f"new line {i}\n" for i in range(2_000))
    models = [
        CardModel(
            tool="add",
            status="done",
            call=GenericCallView(title="add 2 and 3", raw_input={"a": 2, "b": 3}),
            result=GenericResultView(content=[{"type": "text", "text": "5"}]),
            approval="allowed-once",
        ),
        CardModel(
            tool="delete",
            status="awaiting-approval",
            call=GenericCallView(title="delete a.txt", raw_input={"path": "a.txt"}),
        ),
        CardModel(
            tool="fetch",
            status="error",
            is_error=True,
            result=GenericResultView(
                content=[{"type": "text", "text": "Error: connection refused"}]
            ),
            approval="rejected",
        ),
        CardModel(
            tool="shell",
            status="done",
            call=TerminalCallView(title="ls -la", cwd="/work"),
            result=TerminalResultView(output="total 0\nREADME.md\n", exit_code=2),
        ),
        CardModel(
            tool="edit",
            status="done",
            result=DiffResultView(
                diffs=[FileDiff(path="rewrite.py", old_text=old, new_text=new)]
            ),
        ),
    ]
    return [render_card(m).data["text/html"] for m in models]


def report_html() -> str:
    """A report with five tools whose names are long, and one failure."""
    tools = [f"lookup_customer_record_by_region_{i}" for i in range(5)]
    trials, infos = [], {}
    for n, name in enumerate(tools):
        case = f"case-{n}"
        infos[case] = CaseInfo(
            id=case,
            prompt=f"use {name}",
            expect=name,
            expected=(name,),
            tags=(),
            display_names={name: name},
        )
        for t in range(3):
            record = CallRecord(
                step=1,
                name=name,
                arguments={"region": "north"},
                status="done",
                code=None,
                result={"callId": "c", "content": [{"type": "text", "text": "ok"}]},
            )
            passed = (n + t) % 3 != 0
            trials.append(
                TrialResult(
                    case_id=case,
                    trial=t + 1,
                    variant="default",
                    selected=True,
                    args_valid_first_try=True,
                    args_correct=passed,
                    recovered=False,
                    passed=passed,
                    steps=1,
                    latency=0.2,
                    calls=(record,),
                    messages=({"role": "user", "content": f"use {name}"},),
                )
            )
    report = EvalReport(trials, cases=infos, variants=("default",))
    return str(report._repr_html_())


def stdin_approval_html() -> str:
    """The card awaiting approval, the note under it, and VS Code's input box.

    The input box is drawn by this page as VS Code draws one for an
    ``input_request``; its text is the kernel's own prompt line.
    """
    card = render_card(
        CardModel(
            tool="delete",
            status="awaiting-approval",
            call=GenericCallView(title="delete a.txt", raw_input={"path": "a.txt"}),
        )
    ).data["text/html"]
    prompt = approval_question(
        "delete", reason="deleting is irreversible", arguments={"path": "a.txt"}
    ).line()
    box = (
        "<div style='margin:6px 0;font-family:sans-serif;font-size:13px'>"
        f"<div>{prompt.replace('<', '&lt;')}</div>"
        "<input value='s' style='width:60%;margin-top:4px;padding:3px 6px;"
        "background:var(--vscode-input-background);color:var(--vscode-input-foreground);"
        "border:1px solid var(--vscode-input-border)'></div>"
    )
    return card + f"<div class='dsh-approval'><i>{STDIN_NOTE}</i></div>" + box


def page(body: str, theme: str | None) -> str:
    """A page like VS Code's output webview (``theme``) or a plain one."""
    if theme is None:
        return f"<!doctype html><html><body>{body}</body></html>"
    css = ";".join(f"{k}:{v}" for k, v in VSCODE[theme].items())
    return (
        "<!doctype html><html><head><style>"
        f":root{{{css}}}"
        "body{background:var(--vscode-editor-background);"
        "color:var(--vscode-foreground);font-family:sans-serif;font-size:13px}"
        f"</style></head><body class='{theme}'>"
        f"<div class='output' style='width:950px'>{body}</div></body></html>"
    )


# -- the browser -------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium(browser: Any) -> Any:
    """The session's Chromium: a second ``sync_playwright`` in one thread
    fails while the session's is running."""
    return browser


def measure(
    chromium: Any, html: str, scheme: str = "light", roots: str = "body"
) -> list[dict[str, Any]]:
    """Every visible text under ``roots`` with its contrast on its backdrop."""
    context = chromium.new_context(
        color_scheme=scheme, viewport={"width": 1100, "height": 900}
    )
    try:
        tab = context.new_page()
        tab.set_content(html)
        found: list[dict[str, Any]] = []
        for root in tab.query_selector_all(roots):
            found.extend(tab.evaluate(CONTRAST_JS, root))
        return found
    finally:
        context.close()


def low(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in found if f["ratio"] < MIN_CONTRAST]


@pytest.mark.parametrize("theme", ["vscode-dark", "vscode-light"])
def test_cards_and_report_read_in_vscode(chromium: Any, theme: str) -> None:
    body = "".join(cards()) + report_html() + stdin_approval_html()
    found = measure(chromium, page(body, theme))
    assert len(found) > 100
    assert low(found) == [], low(found)
    worst = min(found, key=lambda f: f["ratio"])
    print(f"{theme}: {len(found)} texts, lowest contrast {worst['ratio']:.2f} {worst}")


def test_a_vscode_dark_card_is_dark(chromium: Any) -> None:
    """The card follows VS Code's theme, not a white box on a dark page."""
    context = chromium.new_context()
    try:
        tab = context.new_page()
        tab.set_content(page(cards()[0], "vscode-dark"))
        background = tab.eval_on_selector(
            ".dsh-ToolCard", "e => getComputedStyle(e).backgroundColor"
        )
        colour = tab.eval_on_selector(".dsh-ToolCard", "e => getComputedStyle(e).color")
    finally:
        context.close()
    assert background == "rgb(31, 31, 31)" and colour == "rgb(204, 204, 204)"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_cards_read_on_a_plain_page_in_either_scheme(
    chromium: Any, scheme: str
) -> None:
    """Colab's output frame and nbviewer: no theme variables at all."""
    body = "".join(cards()) + report_html()
    found = measure(chromium, page(body, None), scheme)
    assert low(found) == [], low(found)
    worst = min(found, key=lambda f: f["ratio"])
    print(f"plain page, {scheme}: lowest contrast {worst['ratio']:.2f}")


def nbconvert_page(theme: str) -> str:
    """The page ``jupyter nbconvert --to html --theme=THEME`` writes, made by
    the exporter that command runs (in this process: a second Python start
    and its imports cost about 7 s of CPU a theme)."""
    from nbconvert import HTMLExporter

    nb = nbformat.v4.new_notebook()
    for html in [*cards(), report_html()]:
        cell = nbformat.v4.new_code_cell("%call x")
        cell.outputs = [
            nbformat.v4.new_output(
                "display_data", data={"text/html": html, "text/plain": "card"}
            )
        ]
        nb.cells.append(cell)
    body, _ = HTMLExporter(theme=theme).from_notebook_node(nb)
    return str(body)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_nbconvert_page_reads(chromium: Any, theme: str) -> None:
    html = nbconvert_page(theme)
    assert "dsh-ToolCard" in html
    # Our outputs only: the page's own prompts and code are nbconvert's.
    found = measure(chromium, html, roots=".dsh-ToolCard, .dsh-EvalReport")
    assert len(found) > 100
    assert low(found) == [], low(found)
    worst = min(found, key=lambda f: f["ratio"])
    print(f"nbconvert {theme}: lowest contrast {worst['ratio']:.2f}")


def test_the_shortened_rewrite_shows_both_sides_in_the_browser(chromium: Any) -> None:
    context = chromium.new_context()
    try:
        tab = context.new_page()
        tab.set_content(page(cards()[4], "vscode-dark"))
        code = tab.inner_text(".dsh-ToolCard-diff")
    finally:
        context.close()
    rows = code.splitlines()
    removed = [r for r in rows if r.startswith("-old line")]
    added = [r for r in rows if r.startswith("+new line")]
    assert len(removed) == len(added) == 100
    assert removed[0] == "-old line 0" and added[0] == "+new line 0"
    assert sum("\u22ef 1,900 more rows" in r for r in rows) == 2
    assert "shortened here: 200 of 2,000 rows drawn" in code


def test_the_report_fits_a_950_pixel_output_area(chromium: Any) -> None:
    context = chromium.new_context(viewport={"width": 1100, "height": 900})
    try:
        tab = context.new_page()
        tab.set_content(page(report_html(), "vscode-light"))
        widths = tab.eval_on_selector_all(
            ".dsh-EvalReport table",
            "ts => ts.map(t => t.getBoundingClientRect().width)",
        )
        report = tab.eval_on_selector(".dsh-EvalReport", "e => e.scrollWidth")
    finally:
        context.close()
    print(f"report tables: {[round(w) for w in widths]} px wide; report {report} px")
    assert widths and max(widths) <= 950
    assert report <= 950


def test_screenshots_in_emulated_vscode_dark(chromium: Any, tmp_path: Path) -> None:
    folder = Path(os.environ.get("DSH_SHOTS", str(tmp_path)))
    folder.mkdir(parents=True, exist_ok=True)
    context = chromium.new_context(viewport={"width": 1000, "height": 700})
    try:
        tab = context.new_page()
        for name, body in (
            ("card-vscode-dark.png", cards()[3] + cards()[0]),
            ("approval-vscode-dark.png", stdin_approval_html()),
            ("diff-vscode-dark.png", cards()[4]),
        ):
            tab.set_content(page(body, "vscode-dark"))
            tab.locator(".output").screenshot(path=str(folder / name))
            assert (folder / name).stat().st_size > 1000
    finally:
        context.close()
