"""Calls inside calls: the enclosing call's token, and a bound on depth.

A tool body that runs ``await dsh_nb.call(...)`` starts a nested call. Its
task (and a sync body's worker thread, which copies the context) inherits
a context variable the kernel registry's outermost ``tools/execute``
wrapper sets around each body, so the nested call knows:

- its ``parent``: the enclosing execution's opaque token, which
  ``LiveCall`` passes on as the contract asks (``ToolExecutionInput.parent``);
- its depth: one more than the enclosing call's. A pre-execute listener,
  first in line, refuses a call deeper than ``DshConfig.max_call_depth``
  with a :class:`~dsh_nb.tools.errors.CallDepthError`
  (``CALL_DEPTH_EXCEEDED``) before any policy or approval prompt runs, so
  a tool that calls itself leaves that many cards, not 100,000.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_nb.tools.errors import CallDepthError

if TYPE_CHECKING:
    from dsh_nb.tools.values.execution import (
        ToolExecution,
        ToolExecutionResult,
        ToolExecutionToken,
    )

__all__ = ["Enclosing", "check_depth", "depth_here", "enclosing", "run_enclosed"]


@dataclass(frozen=True, slots=True)
class Enclosing:
    """The call whose body is running: its token and its nesting depth."""

    token: ToolExecutionToken
    call_id: str
    depth: int


_CURRENT: ContextVar[Enclosing | None] = ContextVar("dsh_nb_enclosing", default=None)


def enclosing() -> Enclosing | None:
    """The call whose body the current code runs in, or None at top level."""
    return _CURRENT.get()


def depth_here() -> int:
    """The depth a call started here would have (1 at top level)."""
    outer = _CURRENT.get()
    return 1 if outer is None else outer.depth + 1


async def run_enclosed(
    execution: ToolExecution, next_: Callable[[], Awaitable[ToolExecutionResult]]
) -> ToolExecutionResult:
    """Run the rest of the call with it as the enclosing call of its body."""
    token = _CURRENT.set(
        Enclosing(token=execution.token, call_id=execution.call_id, depth=depth_here())
    )
    try:
        return await next_()
    finally:
        _CURRENT.reset(token)


def check_depth(limit: Callable[[], int]) -> Callable[..., Any]:
    """A pre-execute listener refusing calls nested deeper than ``limit()``."""

    def refuse_deep_calls(execution: ToolExecution, next_: Any) -> Any:
        depth, most = depth_here(), limit()
        if depth > most:
            outer = _CURRENT.get()
            inside = f" inside {outer.call_id!r}" if outer is not None else ""
            raise CallDepthError(
                f'call of tool "{execution.name}"{inside} would be nested {depth} '
                f"calls deep; DshConfig.max_call_depth is {most}"
            )
        return next_()

    return refuse_deep_calls
