"""Which ``ToolContext`` is current, and which door's hearers a call gets.

The runner says, for the calls it starts, who hears them (:func:`hearing`);
the pipeline's execute stage makes a call's context current (:func:`bind`);
anything running inside the call reads it (:func:`current_tool_context`).
All three are context variables, so concurrent calls, the tasks a tool
starts and the worker threads of sync bodies each see their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar, Token
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


class bind:  # lower case: used as the function it replaced
    """Make a context for ``execution`` current for the block (the execute stage).

    Output is captured only where a door shows it (a hearer of the call
    takes lines): a script's bare ``registry.execute``, or a ``Chat`` with
    no view, leaves its prints where they were. A call started inside
    another call without a door of its own (a tool calling
    ``registry.execute``) talks through its caller's context.

    A class, not a ``@contextmanager`` generator: every call of every door
    enters it, and a generator's machinery cost more than the work.
    """

    __slots__ = ("_ctx", "_door", "_execution", "_sink")

    def __init__(self, execution: ToolExecution) -> None:
        self._execution = execution
        self._ctx: ToolContext | None = None
        self._door: Token[tuple[object, ...] | None] | None = None

    def __enter__(self) -> ToolContext:
        door = DOOR.get()
        outer = capture.SINK.get()
        if door is None and outer is not None:
            return outer  # type: ignore[no-any-return]
        shown = door is not None and any(
            getattr(h, "log", None) is not None for h in door
        )
        if shown:
            capture.install()
        ctx = self._ctx = ToolContext(self._execution, door or (), capture_output=shown)
        self._sink = capture.SINK.set(ctx)
        if door is not None:  # the calls this one starts get no door of theirs
            self._door = DOOR.set(None)
        return ctx

    def __exit__(self, *exc: object) -> None:
        ctx = self._ctx
        if ctx is None:
            return
        if self._door is not None:
            DOOR.reset(self._door)
        capture.SINK.reset(self._sink)
        ctx._close()


class hearing:  # lower case: used as the function it replaced
    """Give the calls started inside the block these hearers (the runner's)."""

    __slots__ = ("_hearers", "_token")

    def __init__(self, hearers: Sequence[object]) -> None:
        self._hearers = tuple(h for h in hearers if h is not None)

    def __enter__(self) -> None:
        self._token = DOOR.set(self._hearers)

    def __exit__(self, *exc: object) -> None:
        DOOR.reset(self._token)
