"""``ToolRegistry.run``'s answer, and the status a dispatched result settles.

Apart from :mod:`~dsh_nb.tools.values.outcome` because both name the
call's values (:mod:`~dsh_nb.tools.values.execution`), which themselves
name the outcome: the floor stays free of circles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_nb.tools.values.execution import ToolExecution, ToolExecutionResult
    from dsh_nb.tools.values.outcome import Status, ToolOutcome

__all__ = ["ToolRun", "settled_status"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolRun:
    """``ToolRegistry.run``'s answer: the result and how it came about."""

    result: ToolExecutionResult
    outcome: ToolOutcome
    execution: ToolExecution
    failure: Any = None
    """What the body raised (an ``audit.failure.Failure``: type, message,
    traceback), for people, never a model; typed loosely so the values
    floor imports nothing above it."""


def settled_status(result: ToolExecutionResult) -> Status:
    """The status a dispatched result settles: done, error or timeout.

    ``timeout`` is the timeout policy's own result (code ``TOOL_TIMEOUT``,
    contract §5.2); any other error result is ``error``.
    """
    if not result.is_error:
        return "done"
    error = result.error
    if error is not None and error.code == "TOOL_TIMEOUT":
        return "timeout"
    return "error"
