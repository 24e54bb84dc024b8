"""The renderer's card statuses are generated from the kernel's one list.

``labextension/src/statuses.ts`` is written by
``labextension/gen_statuses.py`` from ``dsh_nb.cards.model.STATUSES``;
these tests regenerate it and compare, so a change to the Python list
fails here until the file (and the built assets) are regenerated, and
they check no other TypeScript module keeps its own copy.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from dsh_nb.cards.model import STATUSES

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "labextension" / "gen_statuses.py"
SOURCE = ROOT / "labextension" / "src"


def generate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )


def test_the_committed_statuses_ts_is_what_the_script_writes() -> None:
    checked = generate("--check")
    assert checked.returncode == 0, checked.stderr


def test_a_stale_file_fails_the_check_and_is_rewritten(tmp_path: Path) -> None:
    out = tmp_path / "statuses.ts"
    out.write_text("export const STATUSES = ['pending', 'done'] as const;\n")
    stale = generate("--check", "--out", str(out))
    assert stale.returncode == 1
    assert "is stale: run python labextension/gen_statuses.py" in stale.stderr
    assert generate("--out", str(out)).returncode == 0
    assert generate("--check", "--out", str(out)).returncode == 0
    assert out.read_text() == (SOURCE / "statuses.ts").read_text()


def test_the_generated_list_is_the_kernels_in_order() -> None:
    text = (SOURCE / "statuses.ts").read_text(encoding="utf-8")
    listed = re.search(r"STATUSES = \[(.*?)\] as const", text, re.S)
    assert listed is not None
    assert tuple(re.findall(r"'([^']*)'", listed.group(1))) == STATUSES


def test_no_other_module_lists_the_statuses() -> None:
    # 'pending' is the renderer's fallback; the others come only from the
    # generated module.
    names = [s for s in STATUSES if s != "pending"]
    copies = {
        path.name: found
        for path in SOURCE.glob("*.ts")
        if path.name != "statuses.ts"
        for found in [
            [n for n in names if f"'{n}'" in path.read_text(encoding="utf-8")]
        ]
        if found
    }
    assert copies == {}
    card = (SOURCE / "card.ts").read_text(encoding="utf-8")
    assert "from './statuses'" in card
