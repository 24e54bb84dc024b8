"""*Allow for this session*, and a prompt that shows what the call will do.

Real widgets (clicked with the comm message a browser sends, see
:mod:`widgetcomm`), the real answerer, the kernel's policy table and
session log, in an in-process shell with the extension loaded.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ipshell import fresh_shell, run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.cards.arguments import FOLD_AT, arguments_html
from dsh_nb.notebook import extension
from dsh_nb.notebook.prompt import SESSION_LABEL, ApprovalPrompt
from dsh_nb.tools.audit.session import Agent

SEND = '''%%tool --ask
def send(to: str, body: str) -> str:
    """Send a message."""
    return f"sent to {to}"
'''
# Clicks the button labelled LABEL on the next prompt, once it is shown.
CLICK = """
import asyncio
from dsh_nb.notebook.extension import current_state
from widgetcomm import frontend_click

def _click(label, first=True):
    loop = asyncio.get_running_loop()
    if first:
        loop.call_soon(_click, label, False)
        return
    state = current_state()
    if not state.pending_approvals:
        loop.call_later(0.02, _click, label, False)
        return
    prompt = next(iter(state.pending_approvals.values()))
    SHOWN.append(prompt.header.value)
    for button in (prompt.allow_button, prompt.session_button, prompt.reject_button):
        if button.description == label:
            frontend_click(button)

SHOWN = []
"""


@pytest.fixture
def ip() -> Iterator[InteractiveShell]:
    for shell in fresh_shell():
        run(shell, '%config DshConfig.frontend = "interactive"')
        assert run(shell, CLICK).error is None
        yield shell


def test_allow_for_this_session_runs_now_and_stops_asking(ip: InteractiveShell) -> None:
    run(ip, SEND)
    first = run(
        ip, f'_click("{SESSION_LABEL}")\n%call send {{"to": "ada", "body": "hi"}}'
    )
    assert first.error is None
    assert first.final_cards()  # one card, done
    [card] = first.final_cards().values()
    assert card["status"] == "done"
    assert card["approval"] == "allowed-once (a rule now allows it for this session)"
    # The next call runs without a prompt: nobody clicks, and it is done.
    second = run(ip, '%call send {"to": "bob", "body": "hello"}')
    [card] = second.final_cards().values()
    assert card["status"] == "done" and "approval" not in card
    state = extension.current_state()
    assert state.pending_approvals == {}
    session = state.agent.session
    assert [e["type"] for e in session.events].count("approval/asked") == 1
    [rule] = session.of_type("approval/rule")
    assert rule["data"] == {
        "toolName": "send",
        "rule": "allow",
        "scope": "session",
        "agent": "notebook",
        "callId": "call-1",
    }
    # Visible in %tool_policy, and removable there: the ask comes back.
    table = run(ip, "%tool_policy").result.result
    assert (
        "send",
        "allow",
        "Allow for this session (agent 'notebook'); otherwise ask",
        "",
    ) in table.rows
    run(ip, "%tool_policy --clear send")
    assert [r[:2] for r in run(ip, "%tool_policy").result.result.rows] == [
        ("send", "ask")
    ]
    assert session.of_type("approval/rule")[-1]["data"]["rule"] == "cleared"
    third = run(ip, '_click("Reject")\n%call send {"to": "eve", "body": "x"}')
    [card] = third.final_cards().values()
    assert card["status"] == "denied" and card["approval"] == "rejected"


def test_the_rule_is_for_its_agent_only(ip: InteractiveShell) -> None:
    run(ip, SEND)
    state = extension.current_state()
    state.allow_for_session("send", Agent("other"), None)
    run(ip, '%config DshConfig.frontend = "headless"')
    # The notebook's own agent still meets the ask it shadows; nobody is
    # there to answer, so it fails closed.
    cell = run(ip, '%call send {"to": "x", "body": "y"}')
    [card] = cell.final_cards().values()
    assert card["status"] == "denied" and card["approval"] == "unavailable"


def test_the_prompt_lists_arguments_when_there_is_no_present_call(
    ip: InteractiveShell,
) -> None:
    run(ip, SEND)
    long = "x" * (FOLD_AT + 20)
    run(ip, f'_click("Allow once")\n%call send {{"to": "<ada>", "body": "{long}"}}')
    [shown] = ip.user_ns["SHOWN"]
    assert "<b>Approve tool call?</b> <code>send</code>" in shown
    assert "to:</span><span><code>&lt;ada&gt;</code>" in shown
    assert f"<details><summary><code>{'x' * FOLD_AT}…</code> (100 characters)" in shown


def test_the_prompt_points_at_the_card_when_the_tool_presents_its_call(
    ip: InteractiveShell,
) -> None:
    run(
        ip,
        """
import dsh_nb
from dsh_nb import DiffCallView, FileDiff

def show(args):
    return DiffCallView(title="write", diffs=[FileDiff(path=args["path"], old_text=None, new_text=args["text"])])

@dsh_nb.tool(present_call=show)
def write(path: str, text: str) -> str:
    '''Write a file.'''
    return "ok"

dispose = dsh_nb.registry().register(write)
""",
    )
    run(ip, "%tool_policy ask write")
    cell = run(
        ip, '_click("Allow once")\n%call write {"path": "a.txt", "text": "new\\n"}'
    )
    [shown] = ip.user_ns["SHOWN"]
    assert "The card above shows what this call will do." in shown
    pending = [c for c in cell.cards() if c["status"] == "awaiting-approval"]
    assert pending
    assert "+new" in pending[0]["call"]["diffs"][0]["hunks"][0]["lines"]


def test_arguments_html_escapes_and_folds() -> None:
    html = arguments_html(
        {"cmd": "rm -rf <x>", "n": 3, "text": "a\nb", "o": {"k": [1]}}
    )
    assert "<code>rm -rf &lt;x&gt;</code>" in html and "<code>3</code>" in html
    assert "<details><summary><code>a…</code> (3 characters, 2 lines)" in html
    assert "<code>{&quot;k&quot;: [1]}</code>" in html
    assert "no arguments" in arguments_html({})
    assert "<script>" not in arguments_html({"<script>": "<script>"})


def test_allow_for_session_from_code_settles_allowed_once() -> None:
    prompt = ApprovalPrompt("t")
    prompt.allow_for_session()
    assert (prompt.outcome, prompt.for_session) == ("allowed-once", True)
    assert prompt.summary() == 'Approval for tool "t": allowed once (for this session)'
    assert prompt.session_button.disabled and prompt.allow_button.disabled
    prompt.close()
