"""Committed notebooks hold no machine's absolute path, and 07 keeps its files.

A stored output (its data, display metadata, text or traceback) that names
the folder a notebook ran in leaks where someone's checkout was, and goes
stale on every other machine. Paths are shown relative to the notebook's
folder instead. The one exception below is content, not a location: a
recorded model asks to write outside its project, and is denied.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbtools import NOTEBOOKS, execute

__all__: list[str] = []

ABSOLUTE = re.compile(
    r"(?<![\w.~:/\\-])(?:/(?:[\w.-]+/)+[\w.-]*|[A-Za-z]:(?:\\[\w.-]+)+)"
)
# 08's scripted model asks for /tmp/hello.txt so that its guard can deny it;
# a diff of a new file says it comes from /dev/null.
CONTENT = {"/tmp/hello.txt", "/dev/null"}
COMMITTED = sorted(NOTEBOOKS.glob("*.ipynb"))


def absolute_paths(path: Path) -> list[str]:
    """Every absolute path in ``path``'s stored outputs, with where it is."""
    found = []
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", ()):
            text = json.dumps(output, ensure_ascii=False)
            text = text.encode().decode("unicode_escape", errors="replace")
            for match in ABSOLUTE.finditer(text):
                if match.group(0) not in CONTENT:
                    found.append(f"cell {index}: {match.group(0)}")
    return found


def test_the_pattern_finds_paths() -> None:
    sample = "cwd: /home/ada/dsh_nb/notebooks <b>ok</b></pre> C:\\Users\\ada\\x"
    assert ABSOLUTE.findall(sample) == [
        "/home/ada/dsh_nb/notebooks",
        "C:\\Users\\ada\\x",
    ]
    assert ABSOLUTE.findall("https://example.org/a/b and </span></pre> 1/2") == []


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_no_stored_output_holds_an_absolute_path(path: Path) -> None:
    assert absolute_paths(path) == []


def test_07_keeps_the_files_its_cards_link_to(tmp_path: Path) -> None:
    name = "07-presentation-cards.ipynb"
    shutil.copy(NOTEBOOKS / name, tmp_path / name)
    nb = execute(tmp_path / name)
    work = tmp_path / "_work" / "07-presentation-cards"
    linked = {"greeting.py", "README.md"}
    assert linked <= {p.name for p in work.iterdir()}, "07 deleted its files"
    shown = json.dumps([c.get("outputs", []) for c in nb.cells])
    for file in linked:
        assert f"_work/07-presentation-cards/{file}" in shown
