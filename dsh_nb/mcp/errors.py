"""Errors and small helpers of MCP connections."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from dsh_nb.tools.errors import HarnessError

if TYPE_CHECKING:
    from mcp import types

__all__ = [
    "McpConnectionError",
    "McpToolError",
    "describe",
    "fingerprint",
    "is_connection_error",
    "not_json_rpc",
    "quiet",
]


class McpConnectionError(HarnessError):
    """The server is unreachable, crashed, or the connection is closed."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "MCP_CONNECTION")


class McpToolError(HarnessError):
    """The server answered the call with ``isError``."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "MCP_TOOL_ERROR")


def quiet(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()


def fingerprint(tool: types.Tool) -> tuple[Any, ...]:
    return (
        tool.description,
        repr(tool.input_schema),
        repr(tool.output_schema),
    )


def describe(exc: BaseException) -> str:
    # Exception groups (anyio's task groups), duck-typed for Python 3.10.
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    if isinstance(inner, tuple) and inner:
        return "; ".join(describe(e) for e in inner)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def not_json_rpc(exc: BaseException) -> str:
    """Why a line from a server was refused: what it said, and the parse error.

    The SDK hands such a line to the message handler as its (pydantic)
    validation error; its first error holds the line itself.
    """
    try:
        first = exc.errors(include_url=False)[0]  # type: ignore[attr-defined]
        said, why = repr(str(first.get("input", ""))[:120]), str(first["msg"])
    except Exception:  # noqa: BLE001 - any other error: its own description
        return f"the MCP server sent a message that is not JSON-RPC: {describe(exc)}"
    return f"the MCP server wrote a line that is not JSON-RPC: {said} ({why})"


def is_connection_error(exc: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, MCPError):
        return "closed" in str(exc).lower() or "connection" in str(exc).lower()
    return isinstance(exc, (OSError, EOFError))
