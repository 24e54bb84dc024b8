"""The kernel's ``CallRunner``: every door's calls become live cards.

A call from a cell, ``dispatch``, a model or an MCP client runs through the
core's one runner; this subclass adds what only the notebook has: the call
that encloses a nested one (its ``parent`` token), and a live card for
every call no door drew itself. Where the card goes depends on the door:
under the running cell by default, in the MCP panel for a served call.
Cards are the runner's to make (:meth:`KernelRunner.new_call`, which
``%call`` and ``dsh_nb.call`` use too); the runner and its cards read the
kernel state through :class:`~dsh_nb.notebook.host.KernelHost`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.notebook.nesting import enclosing
from dsh_nb.notebook.toolask import NotebookTalk
from dsh_nb.tools.runner import CallRunner, CallTicket

if TYPE_CHECKING:
    from dsh_nb.notebook.host import KernelHost
    from dsh_nb.notebook.live import LiveCall
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.running.abort import AbortSignal
    from dsh_nb.tools.values.execution import ToolExecutionToken

__all__ = ["KernelRunner"]

Placement = Callable[["LiveCall"], object]


class KernelRunner(CallRunner):
    """Runs every door's calls through the kernel registry, as cards."""

    def __init__(self, state: KernelHost) -> None:
        # Questions a tool asks go to the notebook's person (notebook.toolask).
        super().__init__(state.registry, views=self._card, talk=NotebookTalk(state))
        self._state = state
        self._calls = 0
        #: Where a door's cards go (``"mcp"``: the server's panel); a door
        #: without an entry shows its cards under the running cell.
        self.placements: dict[str, Placement] = {}

    def new_call(
        self,
        name: str,
        arguments: Any,
        *,
        call_id: str | None = None,
        agent: Agent | None = None,
        signal: AbortSignal | None = None,
        door: str = "cell",
    ) -> LiveCall:
        """Create the live card of one call; show it with ``.show()``."""
        if call_id is None:
            self._calls += 1
            call_id = f"call-{self._calls}"
        # The live card (and the card model it draws) loads with the first
        # call, not with the extension.
        from dsh_nb.notebook.live import LiveCall

        return LiveCall(
            self._state,
            name,
            arguments,
            call_id=call_id,
            agent=agent or self._state.agent,
            signal=signal,
            door=door,
        )

    def parent_of(self, ticket: CallTicket) -> ToolExecutionToken | None:
        outer = enclosing()  # the call whose body started this one, if any
        return None if outer is None else outer.token

    def _card(self, ticket: CallTicket) -> LiveCall:
        live = self.new_call(
            ticket.name,
            ticket.arguments,
            call_id=ticket.call_id,
            agent=ticket.agent,
            door=ticket.door,
        )
        place = self.placements.get(ticket.door)
        if place is None:
            live.show()
        else:
            place(live)
        return live
