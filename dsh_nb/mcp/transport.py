"""The SDK transport for a stdio command or a Streamable HTTP URL."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from typing import IO, Any

__all__ = ["make_transport"]


def make_transport(
    stderr_sink: list[IO[str]],
    command: Sequence[str] | None,
    url: str | None,
    headers: Mapping[str, str] | None,
    env: Mapping[str, str] | None,
    cwd: str | None,
) -> tuple[Any, str]:
    """The transport and the protocol mode to open it with.

    A stdio server's stderr goes to a temporary file appended to
    ``stderr_sink``, so a failure can quote its last lines. stdio speaks
    the handshake era (what published servers speak today); HTTP
    negotiates (``auto``).
    """
    if command is not None:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        stderr = tempfile.TemporaryFile("w+", encoding="utf-8")
        stderr_sink.append(stderr)
        params = StdioServerParameters(
            command=command[0], args=list(command[1:]), env=dict(env or {}), cwd=cwd
        )
        return stdio_client(params, errlog=stderr), "legacy"
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    assert url is not None
    http = httpx2.AsyncClient(
        headers=dict(headers or {}), timeout=httpx2.Timeout(30, read=300)
    )
    return streamable_http_client(url, http_client=http), "auto"
