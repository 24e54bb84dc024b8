"""No module takes an underscore name from another sub-package.

import-linter's ``private_modules`` contract covers private *modules*; this
covers private *names*: ``from dsh_nb.tools.audit.journal import _event`` in
``dsh_nb.mcp`` would make a private name an interface between rooms.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dsh_nb

ROOT = Path(dsh_nb.__file__).parent


def _room(module: str) -> str:
    """``dsh_nb.tools.x`` -> ``dsh_nb.tools``; a root module is its own room."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _private(name: str) -> bool:
    # Dunders (``__all__``) and Jupyter's own hook names are no one's secret.
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and not dunder and not name.startswith("_jupyter_")


def _module_of(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_no_module_imports_another_rooms_private_names() -> None:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        importer = _module_of(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            if not node.module.startswith("dsh_nb.") or _room(node.module) == _room(
                importer
            ):
                continue
            private = [a.name for a in node.names if _private(a.name)]
            if private:
                found.append(f"{importer}: from {node.module} import {private}")
    assert len(list(ROOT.rglob("*.py"))) > 50
    assert not found, "\n".join(found)
