"""nbval really compares the cards: an edited stored card must fail.

A notebook whose outputs are never compared would pass whatever the product
drew. These tests copy the quickstart notebook, with the conftest and the
sanitize file nbval runs with, into a folder of their own, and run nbval
there as CI does. A copy whose stored cards were edited, one MIME part per
cell, fails on exactly those cells, and every other cell passes, so nothing
else in the stored outputs depends on where the repository lives.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat

__all__: list[str] = []

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
QUICKSTART = "00-quickstart.ipynb"
CARD = "application/vnd.dsh.tool-card+json"


def _copy(dest: Path, *, conftest: bool = True) -> Path:
    folder = dest / "notebooks"
    folder.mkdir()
    shutil.copy(NOTEBOOKS / QUICKSTART, folder)
    shutil.copy(NOTEBOOKS / "sanitize.cfg", folder)
    if conftest:
        shutil.copy(NOTEBOOKS / "conftest.py", folder)
    return folder / QUICKSTART


def _nbval(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-rf",
            "--nbval",
            "--nbval-current-env",
            "--nbval-cell-timeout=60",
            "--nbval-sanitize-with",
            str(folder / "notebooks" / "sanitize.cfg"),
            str(folder / "notebooks"),
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _card_cells(nb: Any) -> list[int]:
    """Indexes of the code cells (nbval's numbering) that show a card."""
    code = [c for c in nb.cells if c.cell_type == "code"]
    return [
        i
        for i, cell in enumerate(code)
        if any(CARD in out.get("data", {}) for out in cell.outputs)
    ]


def _card(nb: Any, index: int) -> Any:
    code = [c for c in nb.cells if c.cell_type == "code"]
    return next(o for o in code[index].outputs if CARD in o.get("data", {}))


def test_an_edited_stored_card_fails(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    nb = nbformat.read(path, 4)
    code_cells = sum(c.cell_type == "code" for c in nb.cells)
    cells = _card_cells(nb)
    assert len(cells) >= 3, "the quickstart should show at least three cards"
    edits = dict(zip(cells[:3], (CARD, "text/html", "text/plain"), strict=True))
    for index, mime in edits.items():
        data = _card(nb, index).data
        if mime == CARD:
            data[CARD]["status"] = "edited"
        else:
            data[mime] = data[mime].replace("add", "sub", 1)
    nbformat.write(nb, path)

    done = _nbval(tmp_path)

    assert done.returncode == 1, done.stdout[-4000:]
    # Every other cell passes: nothing else in the stored outputs depends on
    # where the notebook runs.
    tally = f"{len(edits)} failed, {code_cells - len(edits)} passed"
    assert tally in done.stdout, done.stdout[-4000:]
    for index, mime in edits.items():
        assert f"{QUICKSTART}::Cell {index} " in done.stdout
        assert f"mismatch '{mime}'" in done.stdout, mime


def test_bare_nbval_would_compare_pending_cards(tmp_path: Path) -> None:
    """Why ``notebooks/conftest.py`` exists: nbval drops display updates.

    Without it nbval sees each card as first displayed, still pending. If
    this test fails, nbval learned to apply ``update_display_data`` and the
    conftest can go.
    """
    path = _copy(tmp_path, conftest=False)
    cards = len(_card_cells(nbformat.read(path, 4)))
    done = _nbval(tmp_path)
    assert f"{cards} failed" in done.stdout, done.stdout[-4000:]
    assert "{'status': 'pending'}" in done.stdout
