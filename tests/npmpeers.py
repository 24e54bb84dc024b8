"""The Node.js programs some tests run, installed by ``npm ci`` from a lock.

``.ci/run`` starts each ``npm ci`` in the background and the tests at
once, so the install overlaps the first minutes of the suite. It names a
folder in ``DSH_CI_NPM`` where each install leaves ``<key>.started``, then
``<key>.rc`` (its exit status) and ``<key>.log`` when it ends; a test that
needs the programs waits for that end. Anywhere else (a developer's
``pytest``), the first test that needs them runs ``npm ci`` itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

__all__ = ["REPO", "ensure_installed"]

REPO = Path(__file__).resolve().parents[1]
_WAIT_S = 900.0


def _key(folder: Path) -> str:
    """``tests/mcp/node`` -> ``tests-mcp-node``, as ``.ci/run`` names it."""
    return folder.resolve().relative_to(REPO).as_posix().replace("/", "-")


def _wait_for_ci(folder: Path) -> None:
    """If ``.ci/run`` is installing ``folder``, wait for it; fail if it did."""
    state = os.environ.get("DSH_CI_NPM")
    if not state:
        return
    base = Path(state) / _key(folder)
    if not base.with_suffix(".started").exists():
        return
    deadline = time.monotonic() + _WAIT_S
    rc = base.with_suffix(".rc")
    while not rc.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"npm ci in {folder} still running after {_WAIT_S:.0f} s")
        time.sleep(0.2)
    if rc.read_text().strip() != "0":
        log = base.with_suffix(".log")
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        pytest.fail(f"npm ci in {folder} failed:\n{tail}")


def ensure_installed(folder: Path, needed: Iterable[Path], what: str) -> None:
    """Make sure ``npm ci`` has installed ``folder``'s lock, ``needed`` included.

    Without npm the tests skip locally and fail under CI, which must run
    them: every machine of this project's kind has Node.js.
    """
    _wait_for_ci(folder)
    needed = list(needed)
    if all(path.exists() for path in needed):
        return
    npm = shutil.which("npm")
    if npm is None:
        reason = f"npm is not on PATH: {what} needs Node.js"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=folder,
        check=True,
        timeout=900,
    )
