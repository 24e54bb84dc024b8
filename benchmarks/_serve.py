"""The standalone-server half of ``benchmarks/mcp.py``: real processes.

- **stdio round trip**: one ``tools/call`` of ``add`` through ``python -m
  dsh_nb serve`` against the same function served by the SDK's own
  ``MCPServer`` (``peer.run("stdio")``), each launched by the SDK client's
  ``stdio_client``; rounds interleave. Target <= 1.2x.
- **start-up**: from spawning the process to the answer of the first
  ``tools/list`` (the handshake included), alternating the two servers.
  Target <= 1.5x.
- **behind nginx**: 200 concurrent calls from 4 clients through nginx to
  two ``--stateless`` processes, and to one: both throughputs.

Both servers' scripts are written to a temporary folder, so neither finds
this folder's ``mcp.py`` when it imports the SDK, and the SDK's server does
not import dsh_nb.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

OURS = '''\
from dsh_nb import tool


@tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)
'''
PEER = '''\
from mcp.server import MCPServer

peer = MCPServer("peer")


@peer.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


peer.run("stdio")
'''
NGINX = """\
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
{user}
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    upstream dsh_nb {{
{servers}
        keepalive 64;
    }}
    server {{
        listen 127.0.0.1:{port};
        location /mcp {{
            proxy_pass http://dsh_nb;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_read_timeout 3600s;
        }}
    }}
}}
"""
TOKEN = "benchmark-token-shared-by-replicas"
URL = re.compile(r"at (http://\S+/mcp)")


def scripts(folder: Path) -> tuple[list[str], list[str]]:
    """The two servers' command lines (ours, the SDK's)."""
    (folder / "bench_tools.py").write_text(OURS)
    (folder / "peer_server.py").write_text(PEER)
    ours = [sys.executable, "-m", "dsh_nb", "serve", str(folder / "bench_tools.py")]
    return [*ours, "--stdio"], [sys.executable, str(folder / "peer_server.py")]


def _environment() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


@contextlib.asynccontextmanager
async def stdio_client(argv: list[str], folder: Path) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client as sdk_stdio

    params = StdioServerParameters(
        command=argv[0], args=argv[1:], env=_environment(), cwd=str(folder)
    )
    async with Client(sdk_stdio(params), mode="legacy") as client:
        yield client


async def round_trips(
    peers: dict[str, list[str]], folder: Path, calls: int, rounds: int
) -> dict[str, list[float]]:
    """Mean ms per sequential call, per round, per peer (interleaved)."""
    times: dict[str, list[float]] = {name: [] for name in peers}
    async with contextlib.AsyncExitStack() as stack:
        clients = {
            name: await stack.enter_async_context(stdio_client(argv, folder))
            for name, argv in peers.items()
        }
        for client in clients.values():  # warm up
            for _ in range(5):
                await client.call_tool("add", {"a": 1, "b": 2})
        for _ in range(rounds):
            for name, client in clients.items():
                start = time.perf_counter()
                for _ in range(calls):
                    result = await client.call_tool("add", {"a": 1, "b": 2})
                    assert result.content[0].text == "3", result
                times[name].append((time.perf_counter() - start) * 1000 / calls)
    return times


async def start_ups(
    peers: dict[str, list[str]], folder: Path, rounds: int
) -> dict[str, list[float]]:
    """Seconds from spawning to the first tools/list answer (alternating)."""
    times: dict[str, list[float]] = {name: [] for name in peers}
    for _ in range(rounds):
        for name, argv in peers.items():
            start = time.perf_counter()
            async with stdio_client(argv, folder) as client:
                tools = (await client.list_tools()).tools
                times[name].append(time.perf_counter() - start)
            assert [t.name for t in tools] == ["add"]
    return times


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def replicas(folder: Path, count: int) -> Iterator[list[int]]:
    """``count`` stateless HTTP processes sharing a token; yield their ports."""
    token = folder / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    procs = []
    try:
        ports = []
        for _ in range(count):
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dsh_nb",
                    "serve",
                    str(folder / "bench_tools.py"),
                    "--http",
                    "--stateless",
                    "--token-file",
                    str(token),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env={**_environment(), "JUPYTER_RUNTIME_DIR": str(folder / "rt")},
                cwd=str(folder),
            )
            procs.append(proc)
            assert proc.stdout is not None
            line = proc.stdout.readline()
            found = URL.search(line)
            assert found is not None, line
            ports.append(int(found.group(1).rsplit(":", 1)[1].split("/")[0]))
            # Keep reading what it prints, so its pipe never fills.
            threading.Thread(target=proc.stdout.read, daemon=True).start()
        yield ports
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=15)


@contextlib.contextmanager
def nginx(ports: list[int], folder: Path) -> Iterator[str]:
    import pwd
    import shutil

    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    prefix = Path(tempfile.mkdtemp(dir=folder, prefix="nginx-"))
    port = _free_port()
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""
    servers = "\n".join(f"        server 127.0.0.1:{p};" for p in ports)
    conf = prefix / "nginx.conf"
    conf.write_text(NGINX.format(prefix=prefix, port=port, servers=servers, user=user))
    proc = subprocess.Popen(
        [binary, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        end = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError(f"nginx did not start ({prefix})") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=15)


async def through_nginx(url: str, in_flight: int = 50) -> float:
    """Seconds for 4 clients' calls, ``in_flight`` each at once (200 in all
    by default; the tests' smoke run makes fewer)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def one(k: int) -> list[str]:
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(60)
        )
        async with Client(
            streamable_http_client(url, http_client=http), mode="legacy"
        ) as c:
            results = await asyncio.gather(
                *(c.call_tool("add", {"a": k, "b": i}) for i in range(in_flight))
            )
            return [r.content[0].text for r in results]

    start = time.perf_counter()
    got = await asyncio.gather(*(one(k) for k in range(4)))
    elapsed = time.perf_counter() - start
    expected = [sorted(str(k + i) for i in range(in_flight)) for k in range(4)]
    assert [sorted(g) for g in got] == expected, "a call was lost or duplicated"
    return elapsed


