"""``pending_approvals()``: every approval prompt still waiting for a person.

A prompt may sit in a cell scrolled far away (an MCP client's call shows
under the cell that started the server); code and tests reach it here, and
answer the very same prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dsh_nb.notebook.answer import PendingAnswer

__all__ = ["pending_approvals"]


def pending_approvals() -> list[PendingAnswer]:
    """Every pending approval prompt, oldest first.

    Each has ``.tool_name``, ``.call_id``, ``.reason``, ``.approve()``,
    ``.allow_for_session()`` and ``.reject()``.

    Examples
    --------
    >>> for prompt in dsh_nb.pending_approvals():  # doctest: +SKIP
    ...     prompt.approve()
    """
    from dsh_nb.notebook.current import current_state

    prompts = current_state().pending_approvals.values()
    return [p for p in prompts if not getattr(p, "done", False)]
