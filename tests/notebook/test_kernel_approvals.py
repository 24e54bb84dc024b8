"""Approvals on a real kernel, clicked the way a browser clicks.

One ipykernel for the module (``kernel_harness``). Each cell ``await``s a
call whose policy asks; the test finds the prompt's Button among the comms
the kernel opened and sends the browser's ``comm_msg`` for a click, or
interrupts the kernel, or lets the timeout run. Every path also checks the
audit pair on the session log. Works only on ipykernel >= 7.4, which
dispatches widget messages while an async cell awaits.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kernel_harness import KernelHarness, Reply

SETUP = """
%load_ext dsh_nb
import asyncio, json, signal
import dsh_nb
import ipywidgets
from dsh_nb.notebook import extension as ext
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.values.execution import Ask, ToolExecutionInput
from dsh_nb.tools.running.abort import AbortController

state = ext.current_state()
reg = dsh_nb.registry()

def _delete(args, execution):
    return "deleted " + str(args.get("path"))

reg.register(ToolDefinition(
    name="delete",
    description="Delete a file.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    execute=_delete,
))
reg.on_pre_execute(
    lambda ex, nxt: Ask("deleting is irreversible") if ex.name == "delete" else nxt()
)

def show(result):
    print(json.dumps([result.is_error, result.content[0]["text"]]))

def audit(n=1):
    events = [e for e in state.agent.session.events if e["type"].startswith("approval/")]
    decided = {e["data"]["id"]: e["data"]["outcome"] for e in events
               if e["type"] == "approval/decided"}
    asked = [(e["data"]["toolName"], decided.get(e["data"]["id"])) for e in events
             if e["type"] == "approval/asked"]
    print(json.dumps({"asked": len(asked), "decided": len(decided), "last": asked[-n:]}))

def use(frontend="interactive", timeout=None, headless="unavailable"):
    state.config.frontend = frontend
    state.config.approval_timeout = timeout
    state.config.headless_outcome = headless
    ipywidgets.Widget._control_comm = None
