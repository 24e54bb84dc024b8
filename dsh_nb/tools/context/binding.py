"""Which ``ToolContext`` is current, and which door's hearers a call gets.

The runner says, for the calls it starts, who hears them (:func:`hearing`);
the pipeline's execute stage makes a call's context current (:func:`bind`);
anything running inside the call reads it (:func:`current_tool_context`).
All three are context variables, so concurrent calls, the tasks a tool
starts and the worker threads of sync bodies each see their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from dsh_nb.tools.context import capture
from dsh_nb.tools.context.toolcontext import ToolContext
from dsh_nb.tools.context.values import ToolContextError

if TYPE_CHECKING:
    from dsh_nb.tools.values.execution import ToolExecution

__all__ = ["DOOR", "bind", "current_tool_context", "hearing"]

#: The hearers a door (the runner) gives the calls started inside it.
DOOR: ContextVar[tuple[object, ...] | None] = ContextVar(
    "dsh_nb_call_door", default=None
)


def current_tool_context() -> ToolContext:
    """The context of the call running here; a clear error outside a call."""
    ctx = capture.SINK.get()
    if ctx is None:
        raise ToolContextError(
            "current_tool_context() is only available while a tool runs: call "
            "it inside a tool's body (or a listener of its call), not at "
            "definition time or outside a call"
        )
    return ctx  # type: ignore[no-any-return]


@contextmanager
def bind(execution: ToolExecution) -> Iterator[ToolContext]:
    """Make a context for ``execution`` current for the block (the execute stage).

    Output is captured only where a door shows it (a hearer of the call
    takes lines): a script's bare ``registry.execute``, or a ``Chat`` with
    no view, leaves its prints where they were. A call started inside
    another call without a door of its own (a tool calling
    ``registry.execute``) talks through its caller's context.
    """
    door = DOOR.get()
    outer = capture.SINK.get()
    if door is None and outer is not None:
        yield outer
        return
    hearers = door or ()
    shown = any(getattr(h, "log", None) is not None for h in hearers)
    if shown:
        capture.install()
    ctx = ToolContext(execution, hearers, capture_output=shown)
    token = capture.SINK.set(ctx)
    inner = DOOR.set(None)
    try:
        yield ctx
    finally:
        DOOR.reset(inner)
        capture.SINK.reset(token)
        ctx._close()


@contextmanager
def hearing(hearers: Sequence[object]) -> Iterator[None]:
    """Give the calls started inside the block these hearers (the runner's)."""
    token = DOOR.set(tuple(h for h in hearers if h is not None))
    try:
        yield
    finally:
        DOOR.reset(token)
