"""The labextension renders diff, terminal and generic cards in JupyterLab.

One page runs ``cards.ipynb`` once for the module; the tests then check
what it shows, the file-location test last because it opens editor tabs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from e2e_lab import (
    SCREENSHOTS,
    TIMEOUT_MS,
    LabServer,
    close_page,
    new_page,
    page_errors,
    run_notebook,
    screenshot_on_failure,
)


@pytest.fixture(scope="module")
def cards(browser: Any, lab_server: LabServer) -> Iterator[tuple[Any, str]]:
    """Run ``cards.ipynb`` once; yield the page and the notebook's id."""
    page = new_page(browser, lab_server)
    try:
        notebook_id = run_notebook(page, lab_server, "cards.ipynb")
        page.locator(".dsh-ToolCard").nth(5).wait_for(timeout=TIMEOUT_MS)
        yield page, notebook_id
    finally:
        close_page(page)
        lab_server.shutdown_sessions()


@pytest.fixture(autouse=True)
def _screenshot(
    request: pytest.FixtureRequest, cards: tuple[Any, str]
) -> Iterator[None]:
    yield
    screenshot_on_failure(request, cards[0])


def _card(page: Any, call_id: str) -> Any:
    """The rendered card of ``call_id``, scrolled into view."""
    title = {
        "call-diff-1": "Edit data/example.py",
        "call-term-1": "pytest -q tests/test_app.py",
        "call-term-2": "ls --color=always data",
        "call-term-3": "sleep 100",
        "call-term-4": "seq 100",
        "call-read-1": "Read data/example.py",
    }[call_id]
    card = page.locator(".dsh-ToolCard").filter(
        has=page.locator(".dsh-ToolCard-title", has_text=title)
    )
    # Off-screen cells are not laid out, so their innerText is empty.
    card.scroll_into_view_if_needed()
    return card


def test_diff_card_is_rendered_by_the_labextension(cards: tuple[Any, str]) -> None:
    page, _ = cards
    card = _card(page, "call-diff-1")
    assert card.count() == 1
    assert page.locator(".dsh-ToolCard").count() == 6
    # Our renderer won over text/html: the HTML fallback is nowhere.
    outputs = page.locator(".jp-OutputArea-output")
    assert outputs.get_by_text("HTML fallback").count() == 0
    assert outputs.locator(".jp-RenderedHTMLCommon").count() == 0
    assert "dsh-mod-done" in (card.get_attribute("class") or "")

    files = card.locator(".dsh-ToolCard-file")
    assert files.count() == 2
    example = files.nth(0)
    headers = example.locator(".dsh-ToolCard-hunkHeader").all_inner_texts()
    assert len(headers) == 2, headers
    assert re.match(r"@@ -5,7 \+5,7 @@", headers[0].strip()), headers
    assert re.match(r"@@ -16,6 \+16,7 @@", headers[1].strip()), headers
    removed = example.locator(".dsh-ToolCard-line.dsh-mod-removed")
    added = example.locator(".dsh-ToolCard-line.dsh-mod-added")
    assert removed.count() == 1 and added.count() == 2
    assert 'return f"Hello, {name}!"' in removed.first.inner_text()
    assert added.first.locator(".dsh-ToolCard-sign").inner_text() == "+"
    row = added.first.locator("td").all_inner_texts()
    assert row[:3] == ["", "8", "+"], row  # old line no, new line no, sign
    assert example.locator(".dsh-ToolCard-stat").all_inner_texts() == ["+2", "\u22121"]

    new_file = files.nth(1)
    assert new_file.locator(".dsh-ToolCard-badge").inner_text() == "new file"
    assert new_file.locator(".dsh-ToolCard-line.dsh-mod-added").count() == 3
    assert new_file.locator(".dsh-ToolCard-line.dsh-mod-removed").count() == 0

    # A hunk collapses and expands from its header.
    hunk = example.locator(".dsh-ToolCard-hunk").first
    first_row = hunk.locator(".dsh-ToolCard-line").first
    hunk.locator(".dsh-ToolCard-hunkHeader").click()
    assert first_row.is_hidden()
    hunk.locator(".dsh-ToolCard-hunkHeader").click()
    assert first_row.is_visible()

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    card.screenshot(path=str(SCREENSHOTS / "card-diff.png"))
    light = _background(card)
    _set_theme(page, card, dark=True)
    try:
        dark = _background(card)
        card.screenshot(path=str(SCREENSHOTS / "card-diff-dark.png"))
    finally:
        _set_theme(page, card, dark=False)
    # The card follows the theme through the --jp-* variables.
    assert sum(light) / 3 > 200 and sum(dark) / 3 < 80, (light, dark)
    assert page_errors(page) == []


