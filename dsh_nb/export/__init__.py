"""Export a notebook's tools as a module that rebuilds their registry.

Pure Python (``ast`` and ``symtable``): the notebook gathers the cells, the
namespace and the registry's contents; this package picks the statements
the tools need and writes the module (``%tools export`` is the door).
"""

# ruff: noqa: F401 - the type checkers' view of the names below, which
# are exported by the table: ``__all__`` is built from it, not written out.

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.export.cells import Cell
    from dsh_nb.export.hooks import Hook, registry_hooks
    from dsh_nb.export.module import POLICY_TABLE, Export, ToolSource, export_module
    from dsh_nb.export.slicer import Problem

# The one list of this face: each public name and the module that defines
# it. ``__all__`` is built from it; the imports above are the type
# checkers' view of the same names (tests/unit/test_lazy_faces.py holds
# the two together).
_PUBLIC = {
    "POLICY_TABLE": "dsh_nb.export.module",
    "Cell": "dsh_nb.export.cells",
    "Export": "dsh_nb.export.module",
    "Hook": "dsh_nb.export.hooks",
    "Problem": "dsh_nb.export.slicer",
    "ToolSource": "dsh_nb.export.module",
    "export_module": "dsh_nb.export.module",
    "registry_hooks": "dsh_nb.export.hooks",
}

__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_face(__name__, _PUBLIC)
