"""The HTTP server's connections send without Nagle's delay.

The listening socket is bound by ``dsh_nb.mcp.server`` and handed to
uvicorn, which serves it with asyncio's ``create_server(sock=...)``, as
here. asyncio turns Nagle's algorithm off (``TCP_NODELAY``) only on
sockets whose protocol is TCP, and an accepted socket takes its protocol
from the listening one: bound as protocol 0, every request after the first
on a kept-alive connection waited about 40 ms for the client's delayed ACK
before the response body left.
"""

from __future__ import annotations

import asyncio
import socket

from dsh_nb.mcp.server import _bind


async def test_a_connection_the_server_accepts_has_nagle_off() -> None:
    loop = asyncio.get_running_loop()
    accepted: asyncio.Future[int] = loop.create_future()

    class Accepting(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            sock = transport.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    listening = _bind("127.0.0.1", 0)
    server = await loop.create_server(Accepting, sock=listening)
    try:
        _, writer = await asyncio.open_connection(*listening.getsockname()[:2])
        try:
            assert await asyncio.wait_for(accepted, 30) != 0
        finally:
            writer.close()
    finally:
        server.close()
        await server.wait_closed()
