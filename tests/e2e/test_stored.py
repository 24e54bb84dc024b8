"""A card saved in a notebook file renders on open, untrusted, unrun."""

from __future__ import annotations

from typing import Any

from e2e_lab import LabServer, open_notebook, page_errors


def test_saved_card_renders_in_an_untrusted_notebook(
    page: Any, lab_server: LabServer
) -> None:
    open_notebook(page, lab_server, "stored.ipynb")
    card = page.locator(".dsh-ToolCard")
    card.wait_for()
    trusted = page.evaluate(
        """() => {
            const w = window.jupyterapp.shell.currentWidget;
            return w.content.widgets
                .filter(c => c.model.type === 'code')
                .map(c => c.model.trusted);
        }"""
    )
    assert trusted == [False]
    assert card.locator(".dsh-ToolCard-title").inner_text() == "echo stored"
    assert card.locator(".dsh-ToolCard-duration").inner_text() == "1.2 s"
    assert card.locator(".dsh-ToolCard-exit").inner_text() == "exit 0"
    card.locator(".dsh-ToolCard-trace summary").click()
    rows = card.locator(".dsh-ToolCard-trace tr")
    assert rows.nth(0).locator("td").all_inner_texts() == [
        "pre-execute",
        "policy",
        "allow",
        "0.4 ms",
    ]
    assert rows.nth(1).locator("td").all_inner_texts()[-1] == "13 ms"
    outputs = page.locator(".jp-OutputArea-output")
    assert outputs.get_by_text("HTML fallback").count() == 0
    assert page_errors(page) == []
