"""An ``ask`` tool waits for a click on its card's prompt in JupyterLab.

``approval.ipynb`` registers ``write_note`` with ``%%tool --ask``, awaits
``dsh_nb.call("write_note", text="hi")`` in one cell and prints
``result.text`` in the next. Run All is started, not awaited; the page
then answers the prompt shown under the call's card. The notebook leaves
``DshConfig.frontend`` at ``auto``, so the prompt appearing at all shows
that a fresh kernel recognised JupyterLab as interactive.
"""

from __future__ import annotations

from typing import Any

from e2e_lab import (
    SCREENSHOTS,
    TIMEOUT_MS,
    LabServer,
    page_errors,
    run_notebook,
)
from playwright.sync_api import expect

CALL_CELL = 3  # markdown, load, %%tool, call, print
RESULT_CELL = 4


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def _await_prompt(page: Any, lab_server: LabServer) -> tuple[Any, Any]:
    """Run the notebook until the call's card asks; return (cell, card)."""
    run_notebook(page, lab_server, "approval.ipynb")
    cell = _cell(page, CALL_CELL)
    cell.get_by_role("button", name="Allow once").wait_for(timeout=TIMEOUT_MS)
    card = cell.locator(".dsh-ToolCard")
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("data-status", "awaiting-approval")
    expect(card.locator(".dsh-ToolCard-status")).to_have_text("awaiting approval")
    # The prompt is the next output of the same cell, under the card.
    outputs = cell.locator(".jp-OutputArea-output")
    expect(outputs).to_have_count(2)
    assert outputs.nth(0).locator(".dsh-ToolCard").count() == 1
    prompt = outputs.nth(1)
    expect(prompt).to_contain_text("Approve tool call? write_note")
    expect(prompt.get_by_role("button", name="Reject")).to_be_visible()
    # The next cell is still queued behind the awaiting one.
    assert _cell(page, RESULT_CELL).locator(".jp-OutputArea-output").count() == 0
    return cell, card


def test_allow_once_runs_the_tool(page: Any, lab_server: LabServer) -> None:
    cell, card = _await_prompt(page, lab_server)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    # The cell without its last pixels: the next, selected cell's border.
    box = cell.bounding_box()
    page.screenshot(
        path=str(SCREENSHOTS / "approval.png"),
        clip={**box, "height": box["height"] - 3},
    )

    cell.get_by_role("button", name="Allow once").click()

    expect(card).to_have_attribute("data-status", "done", timeout=TIMEOUT_MS)
    expect(card.locator(".dsh-ToolCard-approval")).to_have_text(
        "Approval: allowed-once"
    )
    expect(card.locator(".dsh-ToolCard-result")).to_have_text("note written: hi")
    result = _cell(page, RESULT_CELL).locator(".jp-OutputArea-output")
    expect(result).to_have_text("note written: hi\n", timeout=TIMEOUT_MS)
    # The answered prompt is gone: its buttons cannot be clicked twice.
    expect(cell.get_by_role("button", name="Allow once")).to_have_count(0)
    expect(cell.get_by_role("button", name="Reject")).to_have_count(0)
    assert page_errors(page) == []


def test_reject_denies_the_call(page: Any, lab_server: LabServer) -> None:
    cell, card = _await_prompt(page, lab_server)

    cell.get_by_role("button", name="Reject").click()

    expect(card).to_have_attribute("data-status", "denied", timeout=TIMEOUT_MS)
    assert "dsh-mod-error" in (card.get_attribute("class") or "")
    expect(card.locator(".dsh-ToolCard-approval")).to_have_text("Approval: rejected")
    result = _cell(page, RESULT_CELL).locator(".jp-OutputArea-output")
    expect(result).to_have_text(
        'Error: the user rejected tool "write_note"\n', timeout=TIMEOUT_MS
    )
    expect(cell.get_by_role("button", name="Allow once")).to_have_count(0)
    assert page_errors(page) == []
