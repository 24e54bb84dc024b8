"""The kernel's ``CallRunner``: every door's calls become live cards.

A call from a cell, ``dispatch``, a model or an MCP client runs through the
core's one runner; this subclass adds what only the notebook has: the call
that encloses a nested one (its ``parent`` token), and a live card for
every call no door drew itself. Where the card goes depends on the door:
under the running cell by default, in the MCP panel for a served call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dsh_nb.notebook.nesting import enclosing
from dsh_nb.notebook.toolask import NotebookTalk
from dsh_nb.tools.runner import CallRunner, CallTicket

if TYPE_CHECKING:
    from dsh_nb.notebook.live import LiveCall
    from dsh_nb.notebook.state import KernelState
    from dsh_nb.tools.values.execution import ToolExecutionToken

__all__ = ["KernelRunner"]

Placement = Callable[["LiveCall"], object]


class KernelRunner(CallRunner):
    """Runs every door's calls through the kernel registry, as cards."""

    def __init__(self, state: KernelState) -> None:
        # Questions a tool asks go to the notebook's person (notebook.toolask).
        super().__init__(state.registry, views=self._card, talk=NotebookTalk(state))
        self._state = state
        #: Where a door's cards go (``"mcp"``: the server's panel); a door
        #: without an entry shows its cards under the running cell.
        self.placements: dict[str, Placement] = {}

    def parent_of(self, ticket: CallTicket) -> ToolExecutionToken | None:
        outer = enclosing()  # the call whose body started this one, if any
        return None if outer is None else outer.token

    def _card(self, ticket: CallTicket) -> LiveCall:
        live = self._state.new_call(
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
