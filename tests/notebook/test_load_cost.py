"""``%load_ext dsh_nb`` imports what loading needs, not every door.

Evaluations, the model loop, replay and card rendering are imported when a
cell first uses them. Which modules a fresh shell holds after the load is
checked here; how long the load takes is ``benchmarks/load.py``'s job.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DEFERRED = [
    "dsh_nb.cards.bundle",
    "dsh_nb.cards.cardhtml",
    "dsh_nb.cards.model",
    "dsh_nb.evals",
    "dsh_nb.models.chat",
    "dsh_nb.models.wire",
    "dsh_nb.notebook.chatview",
    "dsh_nb.notebook.live",
    "dsh_nb.notebook.replay",
    "dsh_nb.tools.signature",
    "ipywidgets",
    "jsonschema",
    "pydantic",
]

CODE = f"""
import json, sys
from IPython.core.interactiveshell import InteractiveShell

ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "dsh_nb")
loaded = [m for m in {DEFERRED!r} if m in sys.modules]
magics = ip.magics_manager.magics
names = sorted(magics["line"]) + ["%%" + n for n in sorted(magics["cell"])]
cells = [
    '%%tool\\ndef add(a: int, b: int) -> int:\\n    "Add."\\n    return a + b',
    '%call add {{"a": 1, "b": 2}}',
    "import dsh_nb\\nfrom dsh_nb.notebook.current import current_state\\n"
    "_cards = dsh_nb.replay(current_state().agent.session)",
]
for cell in cells:
    assert ip.run_cell(cell).success, cell
after = [m for m in {DEFERRED!r} if m in sys.modules]
print(json.dumps([loaded, names, after]))
"""


def test_load_ext_leaves_the_other_doors_unimported(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "IPYTHONDIR": str(tmp_path)},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    loaded, names, after = json.loads(done.stdout.splitlines()[-1])
    assert loaded == []
    for magic in ("tool_eval", "tools", "call", "tool_policy", "tool_log", "%%chat"):
        assert magic in names, names
    # The first use imports what it needs, and it works.
    for module in (
        "dsh_nb.tools.signature",
        "dsh_nb.notebook.live",
        "dsh_nb.cards.bundle",
    ):
        assert module in after
    assert "dsh_nb.notebook.replay" in after
