"""``--journal FILE``: a served registry's session logs, appended as JSONL.

Each line is one event as ``%tool_log --save`` writes it (``{"type",
"data"}``), plus ``"agent"``, the id of the client session it belongs to,
so that the events of clients served at the same time can be told apart.
Each client session starts with one ``mcp/session`` line saying who it is::

    {"type": "mcp/session", "agent": "3f9c2a1b-1",
     "data": {"agent": "3f9c2a1b-1", "client": "claude-code",
              "clientVersion": "2.1.0", "protocol": "2025-11-25",
              "transport": "stdio", "server": "tools", "pid": 4242}}

then its events: ``turn/start``, ``tool/call``, ``approval/asked``,
``approval/decided``, ``tool/result``, ``tool/cancelled``, ``turn/end``,
exactly the events the notebook journals (the core writes them).
``SessionLog.read_jsonl`` reads the file (the extra key is ignored).

Every event is one ``write`` of one whole line on a file opened for
appending, so it is on disk when the next event happens, a crash loses
nothing already written, and two processes appending to one file never
interleave inside a line. The file is private
(:mod:`dsh_nb.tools.audit.privatefile`): created readable by its owner
only, as it holds every argument and result (every registered secret
redacted); a link, a FIFO, another user's file or one others may read is
refused.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dsh_nb.tools.audit.privatefile import open_private
from dsh_nb.tools.audit.secrets import redact
from dsh_nb.tools.jsonvalue import to_plain
from dsh_nb.tools.surrogates import escape_tree

if TYPE_CHECKING:
    from dsh_nb.tools.audit.session import Agent

__all__ = ["SESSION", "JournalFile"]

SESSION = "mcp/session"


class JournalFile:
    """Append every event of the attached agents' logs to one file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        # A private file, as the token file is: no link followed, 0600.
        self._fd: int | None = open_private(self.path, append=True)
        self._lock = threading.Lock()
        self.lines = 0

    def attach(self, agent: Agent, agent_id: str, about: Mapping[str, Any]) -> None:
        """Write ``agent``'s ``mcp/session`` line, then each of its events."""
        data = escape_tree({"agent": agent_id, **about})  # a client's own words
        self._write({"type": SESSION, "data": data}, agent_id)

        def on_event(event: Mapping[str, Any]) -> None:
            self._write(event, agent_id)

        # Not kept: the listener lives and dies with the agent's log (a
        # stateless server makes an agent per request; none may outlive it).
        agent.session.on_append(on_event)

    def _write(self, event: Mapping[str, Any], agent_id: str) -> None:
        # Redacted as %tool_log --save redacts: a key a tool echoes, a token
        # in an argument, must not reach a file that outlives the process.
        line = redact(
            json.dumps(
                {
                    "type": event["type"],
                    "data": to_plain(event["data"]),
                    "agent": agent_id,
                },
                ensure_ascii=False,
            )
        )
        data = (line + "\n").encode("utf-8")
        with self._lock:
            fd = self._fd
            if fd is None:
                return
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            self.lines += 1

    def close(self) -> None:
        """Stop writing (later events are dropped) and close the file."""
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
