"""In-process tests of the approval widgets and the answerer.

Real components throughout: ipywidgets Buttons on a recording comm,
clicked with the comm message a browser sends and checked on the state they
sync back (:mod:`widgetcomm`), a real ``ToolRegistry`` with an
``ApprovalService`` and a real session log. The kernel-level tests (a
browser in a real kernel, a real interrupt) live in
``test_kernel_approvals.py``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import ipywidgets
import pytest
from widgetcomm import RecordingComm, frontend_click, messages, updates

from dsh_nb.notebook import frontend
from dsh_nb.notebook.approvals import (
    ALLOW_LABEL,
    REJECT_LABEL,
    ApprovalPrompt,
    install,
)
from dsh_nb.notebook.frontend import RequestOrigin
from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.pipeline.approval import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalService,
)
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.running.abort import AbortController, AbortSignal
from dsh_nb.tools.values.execution import Ask, ToolExecutionInput, ToolExecutionResult

pytestmark = pytest.mark.usefixtures("recording_comms")

# -- fixtures ----------------------------------------------------------------


@dataclass
class Config:
    headless_outcome: str = "unavailable"
    frontend: str = "interactive"
    approval_timeout: float | None = None


@dataclass
class RecordingCard:
    """Stands in for N1's LiveCall: records what the answerer drives."""

    statuses: list[str] = field(default_factory=list)
    shown: list[Any] = field(default_factory=list)
    cleared: list[str] = field(default_factory=list)

    def set_status(self, status: str) -> None:
        self.statuses.append(status)

    def show_prompt(self, widget: Any) -> None:
        self.shown.append(widget)

    def clear_prompt(self, outcome: str) -> None:
        self.cleared.append(outcome)


@dataclass
class Host:
    registry: ToolRegistry
    config: Config = field(default_factory=Config)
    live_calls: dict[str, RecordingCard] = field(default_factory=dict)
    pending_approvals: dict[str, ApprovalPrompt] = field(default_factory=dict)


class Origins:
    """A switchable 'current kernel request' for re-run tests."""

    def __init__(self) -> None:
        self.current: RequestOrigin | None = None

    def run(self, msg_id: str, cell_id: str | None = None) -> None:
        self.current = RequestOrigin(
            msg_id=msg_id, msg_type="execute_request", cell_id=cell_id
        )

    def __call__(self) -> RequestOrigin | None:
        return self.current


def ran(args: Any, execution: Any) -> str:
    return "deleted"


@pytest.fixture
def origins() -> Origins:
    return Origins()


@pytest.fixture
def host(origins: Origins) -> Iterator[Host]:
    registry = ToolRegistry()
    registry.approval = ApprovalService()
    for name in ("delete", "format_disk"):
        registry.register(
            ToolDefinition(
                name=name,
                description=f"{name} things",
                parameters={"type": "object", "properties": {}},
                execute=ran,
            )
        )
    registry.on_pre_execute(lambda _ex, _next: Ask("it changes files"))
    state = Host(registry=registry)
    dispose = install(state, origin=origins)
    yield state
    dispose()


@pytest.fixture
def agent() -> Agent:
    agent = Agent("notebook")
    agent.session.start_turn()
    return agent


def call(
    host: Host,
    agent: Agent,
    call_id: str = "c1",
    name: str = "delete",
    signal: AbortSignal | None = None,
    card: bool = True,
) -> asyncio.Task[ToolExecutionResult]:
    if card:
        host.live_calls[call_id] = RecordingCard()
    run = host.registry.execute(
        ToolExecutionInput(
            call_id=call_id, name=name, arguments={}, agent=agent, signal=signal
        )
    )
    return asyncio.ensure_future(run)


async def until(predicate: Callable[[], bool], timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.001)


async def prompt_for(host: Host, call_id: str = "c1") -> ApprovalPrompt:
    await until(lambda: call_id in host.pending_approvals)
    return host.pending_approvals[call_id]


def text_of(result: ToolExecutionResult) -> str:
    return "".join(block["text"] for block in result.content)


def audit(agent: Agent) -> list[tuple[str, Any]]:
    """The approval events: (type, toolName or outcome)."""
    pairs = []
    for event in agent.session.events:
        data = event["data"]
        if event["type"] == "approval/asked":
            pairs.append(("asked", data["toolName"]))
        elif event["type"] == "approval/decided":
            pairs.append(("decided", data["outcome"]))
    return pairs


# -- ApprovalPrompt ----------------------------------------------------------


