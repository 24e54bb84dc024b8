"""``%%chat`` in JupyterLab: a streamed reply, a tool card, an approval.

``chat.ipynb`` starts the bundled replay server in the kernel and sends
one ``%%chat``: the reply streams in (the page sees it grow), then the
model calls ``write_note``, an ask tool, whose card waits for a click on
**Allow once**; the loop then sends the result and the model's final text
arrives under the card, with the usage footer.
"""

from __future__ import annotations

from typing import Any

from e2e_lab import TIMEOUT_MS, LabServer, page_errors, run_notebook
from playwright.sync_api import expect

CHAT_CELL = 4  # markdown, setup, %config, %%tool, %%chat, print
AFTER_CELL = 5


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def test_streamed_reply_tool_card_and_approval(
    page: Any, lab_server: LabServer
) -> None:
    run_notebook(page, lab_server, "chat.ipynb")
    cell = _cell(page, CHAT_CELL)
    reply = cell.locator(".jp-RenderedHTML").first
    expect(reply).to_contain_text("Once upon a time", timeout=TIMEOUT_MS)
    # Seen while streaming: the text is there, its end is not yet.
    assert "THE END." not in reply.inner_text()
    expect(reply).to_contain_text("THE END.", timeout=TIMEOUT_MS)

    allow = cell.get_by_role("button", name="Allow once")
    allow.wait_for(timeout=TIMEOUT_MS)
    card = cell.locator(".dsh-ToolCard")
    expect(card).to_have_count(1)
    expect(card).to_have_attribute("data-status", "awaiting-approval")
    allow.click()

    expect(card).to_have_attribute("data-status", "done", timeout=TIMEOUT_MS)
    expect(card.locator(".dsh-ToolCard-result")).to_have_text("note written: hi")
    expect(cell.locator(".jp-OutputArea-output").last).to_have_text(
        "2 steps · 20 in · 10 out tokens", timeout=TIMEOUT_MS
    )
    expect(cell.locator(".jp-RenderedHTML").last).to_have_text("The note is written.")
    expect(_cell(page, AFTER_CELL).locator(".jp-OutputArea-output")).to_have_text(
        "2 requests\n", timeout=TIMEOUT_MS
    )
    assert page_errors(page) == []
