"""The README documents `python -m dsh_nb demo` as the no-browser tour: it must work."""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_headless_and_prints_every_card() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dsh_nb", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[done] add — 5" in out
    assert 'Error: invalid arguments: "a" must be a number' in out
    assert "hello from the shell" in out and "(exit 0)" in out
    assert "[denied] rm notes.txt — Error: rm is not allowed in the demo" in out
    assert "-beta\n+BETA" in out
    assert 'Error: unknown tool "serch"' in out
    assert "1 approval asked" in out


def test_bad_usage_exits_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dsh_nb", "nope"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "usage: python -m dsh_nb demo" in done.stderr
