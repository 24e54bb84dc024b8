"""What a real kernel sends the frontend stays bounded, counted on the wire.

Every iopub display message the kernel sends for a cell is counted (its
JSON content's size), as a frontend receives it:

- a ``%%chat`` reply streaming 300 KB of text and 300 KB of reasoning through
  the openai SDK is sent as bounded pieces (only the unfinished tail is
  re-sent), and the cell keeps 100,000 characters of each with a visible
  "… N more characters";
- the MCP panel's header, re-sent on each new client, stays small with
  150 sessions whose clients have 1 KB names;
- a session left idle ends.

``DSH_TRAFFIC_REPORT=1`` prints the figures.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx2
import pytest
from kernel_harness import KernelHarness

from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import Turn

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
from mcpkit import client

KEEP = 100_000
DISPLAYS = ("display_data", "update_display_data")


def _size(message: Mapping[str, Any]) -> int:
    return len(json.dumps(message["content"]).encode())


def _report(what: str, messages: list[Mapping[str, Any]]) -> None:
    if os.environ.get("DSH_TRAFFIC_REPORT") == "1":
        sizes = [_size(m) for m in messages]
        print(
            f"\n{what}: {len(sizes)} messages, {sum(sizes):,} bytes, "
            f"largest {max(sizes, default=0):,} bytes"
        )


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def kernel(server: ReplayServer) -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(
            "%load_ext dsh_nb\nimport os\n"
            f"os.environ['REPLAY_KEY'] = {server.token!r}\n"
            f"%config DshChat.base_url = {server.openai_url!r}\n"
            "%config DshChat.api_key_env = 'REPLAY_KEY'\n"
            "%config DshChat.model = 'replay-model'",
            timeout=60,
        )
        yield harness


def _reply_text(size: int) -> str:
    block = (
        "A paragraph with **bold**, `code` and a [link](https://example.org).\n\n"
        "```python\nfor i in range(3):\n    print(i)\n```\n\n- one\n- two\n\n"
    )
    return (block * (size // len(block) + 1))[:size]


def test_a_streamed_reply_is_sent_as_bounded_pieces(
    kernel: KernelHarness, server: ReplayServer
) -> None:
    # Three times what the cell keeps: enough to show both the bound and
    # the growth it prevents (sizes below); 1 MB took minutes on 2 cores.
    text = _reply_text(300_000)
    reasoning = ("thinking about it, step by step\n" * 12_000)[:300_000]
    server.add(Turn(text=text, reasoning=reasoning, chunk=1000, chunk_delay=0.001))
    reply = kernel.execute("%%chat --new\ntell me everything", timeout=240).check()
    displays = [m for m in reply.messages if m["msg_type"] in DISPLAYS]
    _report("streamed 600 KB", displays)
    sizes = [_size(m) for m in displays]
    # Before: every update re-sent the whole text (2 MB became 254 MB; the
    # growth is quadratic, so 600 KB would be about 23 MB).
    assert sum(sizes) < 4_000_000, sum(sizes)
    assert max(sizes) < 64_000, max(sizes)

    final: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(displays):
        key = (m["content"].get("transient") or {}).get("display_id", i)
        final[key] = m["content"]["data"]
    plain = [d["text/plain"] for d in final.values()]
    texts = [
        p
        for p, d in zip(plain, final.values(), strict=True)
        if "text/html" in d and "dsh-Reasoning" not in d["text/html"]
    ]
    thoughts = [d for d in final.values() if "dsh-Reasoning" in d.get("text/html", "")]
    # The cell keeps the first 100,000 characters, then says what it left out.
    assert "".join(texts) == text[:KEEP]
    assert f"… {len(text) - KEEP:,} more characters" in plain
    assert f"… {len(reasoning) - KEEP:,} more characters" in plain
    assert (
        len(thoughts) > 1 and "<summary>reasoning</summary>" in thoughts[0]["text/html"]
    )
    # The whole text is still the conversation's.
    out = kernel.run(
        "from dsh_nb.notebook.magics.chat import kernel_chat\n"
        "print(len(kernel_chat().messages[-1]['content']))"
    )
    assert out.stdout.strip() == str(len(text))


_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2)


def _serve(kernel: KernelHarness) -> dict[str, Any]:
    msg_id = kernel.execute_async("%tools serve")
    kernel.collect(msg_id, timeout=60).check()
    runtime = kernel.tmp / "runtime"
    kernel.wait_for(lambda: list(runtime.glob("dsh-mcp-*.json")), timeout=20)
    entry = json.loads(next(runtime.glob("dsh-mcp-*.json")).read_text())
    return {"url": entry["url"], "token": entry["token"], "cell": msg_id}


async def _open_sessions(url: str, token: str, count: int) -> int:
    """Open ``count`` sessions at once (20 handshakes at a time), then close."""
    opened = 0
    all_open, release = asyncio.Event(), asyncio.Event()
    gate = asyncio.Semaphore(20)

    async def one(i: int) -> None:
        nonlocal opened
        name = f"client-{i:04d}-" + "x" * 1000
        await gate.acquire()
        held = True
        try:
            # Entered and left in this task, as anyio's cancel scopes need.
            async with client(url, token, name=name) as c:
                await c.list_tools()
                opened += 1
                gate.release()
                held = False
                if opened == count:
                    all_open.set()
                await release.wait()
        finally:
            if held:
                gate.release()

    tasks = [asyncio.ensure_future(one(i)) for i in range(count)]
    try:
        await asyncio.wait_for(all_open.wait(), 540)
    finally:
        release.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    return opened


def test_the_mcp_panel_header_stays_small_with_150_sessions(
    kernel: KernelHarness,
) -> None:
    served = _serve(kernel)
    done = _POOL.submit(
        lambda: asyncio.run(_open_sessions(served["url"], served["token"], 150))
    )
    kernel.wait_for(done.done, timeout=600, what="150 MCP sessions")
    assert done.result() == 150
    messages = [m for m in kernel.messages(served["cell"]) if m["msg_type"] in DISPLAYS]
    header_id = messages[0]["content"]["transient"]["display_id"]
    header = [
        m for m in messages if m["content"]["transient"]["display_id"] == header_id
    ]
    _report("panel header, 150 sessions", header)
    sizes = [_size(m) for m in header]
    # Before: 877 MB for 1,000 sessions, the largest message 2 MB (the
    # header named every client: about 20 MB and 300 KB for 150).
    assert max(sizes) < 4_000, max(sizes)
    assert sum(sizes) < 750_000, sum(sizes)
    assert "and 145 more" in header[-1]["content"]["data"]["text/plain"]
    kernel.run("%tools serve --stop")


async def _abandon(url: str, token: str) -> list[str]:
    """Open a session over raw HTTP, list the tools, and leave it open."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
    }
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "idler", "version": "1"},
    }
    async with httpx2.AsyncClient(timeout=30) as http:

        async def post(message: dict[str, Any]) -> str:
            reply = await http.post(
                url, json={"jsonrpc": "2.0", **message}, headers=headers
            )
            assert reply.status_code in (200, 202), reply.text
            headers.setdefault(
                "Mcp-Session-Id", reply.headers.get("mcp-session-id", "")
            )
            return reply.text

        await post({"id": 1, "method": "initialize", "params": hello})
        headers["Mcp-Protocol-Version"] = hello["protocolVersion"]
        await post({"method": "notifications/initialized"})
        listed = await post({"id": 2, "method": "tools/list"})
    data = [line[5:] for line in listed.splitlines() if line.startswith("data:")]
    return [t["name"] for t in json.loads(data[-1])["result"]["tools"]]


def test_an_idle_session_ends(kernel: KernelHarness) -> None:
    kernel.run(
        "import dsh_nb.mcp.server as mcp_server\nmcp_server.SESSION_IDLE_S = 3.0"
    )
    served = _serve(kernel)

    agents = (
        "from dsh_nb.notebook import mcpglue, extension\n"
        "print(len(mcpglue.for_state(extension.current_state()).server.agents))"
    )
    # A client that vanishes: it lists the tools, then never sends another
    # request nor ends its session (an SDK client's open GET stream, or its
    # DELETE on exit, would end or hold the session by itself).
    gone = _POOL.submit(lambda: asyncio.run(_abandon(served["url"], served["token"])))
    kernel.wait_for(gone.done, timeout=30, what="the abandoning client")
    assert gone.result() == []  # the kernel has no tools: a real, empty list
    assert kernel.run(agents).stdout.strip() == "1"  # within the 3 s
    ended = kernel.wait_for(
        lambda: kernel.run(agents).stdout.strip() == "0",
        timeout=20,
        raise_on_timeout=False,
    )
    assert ended, "a session left idle for SESSION_IDLE_S did not end"
    kernel.run("%tools serve --stop\nmcp_server.SESSION_IDLE_S = 3600.0")
