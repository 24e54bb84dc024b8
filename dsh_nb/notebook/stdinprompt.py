"""An approval asked on the kernel's stdin, settled as a click settles it.

Where the frontend cannot deliver a click while a cell runs (VS Code,
Colab, the classic Notebook), the approval is one line in the frontend's
input box::

    Approve tool call? delete: deleting is irreversible | path="a.txt"
    [y/yes/once = allow once, s/session = allow for this session,
    n/no/r/reject = reject]:

:class:`StdinApproval` is the same :class:`~dsh_nb.notebook.answer.PendingAnswer`
the buttons settle, so the card, the journal, ``pending_approvals()`` and
the summary line are exactly those of a click. Under the card, where the
buttons would be, a note says to answer in the input box.
"""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.cards.question import PersonAnswer, Question, converse
from dsh_nb.notebook.answer import PendingAnswer

if TYPE_CHECKING:
    from dsh_nb.notebook.frontend import RequestOrigin
    from dsh_nb.notebook.stdin import KernelStdin, StdinTarget

__all__ = ["STDIN_NOTE", "StdinApproval", "ask_on_stdin"]

STDIN_NOTE: Final = (
    "Waiting for your answer in the input box: y = allow once, "
    "s = allow for this session, n = reject"
)
_log = logging.getLogger(__name__)


class _Note:
    """What shows under the card while the input box asks."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, **_kwargs: Any) -> dict[str, str]:
        return {
            "text/plain": self.text,
            "text/html": (
                f"<div class='dsh-approval'><i>{html.escape(self.text)}</i></div>"
            ),
        }


class StdinApproval(PendingAnswer):
    """An approval whose question goes to the kernel's stdin."""

    def __init__(
        self,
        question: Question,
        tool_name: str,
        *,
        reason: str | None = None,
        call_id: str | None = None,
        origin: RequestOrigin | None = None,
    ) -> None:
        super().__init__(tool_name, reason=reason, call_id=call_id, origin=origin)
        self.question = question
        self.widget = _Note(STDIN_NOTE)

    def settle_with(self, answer: PersonAnswer) -> None:
        """Answer as the person typed: once, for the session, or reject."""
        if answer.action == "accept" and answer.value == "allow-once":
            self.approve()
        elif answer.action == "accept" and answer.value == "allow-session":
            self.allow_for_session()
        elif answer.action == "cancel":
            self.cancel(answer.note or "cancelled")
        else:
            self.reject()


async def ask_on_stdin(
    question: Question, stdin: KernelStdin, target: StdinTarget
) -> PersonAnswer:
    """Ask ``question`` in ``target``'s cell, waiting for its turn first.

    Never raises for the channel's sake: a failing socket is a ``cancel``
    answer that says why.
    """
    async with stdin.turn():
        try:
            return await converse(question, lambda line: stdin.read_line(line, target))
        except Exception as exc:  # noqa: BLE001 - a broken stdin never kills the call
            _log.warning("dsh_nb: the stdin prompt failed", exc_info=True)
            note = f"the input box failed: {type(exc).__name__}: {exc}"
            return PersonAnswer(action="cancel", note=note)
