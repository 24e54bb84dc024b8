"""MCP both ways: serve_mcp and connect_mcp next to the SDK's own paths.

``python benchmarks/mcp.py [--calls N] [--rounds R]``. Everything runs on
one event loop in this process, over real loopback HTTP (Streamable HTTP,
SSE responses), with the official SDK client (``mcp.Client``, handshake
era):

- **Round trip**: one ``tools/call`` of ``add`` through ``serve_mcp`` (our
  adapter: agent per session, an open turn, the whole pipeline, result
  mapping) against the SDK's own ``MCPServer`` serving the same ``add``
  (its decorator tool, pydantic validation). Target <= 1.3x.
- **Connect overhead**: one call through a ``connect_mcp`` tool
  (``registry.execute`` -> pipeline -> the SDK client) against a direct
  ``ClientSession.call_tool`` to the same ``MCPServer``. Target <= 1.2x.
- **Concurrency**: 200 calls from 4 clients (50 each, all in flight at
  once) through ``serve_mcp``, and the same against ``MCPServer``.
- **The standalone server** (``python -m dsh_nb serve``, real processes;
  see ``_serve.py``): a stdio round trip and the start-up time against the
  SDK's ``MCPServer`` on stdio (targets <= 1.2x and <= 1.5x), and 200
  concurrent calls through nginx to two stateless processes and to one.

``--only kernel`` or ``--only standalone`` runs one half; ``--in-flight N``
sets the calls per client through nginx (the tests make 5).

Rounds interleave the peers (one batch of each in turn), so a noisy
neighbour slows both alike; the ratio of medians is the figure to read.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from _common import machine  # first: it keeps ``import mcp`` off this script

from dsh_nb.mcp.client import connect_mcp
from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import ToolExecutionInput, ToolRegistry, tool


@tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@contextlib.asynccontextmanager
async def sdk_server() -> AsyncIterator[str]:
    """The SDK's MCPServer with the same add, under uvicorn on a free port."""
    import uvicorn
    from mcp.server import MCPServer

    peer = MCPServer("peer")

    @peer.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    app = peer.streamable_http_app()
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")

    class Quiet(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    server = Quiet(config)
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        await task


@contextlib.asynccontextmanager
async def sdk_client(
    url: str, token: str | None = None, *, mode: str = "legacy"
) -> AsyncIterator[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers)
    async with Client(
        streamable_http_client(url, http_client=http),
        mode=mode,  # type: ignore[arg-type]
    ) as client:
        yield client


async def batch(call: Callable[[], Awaitable[Any]], n: int) -> float:
    """Mean ms per call over ``n`` sequential calls."""
    start = time.perf_counter()
    for _ in range(n):
        await call()
    return (time.perf_counter() - start) * 1000.0 / n


async def compare(
    peers: dict[str, Callable[[], Awaitable[Any]]], calls: int, rounds: int
) -> dict[str, list[float]]:
    for call in peers.values():  # warm up: first-call imports and caches
        await batch(call, 5)
    times: dict[str, list[float]] = {name: [] for name in peers}
    for _ in range(rounds):
        for name, call in peers.items():
            times[name].append(await batch(call, calls))
    return times


def table(title: str, times: dict[str, list[float]], base: str, target: float) -> str:
    lines = [
        f"### {title}",
        "",
        "| path | median ms/call | min ms/call | x the SDK |",
        "|---|---:|---:|---:|",
    ]
    ref = statistics.median(times[base])
    for name, values in times.items():
        median = statistics.median(values)
        lines.append(
            f"| {name} | {median:.2f} | {min(values):.2f} | {median / ref:.2f}x |"
        )
    ours = next(n for n in times if n != base)
    ratio = statistics.median(times[ours]) / ref
    verdict = "meets" if ratio <= target else "misses"
    lines += ["", f"{ours}: {ratio:.2f}x the SDK ({verdict} the <= {target}x target)"]
    return "\n".join(lines)


async def main(calls: int, rounds: int) -> None:
    registry = ToolRegistry()
    registry.register(add)
    ours = serve_mcp(registry=registry)
    await ours.started()
    out = [
        "## MCP (`python benchmarks/mcp.py`)",
        "",
        "One process, one loop, real loopback HTTP, the SDK's `mcp.Client` as "
        "the client; rounds interleave the peers. The round trip and the "
        "concurrency rows speak the handshake era (2025-11-25); the connect "
        "rows speak what connect_mcp negotiates with an SDK 2.x server "
        "(2026-07-28), on both sides.",
        "",
        f"- {machine()}",
        "",
    ]
    try:
        async with sdk_server() as peer_url:
            async with sdk_client(ours.url, ours.token) as a, sdk_client(peer_url) as b:
                args = {"a": 1, "b": 2}
                times = await compare(
                    {
                        "SDK MCPServer": lambda: b.call_tool("add", args),
                        "serve_mcp": lambda: a.call_tool("add", args),
                    },
                    calls,
                    rounds,
                )
                out += [
                    table("Round trip: one tools/call", times, "SDK MCPServer", 1.3),
                    "",
                ]
            local = ToolRegistry()
            conn = await connect_mcp("peer", url=peer_url, registry=local)
            try:
                # The same protocol era connect_mcp negotiated (2026-07-28 with
                # an SDK 2.x server), so only the connect_mcp layer differs.
                era = (
                    "legacy"
                    if conn.protocol_version < "2026"
                    else conn.protocol_version
                )
                async with sdk_client(peer_url, mode=era) as direct:
                    call = ToolExecutionInput(
                        call_id="b", name="peer_add", arguments={"a": 1, "b": 2}
                    )
                    times = await compare(
                        {
                            "ClientSession.call_tool": lambda: direct.call_tool(
                                "add", {"a": 1, "b": 2}
                            ),
                            "connect_mcp tool": lambda: local.execute(call),
                        },
                        calls,
                        rounds,
                    )
                out += [
                    table(
                        "Connect overhead: one call to the same MCPServer",
                        times,
                        "ClientSession.call_tool",
                        1.2,
                    ),
                    "",
                ]
            finally:
                await conn.close()
            out += [
                "### Concurrency: 200 calls from 4 clients (50 each, in flight)",
                "",
            ]
            for name, url, token in (
                ("SDK MCPServer", peer_url, None),
                ("serve_mcp", ours.url, ours.token),
            ):
                figures = [await concurrent(url, token) for _ in range(3)]
                median = statistics.median(figures)
                out.append(
                    f"- {name}: "
                    + ", ".join(f"{f:.2f} s" for f in figures)
                    + f" (median {median:.2f} s, {200 / median:.0f} calls/s)"
                )
    finally:
        await ours.stop()
    print("\n".join(out))


async def concurrent(url: str, token: str | None) -> float:
    async def one(k: int) -> list[str]:
        async with sdk_client(url, token) as c:
            results = await asyncio.gather(
                *(c.call_tool("add", {"a": k, "b": i}) for i in range(50))
            )
            return [r.content[0].text for r in results]

    start = time.perf_counter()
    got = await asyncio.gather(*(one(k) for k in range(4)))
    elapsed = time.perf_counter() - start
    expected = [sorted(str(k + i) for i in range(50)) for k in range(4)]
    assert [sorted(g) for g in got] == expected, "a call was lost or duplicated"
    return elapsed


if __name__ == "__main__":
    import logging

    logging.basicConfig(level=logging.WARNING)
    for noisy in ("httpx", "httpx2", "mcp", "uvicorn"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50, help="calls per batch")
    parser.add_argument("--rounds", type=int, default=7, help="batches per peer")
    parser.add_argument("--starts", type=int, default=7, help="start-ups per server")
    parser.add_argument("--batches", type=int, default=3, help="nginx runs per setup")
    parser.add_argument(
        "--in-flight", type=int, default=50, help="calls per client through nginx"
    )
    parser.add_argument("--only", choices=["kernel", "standalone"], default=None)
    options = parser.parse_args()
    import os
    import tempfile

    os.environ.setdefault("JUPYTER_RUNTIME_DIR", tempfile.mkdtemp(prefix="dsh-bench-"))
    if options.only != "standalone":
        asyncio.run(main(options.calls, options.rounds))
    if options.only != "kernel":
        from _serve import section

        rows = asyncio.run(
            section(
                options.calls,
                options.rounds,
                options.starts,
                options.batches,
                options.in_flight,
            )
        )
        print("\n".join([*rows[:2], f"- {machine()}", "", *rows[2:]]))
