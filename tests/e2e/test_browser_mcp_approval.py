"""An MCP client's call waits for approval; the page answers it in JupyterLab.

``mcp_serve.ipynb`` loads dsh_nb, defines ``write_note`` with ``%%tool --ask``
and serves with ``%tools serve``. The official MCP SDK client, in this test
process, reads the server's URL and token from the runtime file the kernel
wrote (lab and its kernels share the runtime folder) and calls the tool. The
call waits; the page shows a notification with *Allow once* / *Reject*, and
the answer (from the notification, or from the prompt under the serving
cell) reaches the client as the call's result.

One notebook and kernel serve all three cases, one call each.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from e2e_lab import (
    SCREENSHOTS,
    TIMEOUT_MS,
    LabServer,
    close_page,
    new_page,
    open_notebook,
    page_errors,
    run_notebook,
    screenshot_on_failure,
)
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import expect

from dsh_nb.mcp.runtime import RuntimeEntry, find_entry

NOTEBOOK = "mcp_serve.ipynb"
IMG = '<img src=x onerror="window.__dsh_xss=1">'
SERVE_CELL = 3  # markdown, load, %%tool, %tools serve
CLIENT = "e2e-agent"
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2)
PROMPT_UNDER_CARD = """cell => {
    const outputs = Array.from(cell.querySelectorAll('.jp-OutputArea-child'));
    const at = outputs.findIndex(o =>
        o.querySelector('.dsh-ToolCard[data-status="awaiting-approval"]'));
    const next = at >= 0 ? outputs[at + 1] : undefined;
    return !!next && Array.from(next.querySelectorAll('button')).some(
        b => b.textContent.trim() === 'Allow once');
}"""


@pytest.fixture(scope="module")
def served(
    request: pytest.FixtureRequest, browser: Any, lab_server: LabServer
) -> Iterator[tuple[Any, RuntimeEntry]]:
    """The notebook served from a page; its server's runtime entry."""
    page = new_page(browser, lab_server)
    try:
        run_notebook(page, lab_server, NOTEBOOK)
        expect(_cell(page, SERVE_CELL)).to_contain_text(
            "MCP server running", timeout=TIMEOUT_MS
        )
        kernel_id = next(
            s["kernel"]["id"]
            for s in lab_server.api("/api/sessions")
            if s["path"].endswith(NOTEBOOK)
        )
        entry = find_entry(kernel_id, folder=lab_server.runtime_dir)
        assert entry is not None, list(lab_server.runtime_dir.iterdir())
        yield page, entry
    finally:
        screenshot_on_failure(request, page)
        close_page(page)
        lab_server.shutdown_sessions()


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


async def _call(
    entry: RuntimeEntry, text: str, client_name: str
) -> types.CallToolResult:
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {entry.token}"},
        timeout=httpx2.Timeout(30, read=90),
    )
    async with Client(
        streamable_http_client(entry.url, http_client=http),
        mode="legacy",
        client_info=types.Implementation(name=client_name, version="1.0"),
    ) as client:
        return await client.call_tool("write_note", {"text": text})


def _start_call(
    entry: RuntimeEntry, text: str, client_name: str = CLIENT
) -> concurrent.futures.Future[Any]:
    return _POOL.submit(lambda: asyncio.run(_call(entry, text, client_name)))


def _toast(page: Any, text: str, shown_name: str = CLIENT) -> Any:
    """The notification that asks for this call (its note is ``text``)."""
    message = f'{shown_name} asks to run "write_note" in {NOTEBOOK}'
    toast = page.locator(".Toastify__toast").filter(has_text=message)
    toast.wait_for(timeout=TIMEOUT_MS)
    expect(toast).to_have_count(1)
    expect(toast.locator(".jp-toast-message")).to_contain_text(
        "policy: ask for write_note"
    )
    # The call it asks about is the one waiting in the panel, newest first,
    # and its prompt is the very next output, right under its card.
    cell = _cell(page, SERVE_CELL)
    card = cell.locator(".dsh-ToolCard").first
    expect(card).to_have_attribute("data-status", "awaiting-approval")
    expect(card).to_contain_text(text)
    page.wait_for_function(PROMPT_UNDER_CARD, arg=cell.element_handle())
    return toast


