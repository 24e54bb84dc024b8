"""``serve --http --stateless``: replicas behind a real load balancer (nginx).

Two server processes share a token file and each keep a journal; nginx
balances requests between them round-robin, so one client's initialize,
list and calls land on both. 200 calls in flight from 4 clients must each
be answered exactly once, and the two journals together must hold each
call exactly once, in the process that answered it.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcpkit import client as http_client
from nginxkit import nginx, nginx_binary, port_of
from servekit import error_code, http_server, journal

CLIENTS, CALLS = 4, 50
TOKEN = "replicas-share-this-token-0123456789"


async def test_two_stateless_replicas_behind_nginx_answer_each_call_once(
    runtime: Path, tmp_path: Path
) -> None:
    nginx_binary()
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    logs = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    common = ("--stateless", "--token-file", str(token_file))
    with (
        http_server(runtime, *common, "--journal", str(logs[0])) as a,
        http_server(runtime, *common, "--journal", str(logs[1])) as b,
        nginx([port_of(a.url), port_of(b.url)], tmp_path) as url,
    ):

        async def one(k: int) -> list[object]:
            async with http_client(url, TOKEN, name=f"client-{k}") as c:
                names = {t.name for t in (await c.list_tools()).tools}
                assert "where" in names
                return await asyncio.gather(
                    *(c.call_tool("where", {"client": k, "n": i}) for i in range(CALLS))
                )

        got = await asyncio.wait_for(
            asyncio.gather(*(one(k) for k in range(CLIENTS))), 240
        )
        async with http_client(url, TOKEN) as c:
            bad = await c.call_tool("where", {"client": "x"})
        assert error_code(bad) == "INVALID_ARGS"
        # No replica saw this request's initialize, so none knows the client
        # could be asked: an ask gets the headless outcome (deny).
        asked: list[object] = []

        async def on_elicit(ctx: object, params: object) -> object:
            asked.append(params)
            return types.ElicitResult(action="accept")

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
        async with Client(
            streamable_http_client(url, http_client=http),
            mode="legacy",
            elicitation_callback=on_elicit,
        ) as c:
            denied = await c.call_tool("delete_file", {"path": "p"})
        assert denied.is_error and not asked
        assert "no approval channel is available" in denied.content[0].text
        pids = {a.proc.pid: 0, b.proc.pid: 1}

    answered: Counter[tuple[int, int]] = Counter()
    by_process: dict[tuple[int, int], int] = {}
    for k, results in enumerate(got):
        for i, result in enumerate(results):
            assert not result.is_error, result
            client, n, pid = result.content[0].text.split(":")
            assert (int(client), int(n)) == (k, i)
            answered[(k, i)] += 1
            by_process[(k, i)] = pids[int(pid)]
    expected = {(k, i) for k in range(CLIENTS) for i in range(CALLS)}
    assert set(answered) == expected and set(answered.values()) == {1}
    # Both replicas did part of the work.
    assert set(by_process.values()) == {0, 1}

    journaled: Counter[tuple[int, int]] = Counter()
    for index, log in enumerate(logs):
        lines = journal(log)
        calls = {
            line["data"]["callId"]: line["data"]["arguments"]
            for line in lines
            if line["type"] == "tool/call" and line["data"]["name"] == "where"
        }
        done = [
            line
            for line in lines
            if line["type"] == "tool/result" and line["data"]["callId"] in calls
        ]
        valid = 0
        for line in done:
            args = calls[line["data"]["callId"]]
            if line["data"]["status"] != "done":
                continue
            key = (args["client"], args["n"])
            journaled[key] += 1
            assert by_process[key] == index, (key, index)  # where it ran
            valid += 1
        assert valid > 0
        # Every request was its own session: one agent per call.
        sessions = [line for line in lines if line["type"] == "mcp/session"]
        assert all(s["data"]["transport"] == "streamable-http" for s in sessions)
    assert set(journaled) == expected and set(journaled.values()) == {1}
