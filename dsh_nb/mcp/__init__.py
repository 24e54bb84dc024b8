"""MCP both ways: serve a registry to agents, bring servers' tools in.

No Jupyter imports, and the SDK (``mcp``, ``uvicorn``; the ``[mcp]``
extra) is imported only when a server starts or a connection opens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_nb.mcp.client import McpConnection, connect_mcp
    from dsh_nb.mcp.server import McpServer, serve_mcp

__all__ = ["McpConnection", "McpServer", "connect_mcp", "serve_mcp"]

_WHERE = {
    "McpConnection": "dsh_nb.mcp.client",
    "connect_mcp": "dsh_nb.mcp.client",
    "McpServer": "dsh_nb.mcp.server",
    "serve_mcp": "dsh_nb.mcp.server",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'dsh_nb.mcp' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
