"""Notifying ``tools/result`` and trace observers: each one is contained.

Observers cannot change the outcome (contract §4.13): one that raises is
logged and the others still run; an async one is refused, since nothing
would await it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.tools.errors import error_message
from dsh_nb.tools.pipeline.waterfall import describe

if TYPE_CHECKING:
    from dsh_nb.tools.pipeline.trace import Recorder
    from dsh_nb.tools.values.execution import ToolExecution, ToolExecutionResult

__all__ = ["notify"]

_log = logging.getLogger("dsh_nb.tools")


def notify(
    execution: ToolExecution,
    result: ToolExecutionResult,
    observers: tuple[Callable[..., Any], ...],
    tracers: tuple[Callable[..., Any], ...],
    rec: Recorder | None,
) -> None:
    """Tell the observers snapshotted at call start; each is contained."""
    for observer in observers:
        # Contained inline, here and below, not through a helper: a frame
        # per observer per call saved.
        try:
            out = observer(execution, result)
            if out is not None:
                _refuse_async(observer, out)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - never starve peers
            _report(execution, "tools/result observer", exc)
    if rec is not None:
        for tracer in tracers:  # the recorder is the trace they receive
            try:
                out = tracer(execution, result, rec)
                if out is not None:
                    _refuse_async(tracer, out)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - never starve peers
                _report(execution, "trace observer", exc)


def _refuse_async(fn: Callable[..., Any], out: object) -> None:
    if hasattr(out, "__await__"):
        getattr(out, "close", lambda: None)()
        raise TypeError(f"{describe(fn)} is async; observers must be synchronous")


def _report(execution: ToolExecution, what: str, exc: BaseException) -> None:
    _log.warning(
        'tool "%s" (%s): %s failed: %s',
        execution.name,
        execution.call_id,
        what,
        error_message(exc),
    )
