"""Tables and tracebacks on cards, as a browser shows them in JupyterLab.

One page runs ``tables.ipynb`` once for the module: a ``-> pd.DataFrame``
tool cut to 5 of 1,000 rows, a list of records, and a tool that raises,
each drawn by the labextension; then the same three cards' ``text/html``
fallback alone. The tests look at what the page shows: header, rows,
right-aligned numbers, empty nulls, the row count, the model's text one
click away, the folded traceback, in the light and the dark theme.
"""

from __future__ import annotations

import json
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
from playwright.sync_api import expect

HEADER = ["day", "units", "price", "note"]
HOSTILE = '<img src=x onerror="window.__dsh_xss=1">'


@pytest.fixture(scope="module")
def tables(browser: Any, lab_server: LabServer) -> Iterator[Any]:
    page = new_page(browser, lab_server)
    try:
        run_notebook(page, lab_server, "tables.ipynb")
        page.locator(".jp-RenderedHTMLCommon .dsh-ToolCard").nth(2).wait_for(
            timeout=TIMEOUT_MS
        )
        yield page
    finally:
        close_page(page)
        lab_server.shutdown_sessions()


@pytest.fixture(autouse=True)
def _screenshot(request: pytest.FixtureRequest, tables: Any) -> Iterator[None]:
    yield
    screenshot_on_failure(request, tables)


def _rendered(page: Any, title: str) -> Any:
    """The labextension's card titled ``title`` (not the HTML fallback)."""
    card = page.locator(".jp-OutputArea-output > .dsh-ToolCard").filter(
        has=page.locator(".dsh-ToolCard-title", has_text=title)
    )
    card.first.scroll_into_view_if_needed()
    return card.first


def _fallback(page: Any, index: int) -> Any:
    card = page.locator(".jp-RenderedHTMLCommon .dsh-ToolCard").nth(index)
    card.scroll_into_view_if_needed()
    return card


def _texts(rows: Any) -> list[list[str]]:
    out: list[list[str]] = rows.evaluate_all(
        "rows => rows.map(r => [...r.children].map(c => c.textContent))"
    )
    return out


def _align(cell: Any) -> str:
    return str(cell.evaluate("el => getComputedStyle(el).textAlign"))


def test_a_dataframe_card_is_a_table_with_its_row_count(tables: Any) -> None:
    card = _rendered(tables, "sales")
    table = card.locator("table.dsh-ToolCard-table")
    assert table.count() == 1
    rows = _texts(table.locator("tr"))
    assert rows[0] == HEADER
    assert rows[1] == ["2026-03-01T00:00:00", "0", "1234.5", HOSTILE]
    assert rows[2][1:3] == ["", "1235.5"]  # a null units: an empty cell
    assert rows[3][2] == ""  # NaN price: null, empty
    assert len(rows) == 1 + 5
    assert card.locator(".dsh-ToolCard-rows").inner_text() == "5 of 1,000 rows"
    number = table.locator("td.dsh-ToolCard-number").first
    assert _align(number) == "right"
    assert _align(table.locator("tbody tr").first.locator("td").nth(3)) == "left"
    assert table.locator("td.dsh-ToolCard-null").count() >= 2
    # The hostile string is text: no element, nothing ran.
    assert card.locator("img").count() == 0
    assert tables.evaluate("() => typeof window.__dsh_xss") == "undefined"


def test_what_the_model_read_is_one_click_away(tables: Any) -> None:
    card = _rendered(tables, "sales")
    details = card.locator("details.dsh-ToolCard-modeltext")
    assert details.get_attribute("open") is None
    raw = details.locator("pre")
    assert raw.is_hidden()
    details.locator("summary").click()
    assert raw.is_visible()
    model = json.loads(raw.inner_text())
    assert model["columns"] == HEADER
    assert (model["rows"], model["shown_rows"], len(model["data"])) == (1000, 5, 5)
    details.locator("summary").click()


def test_a_list_of_records_is_a_table_too(tables: Any) -> None:
    card = _rendered(tables, "people")
    rows = _texts(card.locator("table.dsh-ToolCard-table tr"))
    assert rows == [
        ["name", "age", "team"],
        ["Ada", "36", ""],
        ["Linus", "28", "kernel"],
    ]
    assert card.locator(".dsh-ToolCard-rows").inner_text() == "2 rows"


def test_a_failing_tool_shows_its_folded_traceback(tables: Any) -> None:
    card = _rendered(tables, "broken")
    assert "dsh-mod-error" in (card.get_attribute("class") or "")
    assert card.locator(".dsh-ToolCard-result").inner_text() == (
        "Error: invalid literal for int() with base 10: 'abc'"
    )
    failure = card.locator("details.dsh-ToolCard-failure")
    assert failure.get_attribute("open") is None
    summary = failure.locator("summary").inner_text()
    assert (
        summary
        == "ValueError: invalid literal for int() with base 10: 'abc' (traceback)"
    )
    failure.locator("summary").click()
    text = failure.locator("pre.dsh-ToolCard-traceback").inner_text()
    assert "in broken" in text and "in _parse" in text and "return int(text)" in text
    assert re.search(r"\[\d+ dsh_nb frames: the call's pipeline\]", text)
    assert "dsh_nb/tools" not in text and "site-packages" not in text
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    card.screenshot(path=str(SCREENSHOTS / "card-traceback.png"))
    failure.locator("summary").click()


