"""*Allow for this session* in JupyterLab: one click, and the tool stops asking.

``session_allow.ipynb`` registers ``write_note`` with ``%%tool --ask`` and
awaits two calls of it in two cells. The page clicks *Allow for this
session* on the first call's prompt, which lists the call's arguments; the
second call then runs without a prompt, ``%tool_policy`` shows the rule,
and ``%tools --openai`` shows its JSON as text, not a collapsed tree.
"""

from __future__ import annotations

from typing import Any

from e2e_lab import TIMEOUT_MS, LabServer, page_errors, run_notebook
from playwright.sync_api import expect

FIRST, SECOND, PRINT, POLICY, TOOLS = 3, 4, 5, 6, 7


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def test_allow_for_this_session_stops_the_next_prompt(
    page: Any, lab_server: LabServer
) -> None:
    run_notebook(page, lab_server, "session_allow.ipynb")
    first = _cell(page, FIRST)
    button = first.get_by_role("button", name="Allow for this session")
    button.wait_for(timeout=TIMEOUT_MS)
    prompt = first.locator(".jp-OutputArea-output").nth(1)
    # What will run, before anyone answers: the arguments, one per row.
    expect(prompt.locator(".dsh-ApprovalArgs")).to_contain_text("text:hi")
    expect(prompt.locator(".dsh-ApprovalArgs")).to_contain_text("folder:notes")
    expect(first.get_by_role("button", name="Allow once")).to_be_visible()
    expect(first.get_by_role("button", name="Reject")).to_be_visible()

    button.click()

    card = first.locator(".dsh-ToolCard")
    expect(card).to_have_attribute("data-status", "done", timeout=TIMEOUT_MS)
    second = _cell(page, SECOND).locator(".dsh-ToolCard")
    expect(second).to_have_attribute("data-status", "done", timeout=TIMEOUT_MS)
    expect(_cell(page, PRINT).locator(".jp-OutputArea-output")).to_have_text(
        "note written: hi | note written: again\n", timeout=TIMEOUT_MS
    )
    # The second call never showed a prompt.
    assert _cell(page, SECOND).get_by_role("button").count() == 0
    expect(_cell(page, POLICY)).to_contain_text("Allow for this session")
    tools = _cell(page, TOOLS).locator(".jp-OutputArea-output")
    expect(tools.locator("pre.dsh-JsonListing")).to_contain_text(
        '"name": "write_note"', timeout=TIMEOUT_MS
    )
    assert tools.locator(".jp-RenderedJSON").count() == 0
    assert page_errors(page) == []