def buttons(prompt: ApprovalPrompt) -> tuple[ipywidgets.Button, ...]:
    return (prompt.allow_button, prompt.session_button, prompt.reject_button)


async def test_a_click_on_allow_resolves_and_syncs_every_button_disabled() -> None:
    prompt = ApprovalPrompt("delete", reason="it changes files")
    answers: list[str] = []
    prompt.on_answer(answers.append)
    assert [messages(b)[0][0] for b in buttons(prompt)] == ["comm_open"] * 3
    assert [updates(b) for b in buttons(prompt)] == [[], [], []]
    frontend_click(prompt.allow_button)
    assert await prompt.wait() == "allowed-once"
    assert [updates(b) for b in buttons(prompt)] == [[{"disabled": True}]] * 3
    [shown] = updates(prompt.message)
    assert "allowed once" in shown["value"]
    # Unhooked: later clicks reach the buttons, and nothing answers them.
    for button in buttons(prompt):
        frontend_click(button)
    assert (prompt.outcome, answers) == ("allowed-once", ["allowed-once"])
    assert [updates(b) for b in buttons(prompt)] == [[{"disabled": True}]] * 3
    assert updates(prompt.message) == [shown]


async def test_a_click_on_reject_resolves_rejected_and_later_answers_lose() -> None:
    prompt = ApprovalPrompt("delete")
    waiting = asyncio.ensure_future(prompt.wait())
    await asyncio.sleep(0)
    frontend_click(prompt.reject_button)
    frontend_click(prompt.allow_button)
    prompt.approve()
    assert await waiting == "rejected"
    assert prompt.outcome == "rejected"
    [shown] = updates(prompt.message)
    assert "rejected" in shown["value"]


async def test_a_click_on_allow_for_this_session_marks_the_answer() -> None:
    prompt = ApprovalPrompt("delete")
    frontend_click(prompt.session_button)
    assert await prompt.wait() == "allowed-once"
    assert prompt.for_session is True
    [shown] = updates(prompt.message)
    assert "allowed once (for this session)" in shown["value"]


async def test_buttons_are_stock_widgets_with_the_expected_look() -> None:
    prompt = ApprovalPrompt("delete")
    assert (prompt.allow_button.description, prompt.allow_button.button_style) == (
        ALLOW_LABEL,
        "success",
    )
    assert (prompt.reject_button.description, prompt.reject_button.button_style) == (
        REJECT_LABEL,
        "danger",
    )
    assert isinstance(prompt.widget, ipywidgets.VBox)


async def test_approve_and_reject_from_code() -> None:
    yes, no = ApprovalPrompt("a"), ApprovalPrompt("b")
    yes.approve()
    no.reject()
    assert (await yes.wait(), await no.wait()) == ("allowed-once", "rejected")
    assert no.allow_button.disabled


async def test_a_raising_callback_cancels_and_shows_why() -> None:
    prompt = ApprovalPrompt("delete")

    def broken(outcome: str) -> None:
        raise ValueError("audit store is down")

    prompt.on_answer(broken)
    frontend_click(prompt.allow_button)
    assert await prompt.wait() == "cancelled"
    [shown] = updates(prompt.message)
    assert "ValueError: audit store is down" in shown["value"]
    assert updates(prompt.allow_button) == [{"disabled": True}]


async def test_an_undone_callback_no_longer_runs() -> None:
    prompt = ApprovalPrompt("delete")
    seen: list[str] = []
    undo = prompt.on_answer(seen.append)
    undo()
    prompt.approve()
    assert await prompt.wait() == "allowed-once"
    assert seen == []


async def test_cancel_settles_cancelled_with_a_note() -> None:
    prompt = ApprovalPrompt("delete")
    prompt.cancel("changed my mind")
    assert await prompt.wait() == "cancelled"
    assert prompt.summary() == 'Approval for tool "delete": cancelled (changed my mind)'
    assert prompt.reject_button.disabled


async def test_wait_timeout_cancels() -> None:
    prompt = ApprovalPrompt("delete")
    started = time.monotonic()
    assert await prompt.wait(timeout=0.05) == "cancelled"
    assert 0.04 < time.monotonic() - started < 1.0
    assert "no answer within 0.05 s" in prompt.note


async def test_a_click_on_another_thread_settles_on_the_loop_thread() -> None:
    prompt = ApprovalPrompt("delete")
    answered_on: list[int] = []
    prompt.on_answer(lambda _outcome: answered_on.append(threading.get_ident()))
    # JupyterLab may deliver a widget message on a subshell's thread.
    clicker = threading.Thread(target=frontend_click, args=(prompt.allow_button,))
    clicker.start()
    clicker.join()
    assert await asyncio.wait_for(prompt.wait(), 2) == "allowed-once"
    assert answered_on == [threading.get_ident()]


