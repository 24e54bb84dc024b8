"""Nested notebook calls: the parent token is carried, the depth is bounded."""

from __future__ import annotations

import pytest
from ipshell import run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.notebook import extension
from dsh_nb.notebook.nesting import enclosing

RECURSE = """
import dsh_nb
from dsh_nb.tools import define_tool

seen = []

async def rec(args, execution):
    seen.append(execution)
    inner = await dsh_nb.call("rec")
    return "in " + inner.text

_rec = dsh_nb.registry().register(
    define_tool(name="rec", description="Calls itself.", parameters={}, execute=rec)
)
"""


def test_a_tool_calling_itself_stops_at_max_call_depth(ip: InteractiveShell) -> None:
    run(ip, RECURSE)
    cell = run(ip, 'res = await dsh_nb.call("rec")')
    assert cell.error is None
    res = ip.user_ns["res"]
    assert res.text.count("in ") == 16
    assert res.text.endswith(
        "Error: call of tool \"rec\" inside 'call-16' would be nested 17 calls "
        "deep; DshConfig.max_call_depth is 16"
    )
    final = list(cell.final_cards().values())
    assert len(final) == 17  # one card a level, not 100,000
    assert [c["status"] for c in final] == ["done"] * 16 + ["error"]
    session = extension.current_state().agent.session
    deepest = session.of_type("tool/result")[0]["data"]
    assert deepest["result"]["error"] == {
        "name": "CallDepthError",
        "code": "CALL_DEPTH_EXCEEDED",
    }
    assert deepest["stage"] == "pre-execute" and deepest["status"] == "error"
    assert enclosing() is None  # nothing leaks into the cell's context


def test_nested_calls_carry_the_enclosing_token(ip: InteractiveShell) -> None:
    run(ip, RECURSE)
    run(ip, "%config DshConfig.max_call_depth = 3")
    run(ip, 'await dsh_nb.call("rec")')
    seen = ip.user_ns["seen"]
    assert len(seen) == 3
    assert seen[0].parent is None
    assert seen[1].parent is seen[0].token
    assert seen[2].parent is seen[1].token
    # A new top-level call starts at depth 1 again.
    seen.clear()
    run(ip, "%config DshConfig.max_call_depth = 1")
    cell = run(ip, 'res = await dsh_nb.call("rec")')
    assert len(seen) == 1 and seen[0].parent is None
    assert (
        "nested 2 calls deep; DshConfig.max_call_depth is 1" in ip.user_ns["res"].text
    )
    assert [c["status"] for c in cell.final_cards().values()] == ["done", "error"]


def test_the_depth_check_runs_before_policies_and_approval(
    ip: InteractiveShell,
) -> None:
    run(ip, RECURSE)
    run(ip, "%config DshConfig.max_call_depth = 1")
    run(ip, "%tool_policy ask rec")
    run(ip, '%config DshConfig.headless_outcome = "allowed-once"')
    run(ip, 'res = await dsh_nb.call("rec")')
    session = extension.current_state().agent.session
    asked = session.of_type("approval/asked")
    assert len(asked) == 1  # only the top-level call asked
    assert "CALL_DEPTH_EXCEEDED" not in str(asked)
    assert "max_call_depth is 1" in ip.user_ns["res"].text


@pytest.mark.parametrize("value", ["0", "-1", "float('inf')", "'deep'"])
def test_max_call_depth_rejects_meaningless_values(
    ip: InteractiveShell, value: str
) -> None:
    cell = run(ip, f"%config DshConfig.max_call_depth = {value}")
    assert "DshConfig.max_call_depth: rejected" in cell.stderr
    assert extension.current_state().config.max_call_depth == 16
