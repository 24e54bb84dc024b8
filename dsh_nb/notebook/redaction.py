"""Secrets never leave the kernel: every outgoing message is redacted.

Every message a kernel sends (stream text, displays and their updates,
results, tracebacks, execute replies, comm and widget messages) passes
through its jupyter_client ``Session.send``. Wrapping that one method on
the kernel's session is the boundary where text is shown, and then
stored in the notebook, so no printer (a card, an SDK's exception, a
traceback, ``print``) has to remember to redact. With no secret
registered the wrapper passes messages through untouched. Binary buffers
are left as they are. Stream text reaches the page in flushes that it
shows joined, so a flush that starts with a secret's end or ends with a
secret's start has that piece redacted too (:func:`redact_edges`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.tools.audit.secrets import has_secrets, redact_edges, redact_value

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["install"]


def install(ip: InteractiveShell) -> Callable[[], None]:
    """Redact the secrets from the kernel's outgoing messages; return undo.

    A shell without a kernel (a terminal, an in-process test) has no
    session to wrap; nothing is installed.
    """
    session = getattr(getattr(ip, "kernel", None), "session", None)
    if session is None or not callable(getattr(session, "send", None)):
        return lambda: None
    original = session.send

    def send(
        stream: Any,
        msg_or_type: Any,
        content: Any = None,
        parent: Any = None,
        ident: Any = None,
        buffers: Any = None,
        track: bool = False,
        header: Any = None,
        metadata: Any = None,
    ) -> Any:
        if has_secrets():
            if isinstance(msg_or_type, dict):
                msg_or_type = dict(msg_or_type)
                for part in ("content", "metadata"):
                    if part in msg_or_type:
                        msg_or_type[part] = redact_value(msg_or_type[part])
                kind = (msg_or_type.get("header") or {}).get("msg_type")
                if "content" in msg_or_type:
                    msg_or_type["content"] = _stream(kind, msg_or_type["content"])
            content = _stream(msg_or_type, redact_value(content))
            metadata = redact_value(metadata)
        return original(
            stream,
            msg_or_type,
            content,
            parent,
            ident,
            buffers,
            track,
            header,
            metadata,
        )

    session.send = send

    def undo() -> None:
        if session.send is send:
            del session.send  # the class's method again
            if session.send is not original:
                session.send = original

    return undo


def _stream(kind: object, content: Any) -> Any:
    """A stream message's text with the pieces of a secret at its edges
    redacted (other messages are whole: redacted as they are)."""
    if kind != "stream" or not isinstance(content, dict):
        return content
    text = content.get("text")
    if not isinstance(text, str):
        return content
    cut = redact_edges(text)
    return content if cut is text else {**content, "text": cut}
