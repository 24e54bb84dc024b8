"""What a connection's start-up needs: its stage, and an end for a dud server.

``connect_mcp(timeout=T)`` must answer within ``T``, whatever the server
does. The SDK ends a stdio server politely (close its stdin, wait 2 s, then
SIGTERM its process group), which is right for a server that served, but a
server that never finished starting has nothing to finish: its process
group is ended at once. The SDK starts each server as the leader of a new
session and we hand it a private temporary file as stderr, so the leader is
the child of this process whose stderr is that very file (found in
``/proc``, where there is one; elsewhere the SDK's own shutdown ends it).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import IO, Any

__all__ = ["STAGES", "abandon", "end_server_group", "stderr_tail"]

STAGES = {
    "spawn": "the server to start",
    "initialize": "its answer to initialize",
    "tools/list": "its answer to tools/list",
}
"""What a start-up that times out was waiting for, by stage."""


def _leader(stderr: IO[str]) -> int | None:
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    try:
        info = os.fstat(stderr.fileno())
    except (OSError, ValueError):
        return None
    me = str(os.getpid())
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fd2 = os.stat(entry / "fd" / "2")
            stat = (entry / "stat").read_text(encoding="utf-8")
        except OSError:
            continue
        if (fd2.st_dev, fd2.st_ino) != (info.st_dev, info.st_ino):
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == me:
            return int(entry.name)
    return None


def end_server_group(stderr: IO[str] | None) -> int | None:
    """SIGTERM the process group of the server writing to ``stderr``.

    Returns the leader's pid, or None when it was not found (gone, not a
    stdio server, or no ``/proc``).
    """
    if stderr is None or stderr.closed:
        return None
    pid = _leader(stderr)
    if pid is None:
        return None
    with contextlib.suppress(OSError):
        if os.getpgid(pid) == pid:  # a session leader: end its whole group
            os.killpg(pid, signal.SIGTERM)
        else:
            os.kill(pid, signal.SIGTERM)
    return pid


_LINGERING: set[asyncio.Future[Any]] = set()


async def abandon(
    task: asyncio.Future[Any] | None, stderr: IO[str] | None, budget: float
) -> None:
    """End a start-up that failed: the server now, the task within ``budget``.

    Nothing was served, so there is no grace period: the server's process
    group ends at once, and what is left of the connection's task finishes
    in the background (its stderr file is closed when it has).
    """
    end_server_group(stderr)
    if task is not None and not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=budget)
    if task is None or task.done():
        if stderr is not None:
            stderr.close()
        return
    _LINGERING.add(task)

    def after(done: asyncio.Future[Any]) -> None:
        _LINGERING.discard(done)
        if stderr is not None:
            stderr.close()

    task.add_done_callback(after)


def stderr_tail(stderr: IO[str] | None, limit: int) -> str:
    """The last ``limit`` characters a stdio server wrote to its stderr."""
    if stderr is None or stderr.closed:
        return ""
    try:
        stderr.flush()
        size = os.fstat(stderr.fileno()).st_size
        data = os.pread(stderr.fileno(), limit * 4, max(0, size - limit * 4))
    except OSError:
        return ""
    return data.decode("utf-8", "replace")[-limit:].strip()
