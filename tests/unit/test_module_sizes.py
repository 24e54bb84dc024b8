"""One module, one idea: no module of the package grows past 450 lines."""

from __future__ import annotations

from pathlib import Path

import dsh_nb

LIMIT = 450


def test_no_module_is_over_the_limit() -> None:
    root = Path(dsh_nb.__file__).parent
    sizes = {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for path in root.rglob("*.py")
    }
    assert len(sizes) > 50  # the whole package was read
    over = {name: lines for name, lines in sizes.items() if lines > LIMIT}
    assert not over, f"modules over {LIMIT} lines (split them): {over}"
