"""Live cards: statuses, the approval prompt seam, trace, cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ipshell import run
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from dsh_nb.cards import CARD_MIME, STATUSES
from dsh_nb.notebook import extension
from dsh_nb.notebook.live import LiveCall, card_status, classify
from dsh_nb.notebook.replay import replay
from dsh_nb.tools.values.execution import ToolExecutionResult
from dsh_nb.tools.values.outcome import ToolOutcome

ADD = '''%%tool
def add(a: int, b: int = 2) -> str:
    """Add two integers."""
    return str(a + b)
'''


@pytest.mark.parametrize(
    ("status", "card"),
    [
        ("done", "done"),
        ("denied", "denied"),
        ("error", "error"),
        ("timeout", "timed-out"),
        ("cancelled", "cancelled"),
    ],
)
def test_classify_names_the_core_outcome_for_cards(status: str, card: str) -> None:
    outcome = ToolOutcome(status=status, stage="execute")  # type: ignore[arg-type]
    assert classify(outcome) == card_status(status) == card
    assert card in STATUSES


class ScriptedPrompt:
    """Stands in for the widget prompt: answers settle a future."""

    def __init__(self) -> None:
        self.future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.done = False

    def approve(self) -> None:
        self.done = True
        self.future.set_result("allowed-once")

    def reject(self) -> None:
        self.done = True
        self.future.set_result("rejected")

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return {"text/plain": "[Allow once] [Reject]"}


def _scripted_answerer(answer: str) -> Any:
    """An answerer driving the card as the widget one does, answering via
    ``LiveCall.approve()``/``reject()`` on the next loop turn."""

    async def answerer(request: Any, next_: Any) -> str:
        state = extension.current_state()
        live = state.live_calls[request.call_id]
        live.set_status("awaiting-approval")
        prompt = ScriptedPrompt()
        state.pending_approvals[request.call_id] = prompt
        live.show_prompt(prompt)
        asyncio.get_running_loop().call_soon(getattr(live, answer))
        try:
            outcome = await prompt.future
        finally:
            del state.pending_approvals[request.call_id]
        live.clear_prompt(outcome)
        return outcome

    return answerer


@pytest.mark.parametrize(
    ("answer", "status", "text"),
    [
        ("approve", "done", "3"),
        ("reject", "denied", 'Error: the user rejected tool "add"'),
    ],
)
def test_approval_goes_through_the_card(
    ip: InteractiveShell, answer: str, status: str, text: str
) -> None:
    run(ip, ADD.replace("%%tool", "%%tool --ask"))
    approval = extension.registry().approval
    assert approval is not None
    approval.on_request(_scripted_answerer(answer), prepend=True)
    cell = run(ip, '%call add {"a": 1}')
    assert cell.error is None
    # The prompt's wait is a loop turn, so awaiting-approval is sent; later
    # intermediate states may coalesce into the final update.
    statuses = cell.statuses()
    assert statuses[:2] == ["pending", "awaiting-approval"]
    assert statuses[-1] == status
    assert set(statuses[2:-1]) <= {"awaiting-approval", "running"}
    assert "approval" not in cell.cards()[1]
    final = cell.cards()[-1]
    assert final["approval"] == ("allowed-once" if answer == "approve" else "rejected")
    assert final["result"]["content"][0]["text"] == text
    prompt = [o for o in cell.outputs if CARD_MIME not in o["data"]]
    assert [o["data"]["text/plain"] for o in prompt] == [
        "[Allow once] [Reject]",
        "",  # the card says how it ended; the prompt's place is emptied
    ]
    assert (
        prompt[1]["update"] and len({o["transient"]["display_id"] for o in prompt}) == 1
    )
    events = [e["type"] for e in extension.current_state().agent.session.events]
    assert events == [
        "turn/start",
        "tool/call",
        "approval/asked",
        "approval/decided",
        "tool/result",
        "turn/end",
    ]


def test_approve_without_a_pending_prompt_is_a_clear_error(
    ip: InteractiveShell,
) -> None:
    run(ip, ADD)
    run(ip, 'handle = %call add {"a": 1}')
    run(ip, "%autoawait off")
    run(ip, 'late = %call add {"a": 1}')
    run(ip, "%autoawait on")
    late = ip.user_ns["late"]
    with pytest.raises(RuntimeError, match=r"has no pending approval .*'pending'"):
        late.approve()
    with pytest.raises(RuntimeError, match="awaiting-approval"):
        late.reject()


def test_trace_durations_live_in_metadata_only(ip: InteractiveShell) -> None:
    run(ip, ADD)
    cell = run(ip, '%call add {"a": 1}')
    last = cell.outputs[-1]
    data, meta = last["data"][CARD_MIME], last["metadata"][CARD_MIME]
    assert data["trace"] == [
        {"stage": "pre-execute", "actor": "default", "decision": "allow"},
        {"stage": "execute", "actor": "add", "decision": "ok"},
    ]
    assert len(meta["traceDurationsMs"]) == 2
    assert meta["meta"]["callId"] == "call-1" and meta["meta"]["durationMs"] >= 0
    assert "durationMs" not in str(data)


def test_card_data_is_the_same_in_a_fresh_kernel(ip: InteractiveShell) -> None:
    run(ip, ADD)
    first = [o["data"] for o in run(ip, '%call add {"a": 1}').outputs]
    ip.run_cell("%reload_ext dsh_nb.notebook.extension")
    ip.run_cell('%config DshConfig.frontend = "headless"')
    run(ip, ADD)
    second = [o["data"] for o in run(ip, '%call add {"a": 1}').outputs]
    assert first == second


async def test_cancelling_a_call_marks_the_card_cancelled(ip: InteractiveShell) -> None:
    state = extension.current_state()
    run(
        ip,
        "%%tool\nasync def wait() -> str:\n    import asyncio\n    await asyncio.sleep(10)\n    return 'no'\n",
    )
    with capture_output() as captured:
        live = state.new_call("wait", {}).show().start()
        await asyncio.sleep(0.01)
        assert live.status == "running"
        assert live._task is not None
        live._task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await live
    assert live.status == "cancelled" and live.result is None
    assert captured.outputs[-1].data[CARD_MIME]["status"] == "cancelled"
    session = state.agent.session
    assert [e["type"] for e in session.events][-3:] == [
        "tool/call",
        "tool/cancelled",
        "turn/end",
    ]
    assert session.events[-2]["data"] == {"callId": live.call_id, "reason": "cancelled"}
    assert state.live_calls == {}
    # A replay of the log shows the call as cancelled, not as still pending.
    card = replay(session, display=False)[-1].data[CARD_MIME]
    assert card["status"] == "cancelled" and "result" not in card


def test_set_status_rejects_unknown_names(ip: InteractiveShell) -> None:
    run(ip, ADD)
    live = extension.current_state().new_call("add", {"a": 1})
    with pytest.raises(ValueError, match="did you mean 'running'"):
        live.set_status("runing")
    assert repr(live) == "<LiveCall 'add' 'call-1' pending>"


def test_live_call_is_silent_outside_a_shell() -> None:
    from dsh_nb.notebook.config import DshConfig
    from dsh_nb.notebook.state import KernelState
    from dsh_nb.tools.definition import tool

    state = KernelState(None, DshConfig())
    state.install()

    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    state.registry.register(echo)
    live = state.new_call("echo", {"text": "hi"}).show()
    result = asyncio.run(_await(live))
    assert result.text == "hi" and live.status == "done" and live._handle is None
    assert (
        isinstance(live, LiveCall) and live.card().data[CARD_MIME]["status"] == "done"
    )


async def _await(live: LiveCall) -> ToolExecutionResult:
    return await live


def test_a_call_that_printed_sends_nothing_after_its_final_card(
    ip: InteractiveShell,
) -> None:
    """What a tool prints is redrawn on a timer; once the final card is sent
    whole, that timer must not resend it later into another cell."""
    run(
        ip,
        '%%tool\ndef chatty(a: int) -> int:\n    """Print, then add."""\n'
        '    print("working on", a)\n    return a + 1\n',
    )
    cell = run(ip, '%call chatty {"a": 1}')
    assert cell.statuses()[-1] == "done"
    assert "working on 1" in str(cell.cards()[-1])
    later = run(ip, "import asyncio\nawait asyncio.sleep(0.3)")
    assert later.cards() == []
