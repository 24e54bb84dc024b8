"""``serve --journal`` writes a private file, as ``--token-file`` is read.

Issue 34 §2.6: ``--journal`` appended through a planted symlink, kept an
existing journal at 0644 and created a dangling link's target. Now no link
is followed (dangling or not), only a regular file of this user is
written, 0600, and a refusal names the path and the fix (exit 2). Real
``serve`` processes. (``record=``: tests/evals/test_record_private.py.)
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from servekit import HERE, TOOLS, env, serve_argv


def plant(tmp_path: Path, kind: str) -> tuple[Path, Path | None]:
    """A path prepared the way an attacker or a careless setup leaves it."""
    path = tmp_path / "calls.jsonl"
    victim = tmp_path / "victim.txt"
    if kind == "symlink":
        victim.write_text("precious\n")
        path.symlink_to(victim)
    elif kind == "dangling":
        path.symlink_to(victim)
    elif kind == "shared":
        path.write_text("")
        path.chmod(0o644)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    return path, victim


REFUSALS = {
    "symlink": "is a symbolic link",
    "dangling": "is a symbolic link",
    "shared": "run chmod 600",
    "fifo": "not a regular file",
    "folder": "not a regular file",
}


@pytest.mark.parametrize("kind", sorted(REFUSALS))
def test_serve_refuses_a_journal_that_is_not_a_private_file(
    runtime: Path, tmp_path: Path, kind: str
) -> None:
    path, victim = plant(tmp_path, kind)
    done = subprocess.run(
        serve_argv(str(TOOLS), "--stdio", "--journal", str(path)),
        capture_output=True,
        text=True,
        env=env(runtime),
        cwd=str(HERE),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert REFUSALS[kind] in done.stderr
    assert str(path) in done.stderr
    if kind == "symlink":
        assert victim is not None and victim.read_text() == "precious\n"
    if kind == "dangling":
        assert victim is not None and not victim.exists()
    if kind == "shared":
        assert path.read_text() == ""
