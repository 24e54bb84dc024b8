"""One card from a call: ``call_card``, ``entry_card`` and ``CardView``.

The live card, a replay, the evaluation report and the demo all draw a
call through :mod:`dsh_nb.cards.callcard`; these tests hold the one rule
they share: a call drawn as it ends and drawn again from its journal is
the same card.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dsh_nb.cards import CARD_MIME, ToolCard
from dsh_nb.cards.callbook import CallBook, CallEntry
from dsh_nb.cards.callcard import (
    STILL_RUNNING,
    CardView,
    call_card,
    entry_card,
    generic_presenter,
)
from dsh_nb.evals import CallRecord, EvalReport, TrialResult
from dsh_nb.tools import (
    Agent,
    ApprovalService,
    Ask,
    Deny,
    GenericCallView,
    TimeoutPolicy,
    ToolContext,
    ToolPresenter,
    ToolRegistry,
    tool,
)
from dsh_nb.tools.audit.journalfile import JournalEvent
from dsh_nb.tools.runner import CallRunner, DoorCall
from dsh_nb.tools.values.outcome import ToolOutcome


def demo_registry(started: asyncio.Event | None = None) -> ToolRegistry:
    registry = ToolRegistry()
    registry.approval = ApprovalService()
    registry.approval.on_request(lambda request, next_: "allowed-once")
    TimeoutPolicy().install(registry)

    @tool
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @tool
    def careful(text: str) -> str:
        """Echo, after asking."""
        return text

    @tool(timeout_ms=20)
    async def stuck(ctx: ToolContext) -> str:
        """Wait for the deadline, as a cooperative tool does."""
        assert ctx.signal is not None
        await ctx.signal.wait()
        return "late"

    @tool
    async def slow() -> str:
        """Wait until cancelled."""
        if started is not None:
            started.set()
        await asyncio.Event().wait()
        return "never"

    for definition in (add, careful, stuck, slow):
        registry.register(definition)
    registry.on_pre_execute(
        lambda ex, next_: (
            Ask("asks first")
            if ex.name == "careful"
            else Deny("not here")
            if ex.arguments.get("a") == 13
            else next_()
        )
    )
    return registry


def parts(card: ToolCard) -> dict[str, Any]:
    data = card.data
    return {k: data.get(k) for k in (CARD_MIME, "text/html", "text/plain")}


CALLS = [
    DoorCall(name="add", arguments={"a": 2, "b": 3}, wire_id="c-done"),
    DoorCall(name="add", arguments={"a": "two"}, wire_id="c-invalid"),
    DoorCall(name="add", arguments={"a": 13, "b": 1}, wire_id="c-denied"),
    DoorCall(name="careful", arguments={"text": "hi"}, wire_id="c-asked"),
    DoorCall(name="stuck", arguments={}, wire_id="c-timeout"),
    DoorCall(name="serch", arguments={}, wire_id="c-unknown"),
    DoorCall(name="add", arguments='{"a": 1', wire_id="c-unparsed", error="Error: x"),
]


async def test_a_call_and_its_journal_draw_the_same_card() -> None:
    registry = demo_registry()
    agent = Agent("door", cwd="/work")
    runner = CallRunner(registry)
    shown: list[ToolCard] = []
    presenter = ToolPresenter(registry)
    for call in CALLS:
        view = CardView(presenter, shown.append, cwd="/work")
        await runner.run(call, agent=agent, door="test", view=view)
    statuses = [card.data[CARD_MIME]["status"] for card in shown]
    assert statuses == [
        "done",
        "error",
        "denied",
        "done",
        "timed-out",
        "error",
        "error",
    ]
    assert shown[3].data[CARD_MIME]["approval"] == "allowed-once"
    book = CallBook()
    for event in agent.session.events:
        book.add(JournalEvent(event["type"], event["data"]))
    assert [e.call_id for e in book.entries] == [c.wire_id for c in CALLS]
    replayed = [
        entry_card(entry, ToolPresenter(registry), cwd="/work")
        for entry in book.entries
    ]
    for live, again in zip(shown, replayed, strict=True):
        assert parts(again) == parts(live)
        assert again.metadata[CARD_MIME]["meta"]["replayed"] is True


async def test_an_interrupted_call_draws_a_cancelled_card() -> None:
    started = asyncio.Event()
    registry = demo_registry(started)
    shown: list[ToolCard] = []
    view = CardView(ToolPresenter(registry), shown.append)
    task = asyncio.ensure_future(
        CallRunner(registry).run(
            DoorCall(name="slow", arguments={}), agent=Agent("a"), view=view
        )
    )
    await started.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    [card] = shown
    assert card.data[CARD_MIME]["status"] == "cancelled"
    assert "result" not in card.data[CARD_MIME]
    assert card.data["text/plain"].startswith("[cancelled] slow")


def test_a_journal_entry_speaks_the_cards_status_words() -> None:
    def status(**fields: Any) -> str:
        entry = CallEntry("c1", "t", {"x": 1}, **fields)
        payload: dict[str, Any] = entry_card(entry).data[CARD_MIME]
        return str(payload["status"])

    failed = {"content": [{"type": "text", "text": "no"}], "isError": True}
    fine = {"content": [{"type": "text", "text": "ok"}], "isError": False}
    assert status(result=fine, status="timeout") == "timed-out"
    assert status(result=fine, status="not-a-status") == "error"
    assert status(result=failed) == "error"  # a log older than statuses
    assert status(result=fine) == "done"
    assert status() == "pending"
    assert status(status="cancelled") == "cancelled"
    running = CallEntry("c1", "t", {}, result=fine, status="timeout")
    running.body_running = True
    assert STILL_RUNNING in entry_card(running).data["text/plain"]


def test_volatile_values_go_to_the_metadata_only() -> None:
    class Record:
        stage, actor, decision, duration_ms = "pre", "policy", "allow", 1.23456

    card = call_card(
        "t",
        GenericCallView(title="t"),
        call_id="c9",
        outcome=ToolOutcome(status="timeout", stage="execute", approval="allowed-once"),
        trace=[Record()],
        duration_ms=12.34567,
        cwd="/somewhere",
    )
    payload = card.data[CARD_MIME]
    assert payload["status"] == "timed-out"
    assert payload["approval"] == "allowed-once"
    assert payload["callId"] == "c9"
    assert payload["trace"] == [
        {"stage": "pre", "actor": "policy", "decision": "allow"}
    ]
    volatile = card.metadata[CARD_MIME]
    assert volatile["meta"] == {"callId": "c9", "durationMs": 12.346}
    assert volatile["traceDurationsMs"] == [1.235]
    assert volatile["cwd"] == "/somewhere"
    assert "12.34" not in str(card.data) and "/somewhere" not in str(payload)


def test_the_report_draws_calls_in_the_cards_words() -> None:
    def record(status: str | None) -> CallRecord:
        return CallRecord(
            step=1,
            name="slow",
            arguments={},
            status=status,
            result={"content": [{"type": "text", "text": "late"}], "isError": True},
        )

    trial = TrialResult(
        case_id="c",
        trial=1,
        variant=None,
        selected=False,
        args_valid_first_try=True,
        args_correct=False,
        recovered=None,
        passed=False,
        steps=1,
        latency=0.1,
        calls=(record("timeout"), record("odd"), record(None)),
    )
    html = EvalReport([trial], cases={})._repr_html_()
    # A core status in the cards' words; one the cards do not know, or a
    # record with none, is drawn as the replay draws it: an error.
    assert html.count(">timed-out</span>") == 1
    assert html.count(">error</span>") == 2
    assert ">timeout<" not in html and "odd" not in html
    view = generic_presenter().present_call("x", "slow", {})
    live = call_card("slow", view, status="timeout").data["text/html"]
    assert ">timed-out</span>" in live
