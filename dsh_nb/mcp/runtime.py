"""The runtime file that tells a bridge or a terminal where a server is.

A served kernel writes ``dsh-mcp-<pid>-<random>.json`` (``{url, token, pid,
name}``, mode 0600) into the Jupyter runtime folder. The token lives only
there: it never reaches a notebook output, so a saved notebook cannot leak
it, and a client launcher (the stdio bridge) reads it instead of carrying it
in its own, often synced, settings file.

The folder may be shared (``JUPYTER_RUNTIME_DIR=/tmp/...`` on a multi-user
machine), so nothing in it is trusted by its name:

* a file is written under a fresh, unguessable name that must not exist yet
  (a hard link from a private temporary file), so a name another user
  planted (a symlink, a folder, a FIFO) neither redirects the write nor
  makes it fail, and every server has its own file: the cleanup of a server
  that is stopping never removes the file of the one that replaced it;
* a file is read only if, opened without following a link and checked on
  the open descriptor, it is a regular file owned by this user with mode
  0600 (what :func:`write_entry` makes). Anything else is skipped, so a
  forged file cannot send a client, and its token, to another user's port.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "RuntimeEntry",
    "RuntimeFileError",
    "find_entry",
    "list_entries",
    "pick",
    "remove_entry",
    "runtime_dir",
    "scan",
    "write_entry",
]

PREFIX = "dsh-mcp-"
_MAX_BYTES = 64 * 1024
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a planted FIFO must not block open()
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class RuntimeFileError(RuntimeError):
    """The runtime file could not be written where Jupyter keeps it."""


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


def _folder_for_writing() -> Path:
    folder = runtime_dir()
    hint = "set JUPYTER_RUNTIME_DIR to a folder you own (or unset it)"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:
        raise RuntimeFileError(
            f"the Jupyter runtime folder {str(folder)!r} exists but is not a "
            f"folder; {hint}"
        ) from None
    except OSError as exc:
        raise RuntimeFileError(
            f"cannot create the Jupyter runtime folder {str(folder)!r}: "
            f"{exc.strerror or exc}; {hint}"
        ) from None
    if not folder.is_dir():
        raise RuntimeFileError(
            f"the Jupyter runtime folder {str(folder)!r} is not a folder; {hint}"
        )
    return folder


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_entry(*, url: str, token: str, name: str | None) -> Path:
    """Write this server's runtime file, readable by its owner only.

    Raises
    ------
    RuntimeFileError
        The runtime folder is not a folder, or cannot be written; the
        message names it and the fix.
    """
    folder = _folder_for_writing()
    pid = os.getpid()
    body = json.dumps({"url": url, "token": token, "pid": pid, "name": name})
    try:
        # mkstemp creates the file 0600 with O_EXCL: private from its first
        # byte, and it never opens what another user planted.
        fd, tmp = tempfile.mkstemp(prefix=".dsh-mcp-", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise RuntimeFileError(
            f"cannot write the MCP runtime file in {str(folder)!r}: "
            f"{exc.strerror or exc}; set JUPYTER_RUNTIME_DIR to a folder you "
            "can write"
        ) from None
    try:
        try:
            os.fchmod(fd, 0o600)
            _write_all(fd, body.encode("utf-8"))
        finally:
            os.close(fd)
        return _publish(Path(tmp), folder, pid)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _publish(tmp: Path, folder: Path, pid: int) -> Path:
    """Give the finished file its public name: a fresh one, never replaced."""
    for _ in range(16):
        path = folder / f"{PREFIX}{pid}-{secrets.token_hex(6)}.json"
        try:
            # A link never replaces what exists, whatever it is (a symlink,
            # a folder, a FIFO): a taken name is an error, and we draw again.
            os.link(tmp, path)
        except FileExistsError:
            continue
        except OSError as exc:
            if os.path.lexists(path):
                continue
            # A file system without hard links: a rename is atomic too, and
            # the name was free a moment ago (it is unguessable).
            try:
                os.rename(tmp, path)
            except OSError:
                raise RuntimeFileError(
                    f"cannot write the MCP runtime file in {str(folder)!r}: "
                    f"{exc.strerror or exc}"
                ) from None
        return path
    raise RuntimeFileError(
        f"cannot find a free name for the MCP runtime file in {str(folder)!r}"
    )


def remove_entry(path: Path) -> None:
    """Remove a runtime file; a missing one is fine."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _open_trusted(path: Path) -> tuple[bytes, float] | str:
    """The file's bytes and mtime, or why it is not trusted."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except OSError as exc:
        return f"cannot be opened ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "is not a regular file"
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            return f"belongs to another user (uid {info.st_uid})"
        mode = stat.S_IMODE(info.st_mode)
        if hasattr(os, "geteuid") and mode != 0o600:
            return f"has mode {mode:04o}, not 0600"
        if info.st_size > _MAX_BYTES:
            return f"is too large ({info.st_size} bytes)"
        data = os.read(fd, _MAX_BYTES + 1)
        return data, info.st_mtime
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    finally:
        os.close(fd)


def _read(path: Path) -> RuntimeEntry | str:
    opened = _open_trusted(path)
    if isinstance(opened, str):
        return opened
    raw, mtime = opened
    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except ValueError:
        return "is not JSON"
    if not isinstance(data, Mapping):
        return "is not a JSON object"
    url, token, pid, name = (data.get(k) for k in ("url", "token", "pid", "name"))
    if not (isinstance(url, str) and isinstance(token, str) and type(pid) is int):
        return "lacks url, token or pid"
    return RuntimeEntry(
        path=path,
        url=url,
        token=token,
        pid=pid,
        name=name if isinstance(name, str) else None,
        mtime=mtime,
    )


def scan(folder: Path | None = None) -> tuple[list[RuntimeEntry], dict[str, str]]:
    """Every live server's entry (newest first), and the files skipped.

    The second value maps each skipped file's name to why it was not
    trusted; files of servers that are gone are neither listed nor skipped.
    """
    folder = runtime_dir() if folder is None else folder
    entries: list[RuntimeEntry] = []
    skipped: dict[str, str] = {}
    try:
        paths = sorted(folder.glob(f"{PREFIX}*.json"))
    except OSError:
        return entries, skipped
    for path in paths:
        entry = _read(path)
        if isinstance(entry, str):
            skipped[path.name] = entry
        elif _alive(entry.pid):
            entries.append(entry)
    entries.sort(key=lambda e: e.mtime, reverse=True)
    return entries, skipped


def list_entries(folder: Path | None = None) -> list[RuntimeEntry]:
    """Every live server's entry, newest first; untrusted files are skipped."""
    return scan(folder)[0]


def find_entry(
    name: str | None = None, folder: Path | None = None
) -> RuntimeEntry | None:
    """The newest live server, or the newest one named ``name``.

    A name matches the server's name or, for a kernel, its kernel id (the
    connection file's ``kernel-<id>.json`` stem works as well).
    """
    return pick(list_entries(folder), name)


def pick(entries: list[RuntimeEntry], name: str | None) -> RuntimeEntry | None:
    """The first of ``entries`` (newest first) that ``name`` names."""
    for entry in entries:
        if name is None:
            return entry
        if entry.name is not None and name in (
            entry.name,
            f"kernel-{entry.name}",
            f"kernel-{entry.name}.json",
        ):
            return entry
    return None
