"""Notebook 10's cases and tools as a module, for ``python -m dsh_nb eval``.

The definitions are the notebook's own cells tagged ``define``, run here,
so the notebook stays the one place they are written. From this folder::

    python -m dsh_nb eval flights:cases --tools flights:variants --trials 3 \\
        --replay 10-flights.jsonl --min-pass 0.5 --junit flights.xml

replays the notebook's committed recording with no key and no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

NOTEBOOK = Path(__file__).resolve().parent.parent / "10-is-my-tool-good-enough.ipynb"

_found: dict[str, Any] = {"__name__": "flights"}
_cells = nbformat.read(NOTEBOOK, as_version=4).cells
# The first code cell's imports (its %load_ext line is the kernel's alone).
_imports = next(c for c in _cells if c.cell_type == "code").source
_imports = "\n".join(x for x in _imports.splitlines() if not x.startswith("%"))
exec(compile(_imports, f"{NOTEBOOK.name}:imports", "exec"), _found)
for _cell in _cells:
    if "define" in _cell.get("metadata", {}).get("tags", ()):
        exec(compile(_cell.source, f"{NOTEBOOK.name}:define", "exec"), _found)

cases = _found["cases"]
vague = _found["vague"]
precise = _found["precise"]
#: Both versions of the tool, as the notebook runs them (``variants=``).
variants = {"vague": vague, "precise": precise}
