"""The ``dsh_nb.approvals`` comm on a real kernel, spoken as the page does.

``%load_ext`` opens one comm to the frontend and registers the target, so
a page that connects later opens its own. Every prompt the widget answerer
shows is announced (``pending``) and withdrawn (``settled``) on every open
comm; an ``answer`` from the page settles the very same prompt, exactly as
a click on its button. Garbage on the comm is dropped without a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kernel_harness import KernelHarness

TARGET = "dsh_nb.approvals"

SETUP = """
%load_ext dsh_nb
import json
import dsh_nb
from dsh_nb.notebook import extension as ext
state = ext.current_state()
state.config.frontend = "interactive"
reg = dsh_nb.registry()
reg.register(dsh_nb.define_tool(
    name="delete", description="Delete a file.",
    parameters={"path": {"type": "string", "required": True}},
    execute=lambda a: "deleted " + a["path"]))

def show(result):
    print(json.dumps([result.is_error, result.content[0]["text"]]))

def decided():
    return [e["data"]["outcome"] for e in state.agent.session.events
            if e["type"] == "approval/decided"]
"""
CALL = 'show(await dsh_nb.call("delete", path="a.txt"))'
RAN = json.dumps([False, "deleted a.txt"]) + "\n"
REJECTED = json.dumps([True, 'Error: the user rejected tool "delete"']) + "\n"


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(SETUP, timeout=60)
        harness.run("%tool_policy ask delete")
        yield harness


@pytest.fixture(scope="module")
def kernel_comm(kernel: KernelHarness) -> str:
    """The comm the kernel opened to the frontend at ``%load_ext``."""
    kernel.pump(0.2)
    opened = [c for c in kernel.comms.values() if c.target_name == TARGET]
    assert len(opened) == 1, opened
    return opened[0].comm_id


def _notices(kernel: KernelHarness, comm_id: str, kind: str) -> list[dict[str, Any]]:
    kernel.pump()
    return [
        d
        for d in kernel.comm_data(comm_id)
        if isinstance(d, dict) and d.get("type") == kind
    ]


def _start(
    kernel: KernelHarness, comm_id: str, code: str = CALL
) -> tuple[str, dict[str, Any]]:
    """Run ``code`` (a cell that asks); return its msg_id and the notice."""
    before = len(_notices(kernel, comm_id, "pending"))
    cell = kernel.execute_async(code)
    kernel.wait_for(
        lambda: len(_notices(kernel, comm_id, "pending")) > before,
        timeout=20,
        what="a pending notice",
    )
    return cell, _notices(kernel, comm_id, "pending")[-1]


def _settled(kernel: KernelHarness, comm_id: str, notice_id: str) -> list[str]:
    return [
        d["outcome"]
        for d in _notices(kernel, comm_id, "settled")
        if d["id"] == notice_id
    ]


def _await_settled(kernel: KernelHarness, comm_id: str, notice_id: str) -> str:
    kernel.wait_for(
        lambda: bool(_settled(kernel, comm_id, notice_id)),
        timeout=20,
        what="a settled notice",
    )
    return _settled(kernel, comm_id, notice_id)[0]


def test_load_opens_a_comm_with_a_hello(kernel: KernelHarness, kernel_comm: str):
    record = kernel.comms[kernel_comm]
    assert record.target_name == TARGET and not record.closed
    assert kernel.run("%load_ext dsh_nb").check()  # a second load is a no-op
    kernel.pump(0.2)
    assert [c.comm_id for c in kernel.comms.values() if c.target_name == TARGET] == [
        kernel_comm
    ]


def test_allow_once_from_the_notice_runs_the_call(kernel, kernel_comm):
    cell, notice = _start(kernel, kernel_comm)
    assert notice["tool"] == "delete" and notice["agent"] == "notebook"
    assert notice["reason"] == "policy: ask for delete"
    assert notice["callId"].startswith("call-")
    assert set(notice) == {"type", "id", "callId", "tool", "agent", "reason"}

    kernel.send_comm(
        kernel_comm, {"type": "answer", "id": notice["id"], "answer": "allow-once"}
    )

    assert kernel.collect(cell, timeout=20).check().stdout == RAN
    assert _await_settled(kernel, kernel_comm, notice["id"]) == "allowed-once"
    # The same path as a click: the audit pair, and the prompt's buttons off.
    assert kernel.run("print(decided()[-1])").stdout == "allowed-once\n"
    assert kernel.buttons("Allow once") == []


def test_the_first_answer_wins_and_late_ones_are_ignored(kernel, kernel_comm):
    cell, notice = _start(kernel, kernel_comm)
    answer = {"type": "answer", "id": notice["id"]}
    kernel.send_comm(kernel_comm, {**answer, "answer": "reject"})
    kernel.send_comm(kernel_comm, {**answer, "answer": "allow-once"})
    assert kernel.collect(cell, timeout=20).check().stdout == REJECTED
    assert _await_settled(kernel, kernel_comm, notice["id"]) == "rejected"
    kernel.send_comm(kernel_comm, {**answer, "answer": "allow-once"})  # very late
    assert kernel.run("print(decided()[-1])").stdout == "rejected\n"
    assert _settled(kernel, kernel_comm, notice["id"]) == ["rejected"]


def test_settled_when_answered_in_the_cell_or_from_code(kernel, kernel_comm):
    cell, notice = _start(kernel, kernel_comm)
    kernel.click(kernel.find_button("Allow once"))
    assert kernel.collect(cell, timeout=20).check().stdout == RAN
    assert _await_settled(kernel, kernel_comm, notice["id"]) == "allowed-once"

    cell, notice = _start(
        kernel,
        kernel_comm,
        "import asyncio\n"
        "async def later():\n"
        "    while not dsh_nb.pending_approvals():\n"
        "        await asyncio.sleep(0.01)\n"
        "    dsh_nb.pending_approvals()[0].reject()\n"
        "task = asyncio.ensure_future(later())\n" + CALL,
    )
    assert kernel.collect(cell, timeout=20).check().stdout == REJECTED
    assert _await_settled(kernel, kernel_comm, notice["id"]) == "rejected"


def test_settled_cancelled_on_the_approval_timeout(kernel, kernel_comm):
    kernel.run("state.config.approval_timeout = 0.5")
    try:
        cell, notice = _start(kernel, kernel_comm)
        kernel.collect(cell, timeout=20).check()
        assert _await_settled(kernel, kernel_comm, notice["id"]) == "cancelled"
    finally:
        kernel.run("state.config.approval_timeout = None")


def test_garbage_on_the_comm_is_dropped_without_a_traceback(kernel, kernel_comm):
    cell, notice = _start(kernel, kernel_comm)
    log_before = kernel.kernel_log()
    for junk in (
        None,
        [],
        "allow-once",
        {"type": "answer"},
        {"type": "answer", "id": 7, "answer": "allow-once"},
        {"type": "answer", "id": "no-such-id", "answer": "allow-once"},
        {"type": "answer", "id": notice["id"], "answer": "allow-forever"},
        {"type": "answer", "id": notice["id"], "answer": ["reject"]},
        {"type": "pending", "id": notice["id"]},
    ):
        kernel.send_comm(kernel_comm, junk)
    kernel.send_comm("no-such-comm", {"type": "answer", "id": notice["id"]})
    # None of that answered it: the one good answer after it decides.
    kernel.send_comm(
        kernel_comm, {"type": "answer", "id": notice["id"], "answer": "reject"}
    )
    assert kernel.collect(cell, timeout=20).check().stdout == REJECTED
    assert _await_settled(kernel, kernel_comm, notice["id"]) == "rejected"
    assert kernel.run("print(decided()[-1])").stdout == "rejected\n"
    new_log = kernel.kernel_log()[len(log_before) :]
    assert "Traceback" not in new_log and "Exception" not in new_log, new_log


def test_a_page_that_connects_later_gets_what_is_pending(kernel, kernel_comm):
    cell, notice = _start(kernel, kernel_comm)
    page = kernel.open_comm(TARGET, {"type": "hello", "version": 1})
    kernel.wait_for(
        lambda: bool(_notices(kernel, page, "pending")), timeout=10, what="the sync"
    )
    assert _notices(kernel, page, "pending") == [notice]
    kernel.send_comm(
        page, {"type": "answer", "id": notice["id"], "answer": "allow-once"}
    )
    assert kernel.collect(cell, timeout=20).check().stdout == RAN
    # Both comms hear that it is settled (two tabs: both dismiss it).
    assert _await_settled(kernel, page, notice["id"]) == "allowed-once"
    assert _await_settled(kernel, kernel_comm, notice["id"]) == "allowed-once"


def test_headless_sends_no_notice(kernel, kernel_comm):
    before = len(_notices(kernel, kernel_comm, "pending"))
    kernel.run('state.config.frontend = "headless"')
    try:
        out = kernel.run(CALL, timeout=20).stdout
    finally:
        kernel.run('state.config.frontend = "interactive"')
    assert json.loads(out)[0] is True  # the headless outcome: unavailable
    assert len(_notices(kernel, kernel_comm, "pending")) == before


def test_unload_closes_the_comm(kernel, kernel_comm):
    kernel.run("%unload_ext dsh_nb")
    kernel.wait_for(lambda: kernel.comms[kernel_comm].closed, timeout=10, what="close")
    kernel.run("%load_ext dsh_nb")
    kernel.pump(0.2)
    live = [
        c for c in kernel.comms.values() if c.target_name == TARGET and not c.closed
    ]
    assert len(live) == 1 and live[0].comm_id != kernel_comm
