"""The notebook layer: cards, magics and approvals on top of ``dsh_nb.tools``.

Its helpers for code in a cell are listed here and imported on first use
(importing a module of this package loads no IPython by itself); a cell
reaches them as ``dsh_nb.X`` too, though they are not in ``dsh_nb.__all__``.
"""

# ruff: noqa: F401 - the type checkers' view of the names below, which
# are exported by the table: ``__all__`` is built from it, not written out.

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

# The one list of this face: each public name and the module that defines
# it. ``__all__`` is built from it; the imports above are the type
# checkers' view of the same names (tests/unit/test_lazy_faces.py holds
# the two together).
_PUBLIC = {
    "dispatch": "dsh_nb.notebook.extension",
    "guard": "dsh_nb.notebook.extension",
    "on_result": "dsh_nb.notebook.extension",
    "pending_approvals": "dsh_nb.notebook.pending",
    "post_execute": "dsh_nb.notebook.extension",
    "pre_execute": "dsh_nb.notebook.extension",
    "remove_listener": "dsh_nb.notebook.extension",
}

__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_face(__name__, _PUBLIC)