def test_the_table_card_in_light_and_dark(tables: Any) -> None:
    card = _rendered(tables, "sales")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    card.screenshot(path=str(SCREENSHOTS / "card-table.png"))
    head = card.locator("thead th").first
    light = _rgb(head, "backgroundColor"), _rgb(head, "color")
    _theme(tables, dark=True)
    try:
        tables.wait_for_function(
            "el => getComputedStyle(el).color.match(/\\d+/g)"
            ".slice(0, 3).map(Number).reduce((a, b) => a + b) / 3 > 150",
            arg=head.element_handle(),
        )
        dark = _rgb(head, "backgroundColor"), _rgb(head, "color")
        card.screenshot(path=str(SCREENSHOTS / "card-table-dark.png"))
        fallback = _fallback(tables, 0)
        fallback.screenshot(path=str(SCREENSHOTS / "card-table-fallback-dark.png"))
    finally:
        _theme(tables, dark=False)
    # Light: dark text on a light header; dark: the reverse.
    assert sum(light[0]) / 3 > 180 and sum(light[1]) / 3 < 100, light
    assert sum(dark[0]) / 3 < 100 and sum(dark[1]) / 3 > 150, dark
    assert page_errors(tables) == []


def test_the_html_fallback_draws_the_same_table_and_traceback(tables: Any) -> None:
    sales, people, broken = (_fallback(tables, i) for i in range(3))
    rows = _texts(sales.locator("table.dsh-ToolCard-table tr"))
    assert rows[0] == HEADER
    assert rows[1] == ["2026-03-01T00:00:00", "0", "1234.5", HOSTILE]
    assert rows[2][1] == "" and len(rows) == 6
    number = sales.locator("td.dsh-ToolCard-number").first
    assert _align(number) == "right"
    assert sales.locator(".dsh-ToolCard-rows").inner_text() == "5 of 1,000 rows"
    assert sales.locator("details.dsh-ToolCard-modeltext").get_attribute("open") is None
    assert _texts(people.locator("table.dsh-ToolCard-table tr"))[2] == [
        "Linus",
        "28",
        "kernel",
    ]
    failure = broken.locator("details.dsh-ToolCard-failure")
    assert failure.get_attribute("open") is None
    failure.locator("summary").click()
    assert "in _parse" in failure.locator("pre").inner_text()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    sales.screenshot(path=str(SCREENSHOTS / "card-table-fallback.png"))
    broken.screenshot(path=str(SCREENSHOTS / "card-traceback-fallback.png"))
    assert tables.locator(".jp-OutputArea-output img").count() == 0
    assert tables.evaluate("() => typeof window.__dsh_xss") == "undefined"


def _filled(bar: Any) -> float:
    """The share of the bar's track its fill covers on screen."""
    share: float = bar.evaluate(
        """b => {
            const track = b.querySelector('.dsh-ToolCard-progressTrack');
            const fill = b.querySelector('.dsh-ToolCard-progressFill');
            const whole = track.getBoundingClientRect().width;
            return fill && whole > 0 ? fill.getBoundingClientRect().width / whole : 0;
        }"""
    )
    return share


def test_a_live_cards_progress_bar_moves_and_reaches_its_end(
    tables: Any, lab_server: LabServer
) -> None:
    # The notebook's last %call reports 2 of 4 steps, then waits for a file
    # this test writes before it reports the rest.
    card = _rendered(tables, "crunch")
    bar = card.locator(".dsh-ToolCard-progress")
    label = bar.locator(".dsh-ToolCard-progressLabel")
    expect(label).to_have_text("2 / 4 · halfway")
    expect(card).to_have_attribute("data-status", "running")
    expect(bar).to_be_visible()
    assert _filled(bar) == pytest.approx(0.5, abs=0.02)
    (lab_server.root / "progress-go").write_text("go\n", encoding="utf-8")
    expect(card).to_have_attribute("data-status", "done", timeout=TIMEOUT_MS)
    expect(label).to_have_text("4 / 4 · all done")
    expect(bar).to_be_visible()
    assert _filled(bar) == pytest.approx(1.0, abs=0.01)
    expect(card.locator(".dsh-ToolCard-result")).to_have_text("crunched 4")
    assert page_errors(tables) == []


def _rgb(node: Any, prop: str) -> tuple[int, ...]:
    colour: str = node.evaluate(f"el => getComputedStyle(el).{prop}")
    return tuple(int(v) for v in re.findall(r"\d+", colour)[:3])


def _theme(page: Any, *, dark: bool) -> None:
    theme = "JupyterLab Dark" if dark else "JupyterLab Light"
    page.evaluate(
        "theme => window.jupyterapp.commands.execute('apputils:change-theme', {theme})",
        theme,
    )
    page.wait_for_function(
        "dark => document.body.dataset.jpThemeLight === (dark ? 'false' : 'true')",
        arg=dark,
    )
