"""The runtime file that tells a bridge or a terminal where a server is.

A served kernel writes ``dsh-mcp-<pid>.json`` (``{url, token, pid, name}``,
mode 0600) into the Jupyter runtime folder. The token lives only there: it
never reaches a notebook output, so a saved notebook cannot leak it, and a
client launcher (the stdio bridge) reads it instead of carrying it in its
own, often synced, settings file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "RuntimeEntry",
    "find_entry",
    "list_entries",
    "remove_entry",
    "runtime_dir",
    "write_entry",
]

PREFIX = "dsh-mcp-"


@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeEntry:
    """One running server as its runtime file describes it."""

    path: Path
    url: str
    token: str
    pid: int
    name: str | None
    mtime: float

    def __repr__(self) -> str:  # the token stays out of every repr
        return f"<RuntimeEntry {self.url} pid={self.pid} name={self.name!r}>"


def runtime_dir() -> Path:
    """The Jupyter runtime folder (``JUPYTER_RUNTIME_DIR`` or the default)."""
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


def write_entry(*, url: str, token: str, name: str | None) -> Path:
    """Write this process's runtime file, readable by its owner only."""
    folder = runtime_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{PREFIX}{os.getpid()}.json"
    body = json.dumps({"url": url, "token": token, "pid": os.getpid(), "name": name})
    # Created 0600 from the first byte, then renamed into place: the token
    # is never readable by others, not even for a moment.
    fd, tmp = tempfile.mkstemp(prefix=".dsh-mcp-", dir=folder)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(body)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def remove_entry(path: Path) -> None:
    """Remove a runtime file; a missing one is fine."""
    path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(path: Path) -> RuntimeEntry | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        mtime = path.stat().st_mtime
    except (OSError, ValueError):
        return None
    if not isinstance(data, Mapping):
        return None
    url, token, pid, name = (data.get(k) for k in ("url", "token", "pid", "name"))
    if not (isinstance(url, str) and isinstance(token, str) and type(pid) is int):
        return None
    return RuntimeEntry(
        path=path,
        url=url,
        token=token,
        pid=pid,
        name=name if isinstance(name, str) else None,
        mtime=mtime,
    )


def list_entries(folder: Path | None = None) -> list[RuntimeEntry]:
    """Every live server's entry, newest first; stale files are skipped."""
    folder = runtime_dir() if folder is None else folder
    entries = []
    for path in folder.glob(f"{PREFIX}*.json"):
        entry = _read(path)
        if entry is not None and _alive(entry.pid):
            entries.append(entry)
    entries.sort(key=lambda e: e.mtime, reverse=True)
    return entries


def find_entry(
    name: str | None = None, folder: Path | None = None
) -> RuntimeEntry | None:
    """The newest live server, or the newest one named ``name``.

    A name matches the server's name or, for a kernel, its kernel id (the
    connection file's ``kernel-<id>.json`` stem works as well).
    """
    for entry in list_entries(folder):
        if name is None:
            return entry
        if entry.name is not None and name in (
            entry.name,
            f"kernel-{entry.name}",
            f"kernel-{entry.name}.json",
        ):
            return entry
    return None
