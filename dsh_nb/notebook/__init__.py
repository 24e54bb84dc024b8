"""The notebook layer: cards, magics and approvals on top of ``dsh_nb.tools``.

Its helpers for code in a cell are listed here and imported on first use
(importing a module of this package loads no IPython by itself); a cell
reaches them as ``dsh_nb.X`` too, though they are not in ``dsh_nb.__all__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.notebook.extension import (
        dispatch,
        guard,
        on_result,
        post_execute,
        pre_execute,
        remove_listener,
    )
    from dsh_nb.notebook.pending import pending_approvals

_KERNEL = "dsh_nb.notebook.extension"

__all__ = [
    "dispatch",
    "guard",
    "on_result",
    "pending_approvals",
    "post_execute",
    "pre_execute",
    "remove_listener",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "dispatch": _KERNEL,
        "guard": _KERNEL,
        "on_result": _KERNEL,
        "pending_approvals": "dsh_nb.notebook.pending",
        "post_execute": _KERNEL,
        "pre_execute": _KERNEL,
        "remove_listener": _KERNEL,
    },
)