def ratio_table(
    title: str, times: dict[str, list[float]], unit: str, target: float
) -> list[str]:
    base, ours = "SDK MCPServer", "dsh_nb serve"
    ref = statistics.median(times[base])
    lines = [
        f"### {title}",
        "",
        f"| server | median {unit} | min {unit} | x the SDK |",
        "|---|---:|---:|---:|",
    ]
    for name in (base, ours):
        median = statistics.median(times[name])
        lines.append(
            f"| {name} | {median:.2f} | {min(times[name]):.2f} | {median / ref:.2f}x |"
        )
    ratio = statistics.median(times[ours]) / ref
    verdict = "meets" if ratio <= target else "misses"
    return [
        *lines,
        "",
        f"{ours}: {ratio:.2f}x the SDK ({verdict} the <= {target}x target)",
        "",
    ]


async def section(
    calls: int, rounds: int, starts: int, batches: int, in_flight: int = 50
) -> list[str]:
    """The standalone rows of RESULTS.md."""
    out = ["## The standalone server (`python -m dsh_nb serve`)", ""]
    with tempfile.TemporaryDirectory(prefix="dsh-serve-bench-") as tmp:
        folder = Path(tmp)
        ours, peer = scripts(folder)
        peers = {"SDK MCPServer": peer, "dsh_nb serve": ours}
        times = await round_trips(peers, folder, calls, rounds)
        out += ratio_table("stdio round trip: one tools/call", times, "ms/call", 1.2)
        times = await start_ups(peers, folder, starts)
        out += ratio_table(
            "Process start to the first tools/list answer", times, "s", 1.5
        )
        total = 4 * in_flight
        out += [
            f"### {total} concurrent calls (4 clients x {in_flight} in flight) "
            "through nginx",
            "",
        ]
        figures: dict[int, list[float]] = {1: [], 2: []}
        for _ in range(batches):
            for count in (1, 2):
                with replicas(folder, count) as ports, nginx(ports, folder) as url:
                    await through_nginx(url, in_flight)  # warm up both processes
                    figures[count].append(await through_nginx(url, in_flight))
        for count, values in figures.items():
            median = statistics.median(values)
            noun = "process" if count == 1 else "stateless processes"
            out.append(
                f"- {count} {noun}: "
                + ", ".join(f"{v:.2f} s" for v in values)
                + f" (median {median:.2f} s, {total / median:.0f} calls/s)"
            )
    return out
