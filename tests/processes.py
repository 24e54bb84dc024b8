"""Other processes a test starts: a Python script, or a server it stops.

The harness for tests that run ``python`` (the docs' scripts, the
benchmarks, a check in a clean interpreter) or start a program they talk
to. tests/conftest.py marks every test of a module that imports from here
``server``, so the quick loop (``-m "not kernel and not browser and not
server"``) leaves it out, as it does MCP peers and kernels.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["run_python", "started"]


def run_python(
    *args: str, timeout: float | None = 120, **options: Any
) -> subprocess.CompletedProcess[str]:
    """Run ``python ARGS`` with this interpreter; its output captured as text.

    ``options`` go to :func:`subprocess.run` (``env``, ``cwd``, ``check``).
    """
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **options,
    )


@contextlib.contextmanager
def started(argv: Sequence[str], **options: Any) -> Iterator[subprocess.Popen[Any]]:
    """Start ``argv``; on the way out stop it, killing it after 10 seconds."""
    proc = subprocess.Popen(list(argv), **options)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