async def test_tool_name_and_reason_are_escaped() -> None:
    prompt = ApprovalPrompt("<img src=x onerror=alert(1)>", reason="<script>x</script>")
    assert "<img" not in prompt.header.value and "<script>" not in prompt.header.value
    assert "&lt;script&gt;" in prompt.header.value


async def test_bidi_and_control_characters_in_the_header_are_made_visible() -> None:
    prompt = ApprovalPrompt("rm\u202e\u2066txt.exe", reason="ok\x1b[2J \u202d$x$")
    header = prompt.header.value
    assert "rm[U+202E][U+2066]txt.exe" in header
    assert "ok[U+001B][2J [U+202D]$x$" in header
    assert not any(c in header for c in "\u202e\u2066\u202d\x1b")
    assert 'class="mathjax_ignore tex2jax_ignore"' in header
    assert "[U+202E]" in prompt.allow_button.tooltip
    prompt.reject()
    assert "[U+202E]" in prompt.message.value and "\u202e" not in prompt.message.value


def open_widgets() -> int:
    from ipywidgets.widgets.widget import _instances

    return len(_instances)


async def test_close_releases_every_widget_model() -> None:
    before = open_widgets()
    prompt = ApprovalPrompt("delete")
    assert open_widgets() > before
    channels = [b.comm for b in buttons(prompt)] + [prompt.widget.comm]
    prompt.close()
    assert prompt.outcome == "cancelled"
    assert open_widgets() == before
    assert [c.messages[-1][0] for c in channels] == ["comm_close"] * 4
    ipywidgets.Widget.get_manager_state()


async def test_a_prompt_made_outside_a_loop_binds_on_wait() -> None:
    made: list[ApprovalPrompt] = []
    worker = threading.Thread(target=lambda: made.append(ApprovalPrompt("x")))
    worker.start()
    worker.join()
    waiting = asyncio.ensure_future(made[0].wait())
    await asyncio.sleep(0)
    made[0].reject()
    assert await waiting == "rejected"


# -- the answerer: outcomes and audit ---------------------------------------


async def test_allow_click_runs_the_tool_and_audits(host: Host, agent: Agent) -> None:
    before = open_widgets()
    task = call(host, agent)
    prompt = await prompt_for(host)
    card = host.live_calls["c1"]
    assert card.statuses == ["awaiting-approval"] and card.shown == [prompt.widget]
    allow = prompt.allow_button.comm
    assert isinstance(allow, RecordingComm)
    frontend_click(prompt.allow_button)
    result = await task
    assert (result.is_error, text_of(result)) == (False, "deleted")
    assert audit(agent) == [("asked", "delete"), ("decided", "allowed-once")]
    assert card.cleared == ["allowed-once"]
    assert host.pending_approvals == {}
    assert prompt.widget.comm is None and prompt.allow_button.comm is None
    assert [kind for kind, _ in allow.messages[-2:]] == ["comm_msg", "comm_close"]
    assert updates(allow) == [{"disabled": True}]
    assert open_widgets() == before


async def test_reject_click_denies_with_the_contract_text(
    host: Host, agent: Agent
) -> None:
    task = call(host, agent)
    frontend_click((await prompt_for(host)).reject_button)
    result = await task
    assert result.is_error
    assert text_of(result) == 'Error: the user rejected tool "delete"'
    assert audit(agent) == [("asked", "delete"), ("decided", "rejected")]


async def test_asked_event_carries_call_id_and_reason(host: Host, agent: Agent) -> None:
    task = call(host, agent, call_id="c7")
    (await prompt_for(host, "c7")).approve()
    await task
    asked = agent.session.of_type("approval/asked")[0]["data"]
    assert (asked["callId"], asked["reason"]) == ("c7", "it changes files")


async def test_timeout_cancels(host: Host, agent: Agent) -> None:
    host.config.approval_timeout = 0.05
    started = time.monotonic()
    result = await call(host, agent)
    assert 0.04 < time.monotonic() - started < 1.0
    assert text_of(result) == 'Error: approval for tool "delete" was cancelled'
    assert audit(agent) == [("asked", "delete"), ("decided", "cancelled")]
    assert host.live_calls["c1"].cleared == ["cancelled"]