def _background(card: Any) -> tuple[int, ...]:
    """The card's computed background colour as an (r, g, b) tuple."""
    colour: str = card.evaluate("el => getComputedStyle(el).backgroundColor")
    return tuple(int(v) for v in re.findall(r"\d+", colour)[:3])


def _set_theme(page: Any, card: Any, *, dark: bool) -> None:
    """Switch the lab theme; wait until the card has repainted and the
    splash screen is gone.

    JupyterLab (4.6, ``@jupyterlab/apputils-extension:splash``) shows one
    shared splash element per theme change and, when the change is done,
    removes it from ``document.body`` 200 ms later. Two changes inside
    those 200 ms schedule two removals of the one element, and the second
    throws "Failed to execute 'removeChild' on 'Node'" as an uncaught page
    error, which every later test of this page then saw (a flake). So a
    change is finished only once the splash is gone.
    """
    theme = "JupyterLab Dark" if dark else "JupyterLab Light"
    page.evaluate(
        "theme => window.jupyterapp.commands.execute('apputils:change-theme', {theme})",
        theme,
    )
    page.wait_for_function(
        """([el, dark]) => {
            const [r, g, b] = getComputedStyle(el).backgroundColor
                .match(/\\d+/g).slice(0, 3).map(Number);
            const mean = (r + g + b) / 3;
            return dark ? mean < 80 : mean > 200;
        }""",
        arg=[card.element_handle(), dark],
    )
    page.wait_for_function("() => !document.getElementById('jupyterlab-splash')")


def test_terminal_card_shows_exit_pill_and_copy(cards: tuple[Any, str]) -> None:
    page, _ = cards
    failed = _card(page, "call-term-1")
    pill = failed.locator(".dsh-ToolCard-exit")
    assert pill.inner_text() == "exit 1"
    assert "dsh-mod-failed" in (pill.get_attribute("class") or "")
    assert failed.locator(".dsh-ToolCard-description").inner_text() == (
        "Run the app tests"
    )
    assert failed.locator(".dsh-ToolCard-cwd").inner_text() == "in /srv/project"
    output = failed.locator(".dsh-ToolCard-output")
    assert "\x1b" not in output.inner_text()
    # The kernel parsed ANSI SGR into spans: red "F", green dots, bold.
    spans = output.locator("span").evaluate_all(
        "els => els.map(e => [e.textContent, e.style.color, e.className])"
    )
    assert ["F", "rgb(231, 92, 88)", ""] in spans, spans
    assert [s for s in spans if s[1] == "rgb(0, 162, 80)"], spans
    assert [s for s in spans if "dsh-ansi-bold" in s[2]], spans

    ok = _card(page, "call-term-2").locator(".dsh-ToolCard-exit")
    assert ok.inner_text() == "exit 0"
    assert "dsh-mod-ok" in (ok.get_attribute("class") or "")
    colours = _card(page, "call-term-2").locator(".dsh-ToolCard-output span")
    assert colours.evaluate_all("els => els.map(e => e.style.color)") == [
        "rgb(0, 135, 255)",  # 38;5;33 from the xterm palette
        "rgb(255, 100, 0)",  # 38;2;255;100;0 as given
    ]
    signal = _card(page, "call-term-3").locator(".dsh-ToolCard-exit")
    assert signal.inner_text() == "SIGTERM"
    assert _card(page, "call-term-3").locator(".dsh-ToolCard-output").count() == 0

    # Long output starts collapsed behind a "show all" control.
    long = _card(page, "call-term-4")
    pre = long.locator(".dsh-ToolCard-output")
    more = long.locator("button.dsh-ToolCard-more")
    assert more.inner_text() == "Show all 100 lines"
    collapsed = pre.evaluate("el => el.clientHeight")
    assert collapsed < pre.evaluate("el => el.scrollHeight")
    more.click()
    assert more.inner_text() == "Show less"
    assert pre.evaluate("el => el.clientHeight") > collapsed

    copy = failed.locator("button.dsh-ToolCard-copy")
    assert copy.inner_text() == "Copy"
    copy.click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.dsh-ToolCard-copy')]"
        ".some(b => b.textContent === 'Copied')"
    )
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert "1 failed, 2 passed in 0.12s" in copied
    assert "\x1b" not in copied
    assert page_errors(page) == []


