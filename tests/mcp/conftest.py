"""Fixtures of the MCP tests: the runtime folder a served server writes to.

``serve_mcp`` and ``python -m dsh_nb serve`` write their entry and token
files to Jupyter's runtime folder; each test gets its own, so parallel
tests and the user's real servers never meet. Asking for either fixture is
how a test says it starts MCP servers: tests/conftest.py marks it
``server`` from that, so the quick loop leaves it out.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    """A fresh runtime folder, for a server process's environment."""
    folder = tmp_path / "runtime"
    folder.mkdir()
    return folder


@pytest.fixture
def runtime_env(runtime: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """:func:`runtime`, set as ``JUPYTER_RUNTIME_DIR`` for servers in this process."""
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    return runtime
