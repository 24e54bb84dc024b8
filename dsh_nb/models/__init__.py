"""A model in the loop: ``Chat``, the step loop, provider adapters, wire formats.

No Jupyter imports, and no SDK import until a ``Chat`` first talks to a
model: ``import dsh_nb.models`` is cheap. The SDKs (``openai``,
``anthropic``) come with the ``[models]`` extra.
"""

# ruff: noqa: F401 - the type checkers' view of the names below, which
# are exported by the table: ``__all__`` is built from it, not written out.

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.models.chat import Chat
    from dsh_nb.models.usage import Usage
    from dsh_nb.models.view import ChatReply, ChatView

# The one list of this face: each public name and the module that defines
# it. ``__all__`` is built from it; the imports above are the type
# checkers' view of the same names (tests/unit/test_lazy_faces.py holds
# the two together).
_PUBLIC = {
    "Chat": "dsh_nb.models.chat",
    "ChatReply": "dsh_nb.models.view",
    "ChatView": "dsh_nb.models.view",
    "Usage": "dsh_nb.models.usage",
}

__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_face(__name__, _PUBLIC)
