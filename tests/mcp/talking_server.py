"""An official-SDK ``MCPServer`` whose tool talks while two calls run at once.

``python talking_server.py`` serves Streamable HTTP on a loopback port it
binds itself and prints ``serving at URL`` (the socket queues connections
from then on). ``URL`` speaks both protocol eras; ``URL`` with
``/handshake`` in front of its path speaks only the handshake era (it
refuses ``server/discover`` as most published servers do today), where a
question is an ``elicitation/create`` request of its own.

``work(tag, pair, ask)`` reports progress and logs, waits until the other
call of its ``pair`` has arrived (so both are in flight: no sleeps), logs
and reports again, asks the client who answers (``ask``), waits until the
other call has asked too, and returns the answer. So everything after the
first meeting is said while both calls are in flight. Every message names its ``tag``, so a test can see whose card each
one reached.

``python talking_server.py --stdio`` serves the same tool on stdio.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import warnings
from typing import Any

import pydantic
import uvicorn
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("talking")
_ARRIVED: dict[tuple[str, str], list[str]] = {}
_MET: dict[tuple[str, str], asyncio.Event] = {}


class Who(pydantic.BaseModel):
    who: str


async def _meet(pair: str, step: str, tag: str) -> None:
    """Wait until both calls of ``pair`` have come to ``step``."""
    arrived = _ARRIVED.setdefault((pair, step), [])
    met = _MET.setdefault((pair, step), asyncio.Event())
    arrived.append(tag)
    if len(arrived) == 2:
        met.set()
    await met.wait()


@server.tool()
async def work(tag: str, pair: str, ask: bool, ctx: Context) -> str:
    """Talk, wait for the other call of the pair, talk again, ask, answer."""
    await ctx.report_progress(1, 3, f"{tag} started")
    await ctx.info(f"{tag} started")
    await _meet(pair, "arrived", tag)
    await ctx.report_progress(2, 3, f"{tag} met the other call")
    await ctx.info(f"{tag} met the other call")
    who = "nobody"
    if ask:
        answer = await ctx.elicit(f"who answers {tag}?", Who)
        who = answer.data.who if answer.action == "accept" else answer.action
    await _meet(pair, "asked", tag)  # neither answers before both have asked
    await ctx.report_progress(3, 3, f"{tag} done")
    return f"{tag} answered by {who}"


def handshake_only(app: Any) -> Any:
    """``app`` at ``/handshake/...`` too, refusing the 2026 era there."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not path.startswith("/handshake/"):
            await app(scope, receive, send)
            return
        scope = dict(scope, path=path.removeprefix("/handshake"))
        chunks: list[bytes] = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if body and json.loads(body).get("method") == "server/discover":
            error = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32601, "message": "handshake era only"},
            }
            await send(
                {
                    "type": "http.response.start",
                    "status": 400,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send(
                {"type": "http.response.body", "body": json.dumps(error).encode()}
            )
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return wrapped


def main() -> None:
    warnings.simplefilter("ignore")  # logging is deprecated in the 2026 era
    if "--stdio" in sys.argv:
        server.run("stdio")
        return
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    app = handshake_only(server.streamable_http_app())
    config = uvicorn.Config(
        app, log_config=None, access_log=False, lifespan="on", log_level="warning"
    )
    print(f"serving at http://127.0.0.1:{port}/mcp", flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
