"""``replay``: re-render the cards of a saved session log.

A log written by ``%tool_log --save`` holds the core's journal: each call's
``tool/call``, then ``tool/result`` (with the call's status and approval
outcome) or ``tool/cancelled``. Replaying hands the logged arguments and
result (with its ``meta``) to the tools' own pure presenters, so the cards
look as they did live, without running anything or reading other events.
Given a chat's ``messages`` too, the replay is the whole conversation in
order: what the user said, what the model answered, and each call's card.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dsh_nb.notebook.live import card_status, still_running
from dsh_nb.tools import journal
from dsh_nb.tools.definition import ToolResult
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.presenter import ToolPresenter
from dsh_nb.tools.session import SessionLog

if TYPE_CHECKING:
    from dsh_nb.cards import ToolCard
    from dsh_nb.tools.registry import ToolRegistry

__all__ = ["Replay", "replay"]


@dataclass(slots=True)
class _Entry:
    call_id: str
    name: str
    arguments: Any
    result: Mapping[str, Any] | None = None
    status: str | None = None
    approval: str | None = field(default=None)
    body_running: bool = False


class Replay(list["ToolCard"]):
    """The replayed cards; as a cell's value it shows a one-line summary."""

    __slots__ = ("source",)

    def __init__(self, cards: list[ToolCard], source: str) -> None:
        super().__init__(cards)
        self.source = source

    def _summary(self) -> str:
        noun = "call" if len(self) == 1 else "calls"
        return f"replayed {len(self)} {noun} from {self.source}"

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, Any]:
        return {"text/plain": self._summary()}

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # IPython's list printer would win over the bundle's text/plain.
        printer.text(self._summary())


def _entries(log: SessionLog) -> list[_Entry]:
    """The calls of a log, from the core's journal events alone."""
    entries: list[_Entry] = []
    latest: dict[str, _Entry] = {}
    for event in log.events:
        kind, data = event["type"], event["data"]
        call_id = data.get("callId")
        if kind == journal.CALL and isinstance(call_id, str):
            entry = _Entry(call_id, str(data.get("name", "")), data.get("arguments"))
            entries.append(entry)
            latest[call_id] = entry
        elif kind == journal.RESULT and call_id in latest:
            entry = latest[call_id]
            result = data.get("result")
            entry.result = result if isinstance(result, Mapping) else None
            status = data.get("status")
            entry.status = card_status(status) if isinstance(status, str) else None
            approval = data.get("approval")
            entry.approval = approval if isinstance(approval, str) else None
            entry.body_running = data.get("bodyRunning") is True
        elif kind == journal.CANCELLED and call_id in latest:
            latest[call_id].status = "cancelled"
    return entries


def _card(entry: _Entry, presenter: ToolPresenter, cwd: str | None) -> ToolCard:
    from dsh_nb.cards import CardModel, render_card

    call_view = presenter.present_call(entry.call_id, entry.name, entry.arguments)
    result_view = None
    status = "pending"
    is_error = False
    if entry.result is not None:
        content = entry.result.get("content")
        is_error = bool(entry.result.get("isError"))
        logged = ToolResult(
            content=list(content) if isinstance(content, list) else [],
            is_error=is_error,
            meta=entry.result.get("meta", ABSENT),
        )
        result_view = presenter.present_result(entry.call_id, logged)
        if entry.body_running:
            result_view = still_running(result_view)
        # A log older than the core's journal has no status: isError only.
        status = entry.status or ("error" if is_error else "done")
    else:
        presenter.forget(entry.call_id)
        status = entry.status or status  # "cancelled" when the log says so
    model = CardModel(
        tool=entry.name,
        call_id=entry.call_id,
        status=status,
        call=call_view,
        result=result_view,
        is_error=is_error,
        cwd=cwd,
        approval=entry.approval,
        meta={"callId": entry.call_id, "replayed": True},
    )
    return render_card(model)


def replay(
    source: str | os.PathLike[str] | SessionLog,
    *,
    registry: ToolRegistry | None = None,
    display: bool = True,
    messages: object = None,
) -> Replay:
    """Re-render every call of a saved session log as a card.

    Parameters
    ----------
    source
        A JSON Lines file written by ``%tool_log --save`` (or
        ``SessionLog.write_jsonl``), or a ``SessionLog``.
    registry
        Where the tools' presenters are looked up; the kernel registry by
        default. A tool that is not registered gets the generic card.
    display
        Whether to display the cards in the current cell (IPython only).
    messages
        A chat's conversation (``chat.messages``, a ``Chat``, or a JSON file
        holding them): the user's and the model's texts are shown too, each
        call's card where the model made it.

    Returns
    -------
    Replay
        The cards, a ``list`` of displayable ``ToolCard``.
    """
    from dsh_nb.notebook.current import current_state

    state = current_state()
    if isinstance(source, SessionLog):
        log, label = source, "a session log"
    else:
        log, label = SessionLog.read_jsonl(source), repr(os.fspath(source))
    presenter = ToolPresenter(registry if registry is not None else state.registry)
    entries = _entries(log)
    shown = display and state.shell is not None
    if messages is not None:
        return _conversation(
            messages, entries, presenter, state.agent.cwd, shown, label
        )
    cards = [_card(e, presenter, state.agent.cwd) for e in entries]
    if shown:
        from IPython.display import display as _show

        show: Callable[..., Any] = _show
        for card in cards:
            show(card)
    return Replay(cards, label)


def _conversation(
    messages: object,
    entries: list[_Entry],
    presenter: ToolPresenter,
    cwd: str | None,
    shown: bool,
    label: str,
) -> Replay:
    from dsh_nb.notebook.chatreplay import conversation_items, load_messages
    from dsh_nb.notebook.chatview import safe_markdown

    # Some servers reuse call ids (llama.cpp's "call_0"): pair in order.
    by_id: dict[str, list[_Entry]] = {}
    for entry in entries:
        by_id.setdefault(entry.call_id, []).append(entry)
    cards = []
    for kind, item in conversation_items(load_messages(messages)):
        if kind == "call":
            call_id, name, _ = item
            queue = by_id.get(call_id)
            entry = (
                queue.pop(0) if queue else _Entry(str(call_id), str(name or ""), None)
            )
            card = _card(entry, presenter, cwd)
            cards.append(card)
            bundle: Any = card
        else:
            speaker = "you" if kind == "user" else "model"
            text = safe_markdown(item)
            bundle = {"text/markdown": text, "text/plain": f"{speaker}: {item}"}
            if kind == "user":
                bundle["text/markdown"] = f"**you:** {text}"
        if shown:
            from IPython.display import display as _show

            show: Callable[..., Any] = _show
            if isinstance(bundle, dict):
                show(bundle, raw=True)
            else:
                show(bundle)
    return Replay(cards, label)
