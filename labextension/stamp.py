"""Record which source the committed card renderer was built from.

``bash labextension/build.sh`` ends by writing ``built-from.json``: a
SHA-256 of every file of ``labextension/`` (its sources, styles, build
configuration and npm lock) and one of the built assets in
``dsh_nb/labextension/``. ``.ci/run`` checks the pair first: when both
still match, the assets are the ones that source built, and the rebuild
(about a minute of npm and webpack on two cores) is skipped. When either
changed (a source edited without rebuilding, assets edited by hand, a new
lock), CI rebuilds and compares the assets byte for byte, as before.

Usage, from anywhere::

    python labextension/stamp.py write   # after a build (build.sh does it)
    python labextension/stamp.py check   # exit 0 if the pair still matches
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STAMP = HERE / "built-from.json"


def _files(folder: str) -> list[str]:
    """Tracked and new (not ignored) files under ``folder``, sorted."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", folder],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stamp = STAMP.relative_to(ROOT).as_posix()
    return sorted(
        rel
        for rel in listed.split("\0")
        if rel and rel != stamp and (ROOT / rel).is_file()
    )


def digest(folder: str) -> str:
    """One SHA-256 over the names and bytes of ``folder``'s files."""
    total = hashlib.sha256()
    for rel in _files(folder):
        total.update(rel.encode() + b"\0")
        total.update(hashlib.sha256((ROOT / rel).read_bytes()).digest())
    return total.hexdigest()


def current() -> dict[str, str]:
    return {"source": digest("labextension"), "assets": digest("dsh_nb/labextension")}


def main(argv: list[str]) -> int:
    if argv == ["write"]:
        STAMP.write_text(json.dumps(current(), indent=2) + "\n", encoding="utf-8")
        return 0
    if argv == ["check"]:
        try:
            recorded = json.loads(STAMP.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 1
        return 0 if recorded == current() else 1
    print("usage: python labextension/stamp.py write|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