async def test_abort_signal_cancels(host: Host, agent: Agent) -> None:
    controller = AbortController()
    task = call(host, agent, signal=controller.signal)
    prompt = await prompt_for(host)
    controller.abort("user closed the tab")
    result = await task
    assert text_of(result) == 'Error: approval for tool "delete" was cancelled'
    assert prompt.outcome == "cancelled" and prompt.allow_button.disabled
    assert prompt.note == "the call was aborted"
    assert audit(agent) == [("asked", "delete"), ("decided", "cancelled")]


async def test_abort_from_another_thread_cancels(host: Host, agent: Agent) -> None:
    controller = AbortController()
    task = call(host, agent, signal=controller.signal)
    prompt = await prompt_for(host)
    aborter = threading.Thread(target=controller.abort)
    aborter.start()
    aborter.join()
    result = await asyncio.wait_for(task, 2)
    assert text_of(result) == 'Error: approval for tool "delete" was cancelled'
    assert prompt.outcome == "cancelled"


async def test_sigint_while_pending_cancels_and_restores_the_handler(
    host: Host, agent: Agent
) -> None:
    before = signal.getsignal(signal.SIGINT)
    task = call(host, agent)
    await prompt_for(host)
    assert signal.getsignal(signal.SIGINT) is not before
    os.kill(os.getpid(), signal.SIGINT)
    result = await asyncio.wait_for(task, 2)
    assert text_of(result) == 'Error: approval for tool "delete" was cancelled'
    assert audit(agent) == [("asked", "delete"), ("decided", "cancelled")]
    assert signal.getsignal(signal.SIGINT) is before


async def test_handler_is_restored_after_a_normal_answer(
    host: Host, agent: Agent
) -> None:
    before = signal.getsignal(signal.SIGINT)
    task = call(host, agent)
    (await prompt_for(host)).approve()
    await task
    assert signal.getsignal(signal.SIGINT) is before


async def test_two_concurrent_asks_are_answered_independently(
    host: Host, agent: Agent
) -> None:
    first, second = call(host, agent, "c1"), call(host, agent, "c2", "format_disk")
    one, two = await prompt_for(host, "c1"), await prompt_for(host, "c2")
    assert one is not two
    frontend_click(two.reject_button)
    assert text_of(await second) == 'Error: the user rejected tool "format_disk"'
    assert not first.done() and one.outcome is None
    frontend_click(one.allow_button)
    assert text_of(await first) == "deleted"
    decided = [e["data"]["outcome"] for e in agent.session.of_type("approval/decided")]
    assert decided == ["rejected", "allowed-once"]


async def test_a_cancelled_call_cancels_its_prompt(host: Host, agent: Agent) -> None:
    task = call(host, agent)
    prompt = await prompt_for(host)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert prompt.outcome == "cancelled" and prompt.reject_button.disabled
    assert host.pending_approvals == {}


# -- how the answerer says an ask ended --------------------------------------


def decide(
    host: Host, agent: Agent, signal: AbortSignal | None = None
) -> asyncio.Task[ApprovalDecision]:
    """Ask the service directly, as the pipeline does, for its record."""
    service = host.registry.approval
    assert service is not None
    host.live_calls["c1"] = RecordingCard()
    request = ApprovalRequest(
        agent=agent, tool_name="delete", call_id="c1", signal=signal
    )
    return asyncio.ensure_future(service.decide(request))


async def test_a_click_is_decided_by_the_answerer(host: Host, agent: Agent) -> None:
    task = decide(host, agent)
    (await prompt_for(host)).reject_button.click()
    assert await task == ApprovalDecision(outcome="rejected", decided_by="answerer")


async def test_the_approval_timeout_is_recorded_as_a_timeout(
    host: Host, agent: Agent
) -> None:
    host.config.approval_timeout = 0.05
    decision = await asyncio.wait_for(decide(host, agent), 2)
    assert decision == ApprovalDecision(outcome="cancelled", decided_by="timeout")
    # A later answerer cut short by the timeout is a timeout too.
    assert host.registry.approval is not None
    host.registry.approval.on_request(lambda _request, _next: asyncio.Event().wait())
    decision = await asyncio.wait_for(decide(host, agent), 2)
    assert decision == ApprovalDecision(outcome="cancelled", decided_by="timeout")
    assert audit(agent)[-1] == ("decided", "cancelled")


async def test_an_abort_is_recorded_as_an_abort(host: Host, agent: Agent) -> None:
    controller = AbortController()
    task = decide(host, agent, signal=controller.signal)
    await prompt_for(host)
    controller.abort("user closed the tab")
    decision = await asyncio.wait_for(task, 2)
    assert decision == ApprovalDecision(outcome="cancelled", decided_by="abort")


