"""Helpers for the tests of ``python -m dsh_nb serve``: real processes.

Every server here is its own process, started the way a client or an
operator starts it; the clients are the SDK's ``mcp.Client`` (stdio or
Streamable HTTP) unless a test brings another.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
TOOLS = HERE / "standalone_tools.py"
COLLECTED = HERE / "standalone_collected.py"
NO_JUPYTER = HERE / "no_jupyter.py"
URL_LINE = re.compile(r"^dsh_nb: serving .* at (http://\S+/mcp)", re.M)
TOKEN_LINE = re.compile(r"^dsh_nb: the bearer token is in (\S+) ", re.M)


def env(runtime: Path, **extra: str) -> dict[str, str]:
    """This process's environment, with this checkout first on the path."""
    path = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
    )
    return {
        **os.environ,
        "PYTHONPATH": path,
        "JUPYTER_RUNTIME_DIR": str(runtime),
        **extra,
    }


def serve_argv(*args: str, blocked: bool = False) -> list[str]:
    """``python -m dsh_nb serve ARGS`` (through the import blocker if asked)."""
    if blocked:
        return [sys.executable, str(NO_JUPYTER), "serve", *args]
    return [sys.executable, "-m", "dsh_nb", "serve", *args]


@contextlib.asynccontextmanager
async def stdio(
    argv: Sequence[str],
    runtime: Path,
    *,
    elicit: Any = None,
    name: str = "test-client",
    extra_env: dict[str, str] | None = None,
    mode: str = "legacy",
) -> AsyncIterator[Client]:
    """An SDK client (handshake era unless ``mode``) that launches ``argv``."""
    params = StdioServerParameters(
        command=argv[0],
        args=list(argv[1:]),
        env=env(runtime, **(extra_env or {})),
        cwd=str(HERE),
    )
    async with Client(
        stdio_client(params),
        mode=mode,  # type: ignore[arg-type]
        elicitation_callback=elicit,
        client_info=types.Implementation(name=name, version="1.0"),
    ) as client:
        yield client


@dataclass
class HttpServer:
    """A running ``serve --http`` process and what it printed."""

    proc: subprocess.Popen[str]
    url: str
    token_file: str
    printed: str
    runtime: Path

    @property
    def entry(self) -> Path:
        """The runtime file ``mcp-config`` and the bridge read (its pid's)."""
        for path in sorted(self.runtime.glob("dsh-mcp-*.json")):
            if json.loads(path.read_text()).get("pid") == self.proc.pid:
                return path
        raise AssertionError(f"no runtime file of pid {self.proc.pid}")

    def token(self) -> str:
        return str(json.loads(self.entry.read_text())["token"])


def _read_until_ready(proc: subprocess.Popen[str], timeout: float) -> str:
    """What the server printed up to its token line (read in a thread: a
    buffered pipe and ``select`` do not mix)."""
    assert proc.stdout is not None
    stdout = proc.stdout
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in stdout:
            lines.append(line)
            if TOKEN_LINE.search(line):
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    ready.wait(timeout)
    printed = "".join(lines)
    if TOKEN_LINE.search(printed):
        return printed
    proc.kill()
    err = proc.stderr.read() if proc.stderr is not None else ""
    raise AssertionError(f"the server did not start:\n{printed}\n{err}")


@contextlib.contextmanager
def http_server(
    runtime: Path,
    *args: str,
    target: str | Path = TOOLS,
    timeout: float = 60,
    blocked_log: Path | None = None,
) -> Iterator[HttpServer]:
    """Start ``serve TARGET --http ARGS`` and stop it with SIGTERM after.

    With ``blocked_log``, through the import blocker (see no_jupyter.py).
    """
    extra = {"DSH_BLOCKED_LOG": str(blocked_log)} if blocked_log else {}
    proc = subprocess.Popen(
        serve_argv(str(target), "--http", *args, blocked=blocked_log is not None),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(runtime, **extra),
        cwd=str(HERE),
    )
    try:
        printed = _read_until_ready(proc, timeout)
        url = URL_LINE.search(printed)
        token = TOKEN_LINE.search(printed)
        assert url is not None and token is not None, printed
        yield HttpServer(proc, url.group(1), token.group(1), printed, runtime)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def journal(path: Path) -> list[dict[str, Any]]:
    """The journal's lines, parsed."""
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def error_code(result: types.CallToolResult) -> str | None:
    """The dsh_nb error code a served result carries in ``_meta``."""
    meta = result.meta or {}
    error = meta.get("dsh_nb/error") or {}
    code = error.get("code")
    return code if isinstance(code, str) else None
