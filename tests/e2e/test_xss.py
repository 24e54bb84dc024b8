"""Hostile card payloads render as text and run no script."""

from __future__ import annotations

from typing import Any

from e2e_lab import TIMEOUT_MS, LabServer, page_errors, run_notebook

IMG = '<img src=x onerror="window.__dsh_xss=1">'
SCRIPT = "<script>window.__dsh_xss=1</script>"


def test_xss_payloads_render_as_text(page: Any, lab_server: LabServer) -> None:
    run_notebook(page, lab_server, "xss.ipynb")
    cards = page.locator(".dsh-ToolCard")
    cards.nth(4).wait_for(timeout=TIMEOUT_MS)
    # Give a would-be onerror handler time to fire.
    page.wait_for_timeout(500)
    assert cards.count() == 5
    assert page.evaluate("() => typeof window.__dsh_xss") == "undefined"
    outputs = page.locator(".jp-OutputArea-output")
    assert outputs.locator("img, script, iframe, object, embed").count() == 0
    # The text/html fallback (also hostile) was not chosen.
    assert outputs.locator(".jp-RenderedHTMLCommon").count() == 0

    text = "\n".join(cards.all_inner_texts())
    for field in (IMG, SCRIPT):
        assert field in text
    # The unknown status fell back to a known one; no prototype key leaked.
    classes = " ".join(c.get_attribute("class") or "" for c in cards.all())
    assert "constructor" not in classes and "toString" not in classes
    assert "function" not in text
    generic = cards.nth(0)
    # The result's title replaces the pending one, as in the HTML card.
    assert generic.locator(".dsh-ToolCard-title").inner_text() == SCRIPT
    assert generic.locator(".dsh-ToolCard-location").inner_text() == (
        f"{IMG}{SCRIPT}:3"
    )
    terminal_output = cards.nth(1).locator(".dsh-ToolCard-output")
    assert terminal_output.inner_text() == IMG + SCRIPT
    red = terminal_output.locator("span").evaluate_all(
        "els => els.filter(e => e.style.color === 'rgb(231, 92, 88)')"
        ".map(e => e.textContent)"
    )
    assert red == [IMG]
    diff_rows = cards.nth(2).locator(".dsh-ToolCard-code").all_inner_texts()
    assert diff_rows == [IMG + SCRIPT]
    # A payload that is not a card object is reported, not rendered.
    invalid = page.locator(".dsh-ToolCard", has_text="Invalid tool card payload")
    assert invalid.count() == 1
    assert page_errors(page) == []
    assert page.evaluate("() => typeof window.__dsh_xss") == "undefined"