async def test_an_interrupt_is_the_person_cancelling(host: Host, agent: Agent) -> None:
    task = decide(host, agent)
    await prompt_for(host)
    os.kill(os.getpid(), signal.SIGINT)
    decision = await asyncio.wait_for(task, 2)
    assert decision == ApprovalDecision(outcome="cancelled", decided_by="answerer")


async def test_headless_unavailable_is_no_answerer(host: Host, agent: Agent) -> None:
    host.config.frontend = "headless"
    decision = await decide(host, agent)
    assert decision == ApprovalDecision(outcome="unavailable", decided_by="no-answerer")
    host.config.headless_outcome = "rejected"
    decision = await decide(host, agent)
    assert decision == ApprovalDecision(outcome="rejected", decided_by="answerer")


# -- re-running a cell -------------------------------------------------------


async def test_rerun_of_the_cell_cancels_the_stale_prompt(
    host: Host, agent: Agent, origins: Origins
) -> None:
    origins.run("run-1", cell_id="cell-a")
    stale = call(host, agent, "c1")
    old = await prompt_for(host, "c1")
    origins.run("run-2", cell_id="cell-a")
    fresh = call(host, agent, "c2")
    new = await prompt_for(host, "c2")
    assert text_of(await stale) == 'Error: approval for tool "delete" was cancelled'
    assert "the cell ran again" in old.note
    assert new.outcome is None
    new.approve()
    assert text_of(await fresh) == "deleted"


async def test_other_cells_tools_and_same_run_asks_are_not_stale(
    host: Host, agent: Agent, origins: Origins
) -> None:
    origins.run("run-1", cell_id="cell-a")
    first = call(host, agent, "c1")
    twin = call(host, agent, "c2")
    await prompt_for(host, "c1")
    await prompt_for(host, "c2")
    origins.run("run-2", cell_id="cell-b")
    other_cell = call(host, agent, "c3")
    await prompt_for(host, "c3")
    origins.run("run-3", cell_id="cell-a")
    other_tool = call(host, agent, "c4", "format_disk")
    await prompt_for(host, "c4")
    assert sorted(host.pending_approvals) == ["c1", "c2", "c3", "c4"]
    for prompt in list(host.pending_approvals.values()):
        prompt.approve()
    results = await asyncio.gather(first, twin, other_cell, other_tool)
    assert [r.is_error for r in results] == [False] * 4


# -- headless ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("configured", "expected"),
    [
        ("unavailable", 'tool "delete" requires approval, but no approval channel'),
        ("rejected", 'the user rejected tool "delete"'),
        ("cancelled", 'approval for tool "delete" was cancelled'),
        ("allowed-once", None),
    ],
)
async def test_headless_outcome_is_immediate_and_configurable(
    host: Host, agent: Agent, configured: str, expected: str | None
) -> None:
    host.config.frontend = "headless"
    host.config.headless_outcome = configured
    result = await asyncio.wait_for(call(host, agent), 1)
    if expected is None:
        assert text_of(result) == "deleted"
    else:
        assert text_of(result).startswith("Error: " + expected)
    assert host.live_calls["c1"].statuses == []
    assert audit(agent) == [("asked", "delete"), ("decided", configured)]


async def test_auto_mode_without_a_kernel_is_headless(host: Host, agent: Agent) -> None:
    host.config.frontend = "auto"
    result = await asyncio.wait_for(call(host, agent), 1)
    assert result.is_error and host.pending_approvals == {}
    assert audit(agent)[-1] == ("decided", "unavailable")


async def test_a_bad_headless_outcome_fails_closed(host: Host, agent: Agent) -> None:
    host.config.frontend = "headless"
    host.config.headless_outcome = "yes please"
    result = await call(host, agent)
    assert audit(agent)[-1] == ("decided", "unavailable") and result.is_error


# -- composition and lifecycle ----------------------------------------------


async def test_an_answerer_added_later_answers_first(host: Host, agent: Agent) -> None:
    assert host.registry.approval is not None
    host.registry.approval.on_request(lambda _request, _next: "rejected")
    result = await asyncio.wait_for(call(host, agent), 1)
    assert text_of(result) == 'Error: the user rejected tool "delete"'
    assert host.pending_approvals == {}


