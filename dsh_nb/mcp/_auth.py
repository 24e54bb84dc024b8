"""A bearer-token gate in front of the MCP app (pure ASGI, SSE untouched)."""

from __future__ import annotations

import asyncio
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["EXCHANGE_ENDED", "BearerGate", "new_token"]

EXCHANGE_ENDED = "dsh_nb.exchange_ended"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


_BODY = b'{"error":"invalid_token","error_description":"a bearer token is required"}'


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


class BearerGate:
    """Answer 401 to any HTTP request without ``Authorization: Bearer <token>``.

    The comparison is constant-time (``hmac.compare_digest``), so the time a
    wrong guess takes says nothing about how much of it was right.
    """

    def __init__(self, app: App, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        given = b""
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                given = value
                break
        if hmac.compare_digest(given, self._expected):
            # Set when this HTTP exchange ends: a handler whose exchange ended
            # before it answered has lost its client (see _adapter).
            ended = asyncio.Event()
            scope[EXCHANGE_ENDED] = ended
            try:
                await self._app(scope, receive, send)
            finally:
                ended.set()
            return
        body = _BODY
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer error="invalid_token"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
