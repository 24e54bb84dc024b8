"""A model in the loop: ``Chat``, the step loop, provider adapters, wire formats.

No Jupyter imports, and no SDK import until a ``Chat`` first talks to a
model: ``import dsh_nb.models`` is cheap. The SDKs (``openai``,
``anthropic``) come with the ``[models]`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.models.chat import Chat
    from dsh_nb.models.usage import Usage
    from dsh_nb.models.view import ChatReply, ChatView

__all__ = ["Chat", "ChatReply", "ChatView", "Usage"]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "Chat": "dsh_nb.models.chat",
        "Usage": "dsh_nb.models.usage",
        "ChatReply": "dsh_nb.models.view",
        "ChatView": "dsh_nb.models.view",
    },
)
