"""The SDK transport for a stdio command or a Streamable HTTP URL."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping, Sequence
from typing import IO, Any, Final

from dsh_nb.tools.audit.secrets import secret_settings

__all__ = ["make_transport"]

_PARSE_FAILURE: Final = "Failed to parse JSONRPC message from server"


def _not_parse_failure(record: logging.LogRecord) -> bool:
    """Drop the SDK's traceback for a line that is not JSON-RPC.

    The connection turns that line into its own error, which names the
    line and ends with the server's stderr; the SDK would also print a
    traceback into whatever cell is running.
    """
    return record.msg != _PARSE_FAILURE


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
    negotiates (``auto``). Secret-named ``headers`` and ``env`` values (an
    ``Authorization`` header, a server's token) are registered as secrets,
    redacted from every text shown or stored from now on.
    """
    secret_settings(headers)
    secret_settings(env)
    if command is not None:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        sdk_log = logging.getLogger("mcp.client.stdio")
        if _not_parse_failure not in sdk_log.filters:
            sdk_log.addFilter(_not_parse_failure)
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
