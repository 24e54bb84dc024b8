"""Calls held for an input round are capped per client and in all.

Issue 34 §2.11: one client held 1,500 asking calls in seconds, each kept
ten minutes (+59 MiB). Past 16 held calls of one client, or 256 of all
clients, a further ask is denied at once instead of held; answering a held
call makes room again. Real ``serve --http`` processes, raw httpx 2026-07-28
requests.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from modernkit import call_tool
from servekit import HERE, _read_until_ready, env, http_server

from dsh_nb.mcp.rounds import MAX_HELD_PER_CLIENT

MODULE = '''
from dsh_nb import Ask, ToolRegistry, tool

registry = ToolRegistry()


@tool
def ask_me(n: int = 0) -> str:
    """Asks before it runs."""
    return f"ran {n}"


registry.register(ask_me)
registry.on_pre_execute(lambda execution, next_: Ask("held"))
'''
ELICIT = {"elicitation": {}}
DENIED = 'Error: tool "ask_me" requires approval, but no approval channel is available'


@pytest.fixture
def module(tmp_path: Path) -> Path:
    path = tmp_path / "asker.py"
    path.write_text(MODULE)
    return path


def held(answer: dict[str, Any]) -> str | None:
    """The round's state if the call is held, else None."""
    state = answer["result"].get("requestState")
    return state if isinstance(state, str) else None


async def _ask(
    http: httpx2.AsyncClient, url: str, token: str, who: str, n: int
) -> dict[str, Any]:
    return await call_tool(
        http, url, token, who, "ask_me", {"n": n}, capabilities=ELICIT
    )


async def test_one_client_holds_at_most_its_share(runtime: Path, module: Path) -> None:
    with http_server(runtime, target=module) as server:
        token = server.token()
        async with httpx2.AsyncClient(timeout=30) as http:
            answers = [
                await _ask(http, server.url, token, "greedy", n)
                for n in range(MAX_HELD_PER_CLIENT + 4)
            ]
            other = await _ask(http, server.url, token, "patient", 99)
            # Answering one held call makes room for one more.
            state = held(answers[0])
            assert state is not None
            done = await call_tool(
                http,
                server.url,
                token,
                "greedy",
                "ask_me",
                {"n": 0},
                capabilities=ELICIT,
                extra={
                    "requestState": state,
                    "inputResponses": {"approval": {"action": "accept"}},
                },
            )
            again = await _ask(http, server.url, token, "greedy", 100)
    states = [held(a) for a in answers]
    assert all(states[:MAX_HELD_PER_CLIENT])
    for late in answers[MAX_HELD_PER_CLIENT:]:
        assert late["result"]["isError"] is True
        assert late["result"]["content"][0]["text"] == DENIED
    assert held(other) is not None
    assert done["result"]["content"][0]["text"] == "ran 0"
    assert held(again) is not None


@contextlib.contextmanager
def capped_server(runtime: Path, module: Path, cap: int) -> Iterator[Any]:
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "capped_serve.py"), str(module), "--http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(runtime, DSH_MAX_HELD=str(cap)),
        cwd=str(HERE),
    )
    try:
        printed = _read_until_ready(proc, 60)
        yield printed
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


async def test_all_clients_together_hold_at_most_the_overall_cap(
    runtime: Path, module: Path
) -> None:
    with capped_server(runtime, module, 5) as printed:
        url = re.search(r"at (http://\S+/mcp)", printed)
        assert url is not None
        entry = next(runtime.glob("dsh-mcp-*.json"))
        token = json.loads(entry.read_text())["token"]
        async with httpx2.AsyncClient(timeout=30) as http:
            answers = [
                await _ask(http, url.group(1), token, f"client-{n}", n)
                for n in range(8)
            ]
    assert [held(a) is not None for a in answers] == [True] * 5 + [False] * 3
    assert {a["result"]["content"][0]["text"] for a in answers[5:]} == {DENIED}
