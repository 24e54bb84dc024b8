"""The cooperative tool-call timeout policy (contract §5).

Tools that declare ``timeout_ms`` promise to watch ``execution.signal`` and
stop; :class:`TimeoutPolicy` arms the deadline, waits for the tool to settle
and then reports ``TOOL_TIMEOUT`` if its own timer fired first. Nothing here
cancels a task or kills work.

The signals and deadlines themselves live in :mod:`dsh_nb.tools.running.abort`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol

from dsh_nb.tools._disposer import Disposer
from dsh_nb.tools.errors import ToolTimeoutError, error_info
from dsh_nb.tools.jsonvalue import snapshot_json
from dsh_nb.tools.running.abort import (
    deadline,
    is_positive_finite,
    timeout_of,
)

if TYPE_CHECKING:
    from dsh_nb.tools.values.execution import ToolExecution, ToolExecutionResult
    from dsh_nb.tools.values.refs import SignalRef

__all__ = ["TOOL_TIMEOUT", "TimeoutPolicy", "tool_timeout_result"]

TOOL_TIMEOUT: Final = "TOOL_TIMEOUT"
"""The deadline code (and result code) of the tool-call timeout policy."""


def tool_timeout_result(call_id: str, timeout_ms: float) -> ToolExecutionResult:
    """Build the exact result reported when the policy's deadline won."""
    from dsh_nb.tools.values.execution import ToolExecutionResult

    error = ToolTimeoutError(timeout_ms)
    return ToolExecutionResult(
        call_id=call_id,
        content=snapshot_json([{"type": "text", "text": f"Error: {error.message}"}]),
        is_error=True,
        error=error_info(error),
    )


class _Timed(Protocol):
    """A tool as the policy reads it: its own budget, if it declares one."""

    @property
    def timeout_ms(self) -> float | None: ...


class Installable(Protocol):
    """Where the policy installs: a tool lookup and a ``tools/execute`` seam.

    A :class:`~dsh_nb.tools.registry.ToolRegistry` is one; the policy needs
    nothing else of it, so it sits below the registry.
    """

    def get(self, name: str, scope: object | None = None) -> _Timed | None: ...

    def on_execute(
        self, fn: Callable[..., Any], scope: object | None = None, prepend: bool = False
    ) -> Disposer: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeoutPolicy:
    """Enforce each tool's ``timeout_ms`` around dispatch (contract §5.2).

    Parameters
    ----------
    default_timeout_ms
        Budget for tools that declare none. ``None`` (the default) keeps the
        reference's zero-config behaviour: such tools run without a
        deadline. The notebook sets it; a bare policy does not.
    """

    default_timeout_ms: float | None = None

    def __post_init__(self) -> None:
        value = self.default_timeout_ms
        if value is not None and not is_positive_finite(value):
            raise ValueError(
                "TimeoutPolicy(default_timeout_ms=...) must be a positive finite"
                f" number of milliseconds or None, got {value!r}"
            )

    def install(
        self, registry: Installable, *, scope: object = None, prepend: bool = False
    ) -> Disposer:
        """Register one ``tools/execute`` wrapper; return its disposer.

        Each install adds its own wrapper, so installing twice nests two
        deadlines.
        """

        async def enforce(
            execution: ToolExecution,
            call_next: Callable[[], Awaitable[ToolExecutionResult]],
        ) -> ToolExecutionResult:
            budget = self._budget(registry, execution)
            if budget is None:
                return await call_next()
            caller = execution.signal
            derived, dispose = deadline(caller, budget, TOOL_TIMEOUT)
            try:
                execution.signal = derived
                try:
                    result = await call_next()
                    # Classify before any other await: only a deadline that
                    # fired before the result settled counts (§5.4).
                    if _own_timeout(derived, caller):
                        return tool_timeout_result(execution.call_id, budget)
                    return result
                finally:
                    if caller is None:
                        del execution.signal
                    else:
                        execution.signal = caller
            finally:
                dispose()

        return registry.on_execute(enforce, scope=scope, prepend=prepend)

    def _budget(self, registry: Installable, execution: ToolExecution) -> float | None:
        definition = registry.get(execution.name, execution.agent)
        if definition is None:
            return None
        if definition.timeout_ms is not None:
            return definition.timeout_ms
        return self.default_timeout_ms


def _own_timeout(derived: SignalRef, caller: SignalRef | None) -> bool:
    """Whether ``derived`` aborted because of this wrapper's own timer.

    A ``TOOL_TIMEOUT`` reason that came in from the caller (an outer policy's
    deadline) is the caller's cancel, not ours; the outer policy reports it.
    """
    reason = timeout_of(derived, TOOL_TIMEOUT)
    if reason is None:
        return False
    return caller is None or caller.reason is not reason