async def test_a_later_answerer_that_never_answers_is_cut_by_the_timeout(
    host: Host, agent: Agent
) -> None:
    assert host.registry.approval is not None
    host.registry.approval.on_request(lambda _request, _next: asyncio.Event().wait())
    host.config.approval_timeout = 0.05
    result = await asyncio.wait_for(call(host, agent), 2)
    assert text_of(result) == 'Error: approval for tool "delete" was cancelled'
    assert host.pending_approvals == {}
    assert audit(agent) == [("asked", "delete"), ("decided", "cancelled")]


async def test_a_later_answerer_that_never_answers_is_cut_by_an_interrupt(
    host: Host, agent: Agent
) -> None:
    assert host.registry.approval is not None
    host.registry.approval.on_request(lambda _request, _next: asyncio.Event().wait())
    before = signal.getsignal(signal.SIGINT)
    task = call(host, agent)
    await until(lambda: signal.getsignal(signal.SIGINT) is not before)
    os.kill(os.getpid(), signal.SIGINT)
    result = await asyncio.wait_for(task, 2)
    assert text_of(result) == 'Error: approval for tool "delete" was cancelled'
    assert signal.getsignal(signal.SIGINT) is before


async def test_a_later_answerer_that_raises_fails_closed(
    host: Host, agent: Agent
) -> None:
    def broken(_request: Any, _next: Any) -> str:
        raise RuntimeError("answerer bug")

    assert host.registry.approval is not None
    host.registry.approval.on_request(broken)
    result = await asyncio.wait_for(call(host, agent), 2)
    assert "no approval channel is available" in text_of(result)
    assert audit(agent) == [("asked", "delete"), ("decided", "unavailable")]
    assert host.pending_approvals == {}


async def test_without_a_card_the_prompt_gets_its_own_display(
    host: Host, agent: Agent, capsys: pytest.CaptureFixture[str]
) -> None:
    task = call(host, agent, card=False)
    (await prompt_for(host)).approve()
    assert text_of(await task) == "deleted"
    assert "VBox" in capsys.readouterr().out


async def test_a_failing_card_falls_back_to_a_plain_display(
    host: Host, agent: Agent
) -> None:
    class BrokenCard(RecordingCard):
        def show_prompt(self, widget: Any) -> None:
            raise RuntimeError("renderer crashed")

    host.live_calls["c1"] = BrokenCard()
    task = call(host, agent, card=False)
    (await prompt_for(host)).approve()
    assert text_of(await task) == "deleted"


async def test_dispose_cancels_pending_prompts_and_removes_the_answerer(
    agent: Agent, origins: Origins
) -> None:
    registry = ToolRegistry()
    registry.approval = ApprovalService()
    registry.register(
        ToolDefinition(
            name="delete",
            description="d",
            parameters={"type": "object", "properties": {}},
            execute=ran,
        )
    )
    registry.on_pre_execute(lambda _ex, _next: Ask())
    state = Host(registry=registry)
    dispose = install(state, origin=origins)
    task = call(state, agent)
    prompt = await prompt_for(state)
    dispose()
    assert text_of(await task) == 'Error: approval for tool "delete" was cancelled'
    assert "unloaded" in prompt.note
    after = await call(state, agent, "c2")
    assert "no approval channel is available" in text_of(after)


def test_install_needs_an_approval_service() -> None:
    with pytest.raises(ValueError, match="has no ApprovalService"):
        install(Host(registry=ToolRegistry()))


# -- frontend detection ------------------------------------------------------


def test_is_interactive_honours_overrides_and_rejects_nonsense() -> None:
    assert frontend.is_interactive("interactive") is True
    assert frontend.is_interactive("HEADLESS") is False
    assert frontend.is_interactive("auto") is False
    with pytest.raises(ValueError, match=r"DshConfig\.frontend"):
        frontend.is_interactive("browser")


def test_control_comm_means_a_widget_frontend(monkeypatch: pytest.MonkeyPatch) -> None:
    assert frontend.has_widget_frontend() is False
    monkeypatch.setattr(ipywidgets.Widget, "_control_comm", object())
    assert frontend.has_widget_frontend() is True


def test_request_origin_reads_jupyterlab_metadata() -> None:
    parent = {
        "header": {"msg_id": "m1", "msg_type": "execute_request"},
        "metadata": {"cellId": "abc", "deletedCells": [], "recordTiming": False},
    }
    assert frontend.request_origin(parent) == RequestOrigin(
        msg_id="m1", msg_type="execute_request", cell_id="abc"
    )
    assert frontend.request_origin({"header": {}}) is None
    assert frontend.request_origin() is None