"""

CALL = 'show(await dsh_nb.call("delete", path="a.txt"))'
DENIED = json.dumps([True, 'Error: the user rejected tool "delete"'])
CANCELLED = json.dumps([True, 'Error: approval for tool "delete" was cancelled'])
RAN = json.dumps([False, "deleted a.txt"])


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(SETUP, timeout=60)
        yield harness


@pytest.fixture(autouse=True)
def interactive(kernel: KernelHarness) -> None:
    kernel.run("use()")


def last_audit(kernel: KernelHarness, n: int = 1) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(kernel.run(f"audit({n})").stdout)
    return data


def lines(reply: Reply) -> list[str]:
    return reply.stdout.splitlines()


def test_click_allow_completes_the_awaiting_cell(kernel: KernelHarness) -> None:
    before = last_audit(kernel)
    msg_id = kernel.execute_async(CALL)
    allow = kernel.find_button("Allow once", parent=msg_id)
    clicked = time.monotonic()
    kernel.click(allow)
    reply = kernel.collect(msg_id, timeout=10).check()
    print(f"click -> cell reply: {1000 * (time.monotonic() - clicked):.1f} ms")
    assert lines(reply) == [RAN]
    assert kernel.state(allow)["disabled"] is True
    assert kernel.comms[allow].closed
    after = last_audit(kernel)
    assert after["asked"] == after["decided"] == before["asked"] + 1
    assert after["last"] == [["delete", "allowed-once"]]


def test_click_reject_denies(kernel: KernelHarness) -> None:
    msg_id = kernel.execute_async(CALL)
    kernel.click(kernel.find_button("Reject", parent=msg_id))
    reply = kernel.collect(msg_id, timeout=10).check()
    assert lines(reply) == [DENIED]
    assert last_audit(kernel)["last"] == [["delete", "rejected"]]


def test_the_card_and_prompt_live_in_the_calling_cell(kernel: KernelHarness) -> None:
    msg_id = kernel.execute_async(CALL)
    kernel.click(kernel.find_button("Allow once", parent=msg_id))
    reply = kernel.collect(msg_id, timeout=10).check()
    views = reply.data("application/vnd.jupyter.widget-view+json")
    assert views, "the prompt widget was not displayed in the calling cell"
    cards = reply.data("application/vnd.dsh.tool-card+json")
    assert cards[-1]["approval"] == "allowed-once"
    # The outcome shows once, in the card: no line under it repeats it.
    assert not any("approval: " in text for text in reply.data("text/plain"))


def test_timeout_cancels(kernel: KernelHarness) -> None:
    kernel.run("use(timeout=0.3)")
    started = time.monotonic()
    reply = kernel.execute(CALL, timeout=10).check()
    elapsed = time.monotonic() - started
    print(f"0.3 s approval timeout -> cell reply after {elapsed * 1000:.0f} ms")
    assert lines(reply) == [CANCELLED]
    assert 0.3 <= elapsed < 3.0
    assert last_audit(kernel)["last"] == [["delete", "cancelled"]]


def test_interrupt_cancels_and_the_kernel_stays_usable(kernel: KernelHarness) -> None:
    msg_id = kernel.execute_async(CALL)
    kernel.find_button("Allow once", parent=msg_id)
    interrupted = time.monotonic()
    kernel.interrupt()
    reply = kernel.collect(msg_id, timeout=10).check()
    print(f"interrupt -> cell reply: {1000 * (time.monotonic() - interrupted):.1f} ms")
    assert lines(reply) == [CANCELLED]
    assert last_audit(kernel)["last"] == [["delete", "cancelled"]]
    handler = kernel.run("print(signal.getsignal(signal.SIGINT))").stdout
    assert "SigintHandler" not in handler
    assert kernel.run("print(1 + 1)").stdout == "2\n"
    sleeping = kernel.execute_async("import time; time.sleep(20)")
    kernel.wait_for(
        lambda: any(m["msg_type"] == "execute_input" for m in kernel.messages(sleeping))
    )
    time.sleep(0.2)
    kernel.interrupt()
    stopped = kernel.collect(sleeping, timeout=5)
    assert stopped.error is not None and stopped.error["ename"] == "KeyboardInterrupt"


def test_headless_answers_at_once_without_a_prompt(kernel: KernelHarness) -> None:
    kernel.run('use(frontend="auto")')
    reply = kernel.execute(CALL, timeout=10).check()
    assert reply.elapsed < 2.0
    assert lines(reply) == [
        json.dumps(
            [
                True,
                'Error: tool "delete" requires approval, but no approval channel '
                "is available",
            ]
        )
    ]
    shown = kernel.buttons(
        "Allow once", parent=reply.msg_id, enabled=False, include_closed=True
    )
    assert shown == []
    assert last_audit(kernel)["last"] == [["delete", "unavailable"]]
    assert reply.stderr == ""  # a runner sends no metadata: no note for it


def test_an_editor_without_widget_signs_gets_one_note(kernel: KernelHarness) -> None:
    """An editor request (a cellId, none of Lab's keys) refusing input: say why."""
    kernel.run('use(frontend="auto")')
    vscode = {"cellId": "vscode-notebook-cell:/work/demo.ipynb#W2sZmlsZQ%3D%3D"}
    first = kernel.execute(CALL, metadata=vscode, timeout=10).check()
    assert json.loads(first.stdout)[0] is True
    assert "neither shows widgets nor allows input" in first.stderr
    assert '%config DshConfig.frontend = "interactive"' in first.stderr
    assert last_audit(kernel)["last"] == [["delete", "unavailable"]]
    again = kernel.execute(CALL, metadata=vscode, timeout=10).check()
    assert again.stderr == ""  # once per kernel
    kernel.run('use(frontend="interactive")')
    msg_id = kernel.execute_async(CALL, metadata=vscode)
    kernel.click(kernel.find_button("Allow once", parent=msg_id))
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [RAN]


def test_headless_outcome_is_configurable(kernel: KernelHarness) -> None:
    kernel.run('use(frontend="headless", headless="allowed-once")')
    reply = kernel.execute(CALL, timeout=10).check()
    assert lines(reply) == [RAN]
    assert last_audit(kernel)["last"] == [["delete", "allowed-once"]]


def test_config_magic_sets_the_headless_outcome(kernel: KernelHarness) -> None:
    kernel.run('%config DshConfig.frontend = "headless"')
    kernel.run('%config DshConfig.headless_outcome = "rejected"')
    assert lines(kernel.execute(CALL, timeout=10).check()) == [DENIED]


def test_control_comm_handshake_makes_auto_interactive(kernel: KernelHarness) -> None:
    kernel.run('use(frontend="auto")')
    assert kernel.connect_widget_frontend() is True
    msg_id = kernel.execute_async(CALL)
    kernel.click(kernel.find_button("Allow once", parent=msg_id))
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [RAN]


def test_jupyterlab_request_metadata_makes_auto_interactive(
    kernel: KernelHarness,
) -> None:
    kernel.run('use(frontend="auto")')
    lab = {"cellId": "c-lab", "deletedCells": [], "recordTiming": False}
    msg_id = kernel.execute_async(CALL, metadata=lab)
    kernel.click(kernel.find_button("Reject", parent=msg_id))
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [DENIED]


def test_abort_signal_cancels(kernel: KernelHarness) -> None:
    code = """
controller = AbortController()
asyncio.get_running_loop().call_later(0.3, controller.abort, "stop")
state.agent.session.start_turn()
try:
    show(await reg.execute(ToolExecutionInput(
        call_id="abort-1", name="delete", arguments={}, agent=state.agent,
        signal=controller.signal)))
finally:
    state.agent.session.end_turn()
"""
    reply = kernel.execute(code, timeout=10).check()
    assert lines(reply) == [CANCELLED]
    shown = kernel.buttons(
        "Allow once", parent=reply.msg_id, enabled=False, include_closed=True
    )
    assert len(shown) == 1
    assert kernel.comms[shown[0]].state["disabled"] is True
    assert kernel.comms[shown[0]].closed
    summary = 'Approval for tool "delete": cancelled (the call was aborted)'
    assert summary in reply.data("text/plain")
    assert last_audit(kernel)["last"] == [["delete", "cancelled"]]


def test_rerunning_the_cell_cancels_the_stale_prompt(kernel: KernelHarness) -> None:
    cell = {"cellId": f"rerun-{uuid.uuid4().hex}"}
    code = 'task = asyncio.ensure_future(dsh_nb.call("delete", path="a.txt"))'
    first = kernel.execute(code, metadata=cell).check()
    kernel.find_button("Allow once", parent=first.msg_id)
    kernel.run("stale = task")
    second = kernel.execute(code, metadata=cell).check()
    allow = kernel.find_button("Allow once", parent=second.msg_id)
    assert lines(kernel.run("show(await stale)")) == [CANCELLED]
    kernel.click(allow)
    assert lines(kernel.run("show(await task)")) == [RAN]
    assert last_audit(kernel, 2)["last"] == [
        ["delete", "cancelled"],
        ["delete", "allowed-once"],
    ]


def test_two_concurrent_asks_are_answered_independently(
    kernel: KernelHarness,
) -> None:
    code = """
one, two = await asyncio.gather(
    dsh_nb.call("delete", path="1"), dsh_nb.call("delete", path="2"))
show(one); show(two)
"""
    msg_id = kernel.execute_async(code)
    kernel.wait_for(lambda: len(kernel.buttons("Reject", parent=msg_id)) == 2)
    first_allow = kernel.buttons("Allow once", parent=msg_id)[0]
    second_reject = kernel.buttons("Reject", parent=msg_id)[1]
    kernel.click(second_reject)
    kernel.wait_for(lambda: len(kernel.buttons("Reject", parent=msg_id)) == 1)
    kernel.click(first_allow)
    reply = kernel.collect(msg_id, timeout=10).check()
    assert lines(reply) == [json.dumps([False, "deleted 1"]), DENIED]
    assert last_audit(kernel, 2)["last"] == [
        ["delete", "allowed-once"],
        ["delete", "rejected"],
    ]


def test_a_pending_call_is_answered_from_code(kernel: KernelHarness) -> None:
    code = """
handle = state.new_call("delete", {"path": "a.txt"}).show().start()
while handle.call_id not in state.pending_approvals:
    await asyncio.sleep(0.01)
handle.approve()
show(await handle)
"""
    assert lines(kernel.execute(code, timeout=10).check()) == [RAN]


def test_a_raising_answer_callback_cancels_visibly(kernel: KernelHarness) -> None:
    kernel.run('task = asyncio.ensure_future(dsh_nb.call("delete", path="a.txt"))')
    kernel.run(
        "while not state.pending_approvals:\n"
        "    await asyncio.sleep(0.01)\n"
        "prompt = next(iter(state.pending_approvals.values()))\n"
        "prompt.on_answer(lambda outcome: 1 / 0)"
    )
    click = kernel.click(kernel.find_button("Allow once"))
    assert kernel.wait_idle(click).stderr == ""
    assert lines(kernel.run("show(await task)")) == [CANCELLED]
    messages = [
        record.state.get("value", "")
        for record in kernel.comms.values()
        if record.state.get("_model_name") == "HTMLModel"
    ]
    assert any("ZeroDivisionError" in text for text in messages)
    assert kernel.run("print(1 + 1)").stdout == "2\n"


def test_interrupt_cuts_a_hanging_answerer(kernel: KernelHarness) -> None:
    kernel.run(
        "hang = reg.approval.on_request(lambda req, nxt: asyncio.Event().wait())"
    )
    try:
        msg_id = kernel.execute_async(CALL)
        kernel.wait_for(
            lambda: any(
                m["msg_type"] == "display_data" for m in kernel.messages(msg_id)
            ),
            what="the call's card",
        )
        time.sleep(0.1)
        kernel.interrupt()
        reply = kernel.collect(msg_id, timeout=10).check()
        assert lines(reply) == [CANCELLED]
        assert kernel.buttons("Allow once", parent=msg_id, include_closed=True) == []
    finally:
        kernel.run("hang()")
