"""MCP both ways: serve a registry to agents, bring servers' tools in.

No Jupyter imports, and the SDK (``mcp``, ``uvicorn``; the ``[mcp]``
extra) is imported only when a server starts or a connection opens.
"""

# ruff: noqa: F401 - the type checkers' view of the names below, which
# are exported by the table: ``__all__`` is built from it, not written out.

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.mcp.client import McpConnection, connect_mcp
    from dsh_nb.mcp.server import McpServer, serve_mcp

# The one list of this face: each public name and the module that defines
# it. ``__all__`` is built from it; the imports above are the type
# checkers' view of the same names (tests/unit/test_lazy_faces.py holds
# the two together).
_PUBLIC = {
    "McpConnection": "dsh_nb.mcp.client",
    "McpServer": "dsh_nb.mcp.server",
    "connect_mcp": "dsh_nb.mcp.client",
    "serve_mcp": "dsh_nb.mcp.server",
}

__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_face(__name__, _PUBLIC)
