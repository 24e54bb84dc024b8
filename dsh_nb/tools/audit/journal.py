"""The audit journal: what the core writes to an agent's session log.

Every call that has an agent leaves, on that agent's :class:`SessionLog`,
whoever made it (a cell, a script, a model loop, an MCP server)::

    tool/call       {callId, name, arguments?}      once the arguments are read
    tool/result     {callId, result, status, stage, approval?, bodyRunning?,
                     resultBytes?}
    tool/cancelled  {callId, reason}                interrupted or cancelled

``result`` is the wire form of the frozen result (``callId``, ``content``,
``isError``, ``error?``, ``additionalContext?``, ``meta?``), and ``status``,
``stage``, ``approval`` and ``bodyRunning`` are the call's
:class:`~dsh_nb.tools.values.outcome.ToolOutcome`. ``arguments`` is absent when
they were not lossless JSON. The approval seam adds its own
``approval/asked`` / ``approval/decided`` pair in between.

Every event is built here (``_event``), from values that are already
deep-frozen lossless JSON, so nothing a tool returns reaches the log as
anything else; this module is the one place to bound or clean what the
journal keeps. ``tool/call`` and ``tool/result`` are built when the log is
first read (the values are frozen, so the event is the same): a call whose
log nobody reads does not pay for the event objects.
The turn helpers let callers outside a notebook open the turn the
approval seam needs, shared by concurrent calls of one agent.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.tools.audit.resultsize import (
    _TEXT_BLOCK_KEYS,
    _UTF8_MAX,
    bound_result,
    lone_text,
)
from dsh_nb.tools.audit.session import defer
from dsh_nb.tools.jsonvalue import (
    ABSENT,
    FrozenDict,
    FrozenList,
)
from dsh_nb.tools.surrogates import escape_tree
from dsh_nb.tools.values.outcome import DONE

if TYPE_CHECKING:
    from dsh_nb.tools.audit.failure import Failure
    from dsh_nb.tools.audit.session import Agent, SessionLog
    from dsh_nb.tools.values.execution import ToolExecutionResult
    from dsh_nb.tools.values.outcome import ToolOutcome

__all__ = [
    "CALL",
    "CANCELLED",
    "RESULT",
    "enter_turn",
    "exit_turn",
    "record_call",
    "record_cancelled",
    "record_result",
    "result_json",
    "turn",
]

CALL: Final = "tool/call"
RESULT: Final = "tool/result"
CANCELLED: Final = "tool/cancelled"


def _text(value: object) -> str | None:
    """An id or a name as the journal keeps it: an exact str, else None."""
    return value if type(value) is str else None


def _event(type_: str, data: dict[str, Any]) -> FrozenDict:
    # Lone surrogates become [U+D800]: the journal is written as UTF-8 and
    # replayed into cards (a clean event is kept as it is, not copied).
    return FrozenDict({"type": type_, "data": escape_tree(FrozenDict(data))})


def record_call(
    session: SessionLog, call_id: object, name: object, arguments: object
) -> None:
    """Write ``tool/call`` for a call whose arguments were just read.

    ``arguments`` is the call's deep-frozen arguments, or ABSENT when they
    were not lossless JSON. An object is laid out in the entry as its
    keys, then its values in the same order: for flat arguments the entry
    is then one tuple of atoms, which the collector stops tracking (see
    :func:`dsh_nb.tools.audit.session.defer`); a dict, even a plain copy, would
    keep its entry tracked for good.
    """
    if type(arguments) is FrozenDict:
        session._append_deferred(
            (_CALL_PAIRS, call_id, name, *arguments, *arguments.values())
        )
    else:
        session._append_deferred((_CALL, call_id, name, arguments))


def _call_event(call_id: object, name: object, arguments: object) -> FrozenDict:
    data: dict[str, Any] = {
        "callId": call_id if type(call_id) is str else None,
        "name": name if type(name) is str else None,
    }
    if arguments is not ABSENT:
        data["arguments"] = arguments  # already deep-frozen lossless JSON
    return _event(CALL, data)


def _pairs_call_event(call_id: object, name: object, *laid: Any) -> FrozenDict:
    half = len(laid) // 2  # the keys, then the values in the same order
    arguments = FrozenDict(zip(laid[:half], laid[half:], strict=True))
    return _call_event(call_id, name, arguments)


def result_json(result: ToolExecutionResult) -> FrozenDict:
    """The frozen wire form of a final (already materialised) result."""
    out: dict[str, Any] = {
        "callId": result.call_id,
        "content": result.content,
        "isError": result.is_error,
    }
    if result.error is not None:
        out["error"] = FrozenDict(result.error.to_json())
    if result.additional_context is not None:
        out["additionalContext"] = result.additional_context
    if result.meta is not ABSENT:
        out["meta"] = result.meta
    return FrozenDict(out)


def record_result(
    session: SessionLog,
    result: ToolExecutionResult,
    outcome: ToolOutcome,
    said: str | None = None,
    failure: Failure | None = None,
) -> None:
    """Write ``tool/result``: the final result and its outcome.

    ``failure``: what the body raised; its type and its bounded, redacted
    traceback are kept as ``exception`` (the result itself is unchanged).

    ``said``: the tool's plain ``str`` return, when ``result`` is the one
    the pipeline built from it (one text block and nothing else), so only
    its size needs checking.
    """
    limit = session.max_result_bytes
    if failure is not None:
        result, total = bound_result(result, limit)
        raised = (failure.type, failure.traceback)
        session._append_deferred((_RESULT, result, outcome, total, raised))
        return
    if said is None:
        text = lone_text(result, limit)
    else:  # lone_text's size rule, for the text the tool returned
        text = said if _UTF8_MAX * len(said) + _TEXT_BLOCK_KEYS <= limit else None
    if text is not None:
        # One small text block and nothing else, the common result: kept as
        # atoms (see record_call), not as the result's four objects; when
        # the call is done with no approval asked, as its text alone.
        if outcome is DONE and result.is_error is False:
            session._append_deferred((_DONE_TEXT, result.call_id, text))
            return
        session._append_deferred(
            (
                _TEXT_RESULT,
                result.call_id,
                text,
                result.is_error,
                outcome.status,
                outcome.stage,
                outcome.approval,
                outcome.body_running,
            ),
        )
        return
    # Cut now, not when the log is read: the deferred event must not hold
    # the whole result alive.
    result, total = bound_result(result, limit)
    session._append_deferred((_RESULT, result, outcome, total))


def _text_result_event(
    call_id: object,
    text: str,
    is_error: bool,
    status: str,
    stage: str,
    approval: str | None,
    body_running: bool,
) -> FrozenDict:
    block = FrozenDict({"type": "text", "text": text})
    result = FrozenDict(
        {"callId": call_id, "content": FrozenList([block]), "isError": is_error}
    )
    data: dict[str, Any] = {
        "callId": call_id if type(call_id) is str else None,
        "result": result,
        "status": status,
        "stage": stage,
    }
    if approval is not None:
        data["approval"] = approval
    if body_running:
        data["bodyRunning"] = True
    return _event(RESULT, data)


def _done_text_event(call_id: object, text: str) -> FrozenDict:
    return _text_result_event(call_id, text, False, "done", "execute", None, False)


def _result_event(
    result: ToolExecutionResult,
    outcome: ToolOutcome,
    total: int | None = None,
    raised: tuple[str, str] | None = None,
) -> FrozenDict:
    call_id = result.call_id
    data: dict[str, Any] = {
        "callId": call_id if type(call_id) is str else None,
        "result": result_json(result),
        "status": outcome.status,
        "stage": outcome.stage,
    }
    if total is not None:
        data["resultBytes"] = total
    if outcome.approval is not None:
        data["approval"] = outcome.approval
    if outcome.body_running:
        data["bodyRunning"] = True
    if raised is not None:
        data["exception"] = {"type": raised[0], "traceback": raised[1]}
    return _event(RESULT, data)


_CALL: Final = "journal:call"
_CALL_PAIRS: Final = "journal:call-pairs"
_RESULT: Final = "journal:result"
_TEXT_RESULT: Final = "journal:text-result"
_DONE_TEXT: Final = "journal:done-text"
defer(_CALL, CALL, _call_event)
defer(_CALL_PAIRS, CALL, _pairs_call_event)
defer(_RESULT, RESULT, _result_event)
defer(_TEXT_RESULT, RESULT, _text_result_event)
defer(_DONE_TEXT, RESULT, _done_text_event)


def record_cancelled(session: SessionLog, call_id: object, reason: str) -> None:
    """Write ``tool/cancelled``: the call ended without a result."""
    session._append_frozen(
        _event(CANCELLED, {"callId": _text(call_id), "reason": reason})
    )


# --- turns


_holders: weakref.WeakKeyDictionary[SessionLog, int] = weakref.WeakKeyDictionary()


def enter_turn(session: SessionLog) -> bool:
    """Open a turn for a call unless one is open; True if this call counts.

    Concurrent calls of one agent share the turn the first one opened; it
    closes when the last of them leaves. A turn the caller opened itself
    is left alone.
    """
    active = _holders.get(session, 0)
    if active == 0 and session.in_open_turn():
        return False
    if active == 0:
        session.start_turn()
    _holders[session] = active + 1
    return True


def exit_turn(session: SessionLog, opened: bool) -> None:
    """Close the turn when the last call that counted on it leaves."""
    if not opened:
        return
    active = _holders.get(session, 1) - 1
    if active <= 0:
        _holders.pop(session, None)
        session.end_turn()
    else:
        _holders[session] = active


@contextmanager
def turn(agent: Agent) -> Iterator[None]:
    """Run calls of ``agent`` inside a turn (opened only if none is open).

    Examples
    --------
    >>> with turn(agent):  # doctest: +SKIP
    ...     run = await registry.run(ToolExecutionInput(..., agent=agent))
    """
    opened = enter_turn(agent.session)
    try:
        yield
    finally:
        exit_turn(agent.session, opened)
