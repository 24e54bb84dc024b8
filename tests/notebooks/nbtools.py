"""Execute the teaching notebooks in place, the way nbval will rerun them.

``python tests/notebooks/nbtools.py [NOTEBOOK ...]`` (default: every
``notebooks/*.ipynb``) runs each notebook top to bottom in a fresh kernel,
in the notebook's own folder, and saves it with its outputs, because nbval
only compares cells that were committed executed. Saved widget state is
dropped (its model ids are random and nbval skips widget views anyway), and
so are cell timings, so a rerun only changes what really changed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["CARD_MIME", "NOTEBOOKS", "ROOT", "clean", "execute", "main"]

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


CARD_MIME = "application/vnd.dsh.tool-card+json"


def clean(nb: Any, folder: Path | None = None) -> Any:
    """Drop what a rerun changes without meaning: widget state, timings.

    A card's display metadata names the kernel's working folder (``cwd``),
    which the JupyterLab renderer resolves relative file paths against. For
    a notebook run in its own ``folder`` that is the folder the renderer
    assumes anyway, so it is dropped: a committed notebook holds no
    machine's absolute path (``tests/notebooks/test_paths.py``).
    """
    nb.metadata.pop("widgets", None)
    nb.metadata["language_info"] = {"name": "python"}
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", ()):
            card = output.get("metadata", {}).get(CARD_MIME)
            if folder is not None and card and card.get("cwd") == str(folder):
                del card["cwd"]
                if not card:
                    del output["metadata"][CARD_MIME]
    return nb


def execute(path: Path, *, timeout: int = 60, kernel_name: str = "python3") -> Any:
    """Run ``path`` in a fresh kernel in its folder; return the notebook."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    return clean(nb, path.parent.resolve())


def main(argv: list[str]) -> int:
    """Execute each notebook named in ``argv`` (default: all) in place."""
    import nbformat

    paths = [Path(a) for a in argv] or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        nbformat.write(execute(path), path)
        print(f"executed {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
