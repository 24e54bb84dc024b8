"""MCP both ways: serve a registry to agents, bring servers' tools in.

No Jupyter imports, and the SDK (``mcp``, ``uvicorn``; the ``[mcp]``
extra) is imported only when a server starts or a connection opens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.mcp.client import McpConnection, connect_mcp
    from dsh_nb.mcp.server import McpServer, serve_mcp

__all__ = ["McpConnection", "McpServer", "connect_mcp", "serve_mcp"]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "McpConnection": "dsh_nb.mcp.client",
        "connect_mcp": "dsh_nb.mcp.client",
        "McpServer": "dsh_nb.mcp.server",
        "serve_mcp": "dsh_nb.mcp.server",
    },
)
