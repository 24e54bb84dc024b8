"""Published MCP programs in TypeScript, installed from ``tests/mcp/node``.

The MCP Inspector's CLI is a client on the TypeScript SDK, a second
implementation of the protocol beside the Python SDK's ``Client``; the
reference "everything" server sends every kind of content a tool result
may hold. Both come pinned by ``package-lock.json``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from tests.npmpeers import ensure_installed

NODE_DIR = Path(__file__).resolve().parent / "node"
_BIN = NODE_DIR / "node_modules" / ".bin"


@dataclass(frozen=True)
class Finished:
    """A finished Inspector CLI run."""

    code: int
    stdout: str
    stderr: str


def installed() -> Path:
    """The ``.bin`` folder, after ``npm ci`` (tests/npmpeers.py says when)."""
    ensure_installed(
        NODE_DIR,
        [_BIN / "mcp-inspector", _BIN / "mcp-server-everything"],
        "the TypeScript MCP peers",
    )
    return _BIN


async def inspector(*args: str, env: dict[str, str] | None = None) -> Finished:
    """Run the Inspector's CLI client without blocking the loop.

    ``args`` start with the target (a URL or a command line), then options
    such as ``--method tools/list``, as for ``mcp-inspector --cli``.

    The server under test may live on this very loop, so the CLI runs as
    an asyncio subprocess while the loop goes on serving.
    """
    proc = await asyncio.create_subprocess_exec(
        str(installed() / "mcp-inspector"),
        "--cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 90)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return Finished(proc.returncode, out.decode(), err.decode())