def _text(result: types.CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_allow_once_in_the_notification_answers_the_client(
    served: tuple[Any, RuntimeEntry],
) -> None:
    page, entry = served
    call = _start_call(entry, "from the toast")
    toast = _toast(page, "from the toast")
    assert not call.done()
    # The kernel's own status says Idle; the status bar says who it waits for.
    waiting = page.locator(".dsh-WaitingStatus")
    expect(waiting).to_have_text("Waiting for you: 1 approval (write_note)")
    expect(waiting).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    toast.screenshot(path=str(SCREENSHOTS / "approval-notification.png"))

    toast.get_by_role("button", name="Allow once").click()

    result = call.result(timeout=60)
    assert not result.is_error and _text(result) == "note written: from the toast"
    expect(toast).to_have_count(0)
    expect(waiting).to_be_hidden()
    card = _cell(page, SERVE_CELL).locator(".dsh-ToolCard").first
    expect(card).to_have_attribute("data-status", "done")
    expect(card.locator(".dsh-ToolCard-approval")).to_have_text(
        "Approval: allowed-once"
    )
    assert page_errors(page) == []


def test_allow_once_in_the_panel_dismisses_the_notification(
    served: tuple[Any, RuntimeEntry],
) -> None:
    page, entry = served
    call = _start_call(entry, "from the panel")
    toast = _toast(page, "from the panel")

    prompt = (
        _cell(page, SERVE_CELL)
        .locator(".jp-OutputArea-child")
        .filter(has=page.get_by_role("button", name="Allow once"))
    )
    expect(prompt).to_have_count(1)
    expect(prompt).to_contain_text("Approve tool call? write_note")
    prompt.get_by_role("button", name="Allow once").click()

    result = call.result(timeout=60)
    assert not result.is_error and _text(result) == "note written: from the panel"
    expect(toast).to_have_count(0)
    expect(page.locator(".Toastify__toast")).to_have_count(0)
    assert page_errors(page) == []


def test_reject_in_the_notification_is_an_error_for_the_client(
    served: tuple[Any, RuntimeEntry],
) -> None:
    page, entry = served
    call = _start_call(entry, "rejected")
    toast = _toast(page, "rejected")

    toast.get_by_role("button", name="Reject").click()

    result = call.result(timeout=60)
    assert result.is_error
    assert _text(result) == 'Error: the user rejected tool "write_note"'
    expect(toast).to_have_count(0)
    card = _cell(page, SERVE_CELL).locator(".dsh-ToolCard").first
    expect(card).to_have_attribute("data-status", "denied")
    assert page_errors(page) == []


def test_a_hostile_client_name_shows_as_text(
    served: tuple[Any, RuntimeEntry],
) -> None:
    page, entry = served
    hostile = f"{IMG}\u202e"
    call = _start_call(entry, "hostile", client_name=hostile)
    # The bidi override is made visible, the markup is just text.
    toast = _toast(page, "hostile", shown_name=f"{IMG}[U+202E]")
    assert toast.locator("img, script, iframe, object, embed").count() == 0
    assert page.evaluate("() => typeof window.__dsh_xss") == "undefined"

    toast.get_by_role("button", name="Reject").click()

    assert call.result(timeout=60).is_error
    expect(toast).to_have_count(0)
    assert page.evaluate("() => typeof window.__dsh_xss") == "undefined"
    assert page_errors(page) == []


def test_two_tabs_both_show_it_and_the_first_answer_wins(
    served: tuple[Any, RuntimeEntry], browser: Any, lab_server: LabServer
) -> None:
    page, entry = served
    # A second tab on the same notebook joins the running kernel, where
    # dsh_nb is loaded already: it opens an approval comm of its own.
    other = new_page(browser, lab_server)
    try:
        open_notebook(other, lab_server, NOTEBOOK)
        other.evaluate(
            "async () => { const w = window.jupyterapp.shell.currentWidget;"
            " await w.sessionContext.ready; }"
        )
        call = _start_call(entry, "two tabs")
        toast = _toast(page, "two tabs")
        message = f'{CLIENT} asks to run "write_note" in {NOTEBOOK}'
        there = other.locator(".Toastify__toast").filter(has_text=message)
        there.wait_for(timeout=TIMEOUT_MS)

        there.get_by_role("button", name="Allow once").click()

        result = call.result(timeout=60)
        assert not result.is_error and _text(result) == "note written: two tabs"
        # Answered in one tab, withdrawn in both.
        expect(toast).to_have_count(0)
        expect(there).to_have_count(0)
        assert page_errors(other) == [] and page_errors(page) == []
    finally:
        close_page(other)
