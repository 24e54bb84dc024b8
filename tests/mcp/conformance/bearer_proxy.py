"""A loopback proxy that adds a bearer token: the conformance suite sends none.

``python bearer_proxy.py UPSTREAM_URL TOKEN_FILE [PORT]`` listens on a
loopback port (a free one by default), prints ``proxy at http://127.0.0.1:PORT/mcp``, and forwards
every request to ``UPSTREAM_URL`` with ``Authorization: Bearer <token>``
added. Everything else passes as sent, the ``Host`` and ``Origin``
headers included (the DNS-rebinding scenario checks that the server
refuses a foreign one), and responses stream back as they come (SSE).
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "upgrade"}


def app(upstream: str, token: str) -> Starlette:
    base = urlsplit(upstream)
    origin = f"{base.scheme}://{base.netloc}"
    client = httpx.AsyncClient(timeout=None)

    async def forward(request: Request) -> StreamingResponse:
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _HOP]
        headers = [(k, v) for k, v in headers if k.lower() != "authorization"]
        headers.append(("authorization", f"Bearer {token}"))
        url = origin + request.url.path
        if request.url.query:
            url += "?" + request.url.query
        outgoing = client.build_request(
            request.method, url, headers=headers, content=await request.body()
        )
        response = await client.send(outgoing, stream=True)
        back = {k: v for k, v in response.headers.items() if k.lower() not in _HOP}
        return StreamingResponse(
            response.aiter_raw(),
            status_code=response.status_code,
            headers=back,
            background=BackgroundTask(response.aclose),
        )

    methods = ["GET", "POST", "DELETE", "OPTIONS"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)])


async def main(upstream: str, token_file: str, port: int = 0) -> None:
    token = Path(token_file).read_text().strip()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app(upstream, token), log_level="warning")
    server = uvicorn.Server(config)
    print(f"proxy at http://127.0.0.1:{port}/mcp", flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(
        main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    )
