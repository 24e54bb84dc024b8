"""``serve --http`` sessions end when idle, as the kernel's server's do.

Issue 34 §2.9: ``serve --http`` kept every session (``session_idle_timeout
=None``), about 46 KiB each until the process ended. Now a session idle for
``--session-idle`` seconds (default an hour) ends: its id answers 404, and
the client starts a new session. Real ``serve --http`` processes, raw httpx.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import httpx2
import pytest
from servekit import HERE, TOOLS, env, http_server, serve_argv

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "idle", "version": "1"},
    },
}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


async def _session(http: httpx2.AsyncClient, url: str, headers: dict[str, str]) -> str:
    opened = await http.post(url, json=INIT, headers=headers)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    sent = await http.post(
        url, json=done, headers={**headers, "Mcp-Session-Id": session}
    )
    assert sent.status_code == 202, sent.text
    return session


async def test_an_idle_session_ends_and_a_used_one_stays(runtime: Path) -> None:
    with http_server(runtime, "--session-idle", "1.5") as server:
        headers = {
            "Authorization": f"Bearer {server.token()}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        }
        async with httpx2.AsyncClient(timeout=30) as http:
            idle = await _session(http, server.url, headers)
            busy = await _session(http, server.url, headers)
            for _ in range(6):  # 3 s: busy stays in use, idle does not
                await asyncio.sleep(0.5)
                kept = await http.post(
                    server.url, json=PING, headers={**headers, "Mcp-Session-Id": busy}
                )
                assert kept.status_code == 200, kept.text
            gone = await http.post(
                server.url, json=PING, headers={**headers, "Mcp-Session-Id": idle}
            )
            again = await _session(http, server.url, headers)
    assert gone.status_code == 404
    assert again not in (idle, busy)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--session-idle", "0"], "--session-idle must be a positive number"),
        (["--session-idle", "nan"], "--session-idle must be a positive number"),
        (["--stateless", "--session-idle", "5"], "--stateless keeps none"),
    ],
)
def test_a_bad_idle_time_is_one_line_and_exit_2(
    runtime: Path, args: list[str], said: str
) -> None:
    done = subprocess.run(
        serve_argv(str(TOOLS), "--http", *args),
        capture_output=True,
        text=True,
        env=env(runtime),
        cwd=str(HERE),
        timeout=60,
    )
    assert done.returncode == 2
    assert said in done.stderr


def test_stdio_has_no_sessions_to_time(runtime: Path) -> None:
    done = subprocess.run(
        serve_argv(str(TOOLS), "--stdio", "--session-idle", "5"),
        capture_output=True,
        text=True,
        env=env(runtime),
        cwd=str(HERE),
        timeout=60,
    )
    assert done.returncode == 2
    assert "--session-idle needs --http" in done.stderr