def _cursor_line(page: Any) -> int:
    line: int = page.evaluate(
        """() => {
            const w = window.jupyterapp.shell.currentWidget;
            return w.content.editor.getCursorPosition().line + 1;
        }"""
    )
    return line


def _current_path(page: Any) -> str:
    path: str = page.evaluate(
        "() => window.jupyterapp.shell.currentWidget?.context?.path ?? ''"
    )
    return path


def test_file_location_opens_the_editor_at_the_line(cards: tuple[Any, str]) -> None:
    page, notebook_id = cards
    links = _card(page, "call-read-1").locator("button.dsh-ToolCard-location")
    assert links.all_inner_texts()[0] == "data/example.py:12"

    # Relative path, resolved against the notebook's folder.
    links.nth(0).click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget?.context?.path"
        " === 'data/example.py'"
    )
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.editor"
        ".getCursorPosition().line === 11"
    )
    assert _cursor_line(page) == 12
    status = page.locator(".jp-StatusBar-Widget", has_text=re.compile(r"Ln \d+"))
    assert re.search(r"Ln 12, Col 1", status.first.inner_text())
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
    assert "example.py" in tab.first.inner_text()

    # Absolute path inside the server root: same file, line 5.
    page.evaluate(f"() => window.jupyterapp.shell.activateById({notebook_id!r})")
    links.nth(1).click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget?.context?.path"
        " === 'data/example.py' && window.jupyterapp.shell.currentWidget"
        ".content.editor.getCursorPosition().line === 4"
    )
    assert _current_path(page) == "data/example.py"
    editors = page.evaluate(
        "() => [...window.jupyterapp.shell.widgets('main')]"
        ".filter(w => w.context?.path === 'data/example.py').length"
    )
    assert editors == 1  # the open editor was reused, not duplicated

    # Outside the server root: not opened, marked as unresolved.
    page.evaluate(f"() => window.jupyterapp.shell.activateById({notebook_id!r})")
    outside = links.nth(2)
    outside.click()
    page.wait_for_function(
        "el => el.classList.contains('dsh-mod-unresolved')",
        arg=outside.element_handle(),
    )
    assert "outside the Jupyter server root" in (outside.get_attribute("title") or "")

    # A diff's path opens at its first changed line (new side).
    diff_links = _card(page, "call-diff-1").locator("button.dsh-ToolCard-location")
    assert diff_links.all_text_contents() == ["data/example.py:8", "data/NOTES.md:1"]
    diff_links.nth(0).click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget?.context?.path"
        " === 'data/example.py' && window.jupyterapp.shell.currentWidget"
        ".content.editor.getCursorPosition().line === 7"
    )
    # A proposed new file does not exist yet: no error dialog, a tooltip.
    page.evaluate(f"() => window.jupyterapp.shell.activateById({notebook_id!r})")
    missing = diff_links.nth(1)
    missing.click()
    page.wait_for_function(
        "el => el.classList.contains('dsh-mod-unresolved')",
        arg=missing.element_handle(),
    )
    assert "not found" in (missing.get_attribute("title") or "")
    assert page.locator(".jp-Dialog").count() == 0
    assert page_errors(page) == []
