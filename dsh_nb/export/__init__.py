"""Export a notebook's tools as a module that rebuilds their registry.

Pure Python (``ast`` and ``symtable``): the notebook gathers the cells, the
namespace and the registry's contents; this package picks the statements
the tools need and writes the module (``%tools export`` is the door).
"""

from __future__ import annotations

from dsh_nb.export.cells import Cell
from dsh_nb.export.hooks import Hook, registry_hooks
from dsh_nb.export.module import POLICY_TABLE, Export, ToolSource, export_module
from dsh_nb.export.slicer import Problem

__all__ = [
    "POLICY_TABLE",
    "Cell",
    "Export",
    "Hook",
    "Problem",
    "ToolSource",
    "export_module",
    "registry_hooks",
]
