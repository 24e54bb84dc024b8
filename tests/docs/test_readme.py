"""Docs as tests: every README code block runs here or is marked shell.

``python`` blocks run as a script in a fresh interpreter; ``ipython`` blocks
run in order, as notebook cells, in an in-process IPython shell with the
extension unloaded first (the README's first cell loads it).
"""

from __future__ import annotations

import re
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell
from processes import run_python

README = Path(__file__).resolve().parents[2] / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
RUNNABLE = {"python", "ipython"}
NOT_RUN = {"shell", "text"}


def blocks(lang: str) -> list[str]:
    return [body for tag, body in FENCE.findall(README.read_text()) if tag == lang]


def test_every_block_is_runnable_or_marked_not_run() -> None:
    tags = [tag for tag, _ in FENCE.findall(README.read_text())]
    assert tags, "the README has no code blocks"
    unknown = [t for t in tags if t not in RUNNABLE | NOT_RUN]
    assert not unknown, f"mark these blocks python, ipython, shell or text: {unknown}"


def test_python_blocks_run_as_a_script() -> None:
    code = blocks("python")
    assert code
    for body in code:
        done = run_python("-c", body)
        assert done.returncode == 0, done.stderr


def test_ipython_blocks_run_as_notebook_cells() -> None:
    cells = blocks("ipython")
    assert cells and cells[0].strip() == "%load_ext dsh_nb"
    ip = InteractiveShell.instance()
    ip.run_cell("%unload_ext dsh_nb")
    ip.run_cell("%unload_ext dsh_nb.notebook.extension")
    ip.config.pop("DshConfig", None)
    try:
        for cell in cells:
            result = ip.run_cell(cell)
            assert result.success, (
                cell,
                result.error_before_exec,
                result.error_in_exec,
            )
    finally:
        ip.run_cell("%unload_ext dsh_nb")
