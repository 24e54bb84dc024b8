"""The approval channel: a pending prompt is announced to the frontend.

A prompt may wait in a cell scrolled far away (an MCP client's call shows
in the panel under the cell that started the server), so every prompt the
widget answerer shows is also announced on a Jupyter comm, target
``dsh_nb.approvals``. The labextension raises a JupyterLab notification
for it, with *Allow once* and *Reject*, and sends the answer back; the
kernel answers the very same :class:`ApprovalPrompt`, through the same
``approve()`` / ``reject()`` a click on its buttons uses, so the journal,
the card and the panel update exactly as for a click.

Either side may come first. The kernel registers the target at
``%load_ext`` (a page that connects later opens its own comm) and opens
one comm itself (for the pages already connected). Messages, all JSON
text; the frontend shows every string as text, never as markup::

    kernel -> page  {"type": "pending", "id", "callId", "tool", "agent", "reason"}
    kernel -> page  {"type": "settled", "id", "outcome"}
    page -> kernel  {"type": "answer", "id", "answer": "allow-once" | "reject"}

``id`` is new for every announcement, so a late answer can never reach a
later prompt of the same call. The first answer wins (the prompt ignores
the rest); a malformed message or an unknown id is dropped without a
traceback. Nothing secret travels here: no token, no arguments.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.cards.escape import visible

if TYPE_CHECKING:
    from dsh_nb.notebook.prompt import ApprovalPrompt

__all__ = ["TARGET", "ApprovalChannel"]

TARGET: Final = "dsh_nb.approvals"
VERSION: Final = 1
_MAX_TEXT: Final = 500
_log = logging.getLogger(__name__)


def _text(value: object) -> str:
    """Visible, bounded text: the toast shows 140 characters at most."""
    text = visible(str(value))
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


class ApprovalChannel:
    """Announce pending prompts on every open ``dsh_nb.approvals`` comm."""

    def __init__(self) -> None:
        self._comms: dict[str, Any] = {}
        self._notices: dict[str, tuple[ApprovalPrompt, dict[str, str]]] = {}
        self._manager: Any = None
        self.closed = False

    @property
    def comm_count(self) -> int:
        """How many comms are open (frontends that may show notices)."""
        return len(self._comms)

    def install(self, shell: object) -> Callable[[], None]:
        """Register the target and greet the frontend; return the close.

        A no-op outside a kernel (a terminal IPython, a script).
        """
        if getattr(shell, "kernel", None) is None:
            return self.close
        try:
            import comm

            manager = comm.get_comm_manager()
            manager.register_target(TARGET, self._on_open)
            self._manager = manager
            opened = comm.create_comm(
                target_name=TARGET, data={"type": "hello", "version": VERSION}
            )
        except Exception:  # noqa: BLE001 - notices are a convenience, never fatal
            _log.warning("dsh_nb: approval notices are unavailable", exc_info=True)
            return self.close
        self._adopt(opened)
        return self.close

    def announce(self, prompt: ApprovalPrompt, agent: str) -> Callable[[], None]:
        """Tell every frontend that ``prompt`` waits; return the settle.

        Never raises: the prompt in the cell asks whatever happens here.
        """
        if self.closed:
            return _noop
        try:
            return self._announce(prompt, agent)
        except Exception:  # noqa: BLE001 - a notice is a convenience
            _log.warning("dsh_nb: could not announce %r", prompt, exc_info=True)
            return _noop

    def _announce(self, prompt: ApprovalPrompt, agent: str) -> Callable[[], None]:
        notice_id = uuid.uuid4().hex
        message = {
            "type": "pending",
            "id": notice_id,
            "callId": _text(prompt.call_id or ""),
            "tool": _text(prompt.tool_name),
            "agent": _text(agent),
            "reason": _text(prompt.reason or ""),
        }
        self._notices[notice_id] = (prompt, message)
        self._broadcast(message)

        def settle() -> None:
            if self._notices.pop(notice_id, None) is None:
                return
            outcome = prompt.outcome or "cancelled"
            self._broadcast({"type": "settled", "id": notice_id, "outcome": outcome})

        return settle

    def close(self) -> None:
        """Close every comm and unregister the target (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self._notices.clear()
        for each in list(self._comms.values()):
            try:
                each.close()
            except Exception:  # noqa: BLE001 - the kernel may be going away
                _log.debug("could not close an approval comm", exc_info=True)
        self._comms.clear()
        manager, self._manager = self._manager, None
        if manager is not None:
            try:
                manager.unregister_target(TARGET, self._on_open)
            except Exception:  # noqa: BLE001 - already gone with the kernel
                _log.debug("could not unregister %s", TARGET, exc_info=True)

    # --- comms -------------------------------------------------------------------

    def _on_open(self, opened: Any, _msg: object) -> None:
        """A page opened a comm: keep it and tell it what is pending now."""
        if self.closed:
            opened.close()
            return
        self._adopt(opened)
        for _prompt, message in list(self._notices.values()):
            self._send(opened, message)

    def _adopt(self, opened: Any) -> None:
        comm_id = str(opened.comm_id)
        self._comms[comm_id] = opened
        opened.on_msg(self._on_msg)
        opened.on_close(lambda _msg: self._comms.pop(comm_id, None))

    def _broadcast(self, message: Mapping[str, str]) -> None:
        for each in list(self._comms.values()):
            self._send(each, message)

    def _send(self, target: Any, message: Mapping[str, str]) -> None:
        try:
            target.send(dict(message))
        except Exception:  # noqa: BLE001 - a dead comm must not stop the prompt
            _log.debug("could not send on an approval comm", exc_info=True)

    def _on_msg(self, msg: object) -> None:
        """An answer from a page; anything malformed or stale is dropped."""
        try:
            self._answer(msg)
        except Exception:  # noqa: BLE001 - a page's message never hurts the kernel
            _log.debug("dropped an approval message", exc_info=True)

    def _answer(self, msg: object) -> None:
        content = msg.get("content") if isinstance(msg, Mapping) else None
        data = content.get("data") if isinstance(content, Mapping) else None
        if not isinstance(data, Mapping) or data.get("type") != "answer":
            return
        notice_id, answer = data.get("id"), data.get("answer")
        if not isinstance(notice_id, str):
            return
        found = self._notices.get(notice_id)
        if found is None or found[0].done:
            return
        prompt = found[0]
        if answer == "allow-once":
            prompt.approve()
        elif answer == "reject":
            prompt.reject()


def _noop() -> None:
    return None
