"""``dsh_nb.serve_mcp`` and ``dsh_nb.connect_mcp``: MCP with the kernel's defaults.

:mod:`dsh_nb.mcp` always takes the registry it serves or fills; these two
fill in the notebook's own when none is given, as the names exported from
``dsh_nb`` always have. Importing this module stays light: the kernel's
glue (and IPython) load when a call needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dsh_nb.mcp.client import McpConnection
    from dsh_nb.mcp.server import McpServer
    from dsh_nb.tools.registry import ToolRegistry
    from dsh_nb.tools.runner import CallRunner

__all__ = ["connect_mcp", "serve_mcp"]


def serve_mcp(
    *,
    registry: ToolRegistry | None = None,
    runner: CallRunner | None = None,
    **options: Any,
) -> McpServer:
    """``dsh_nb.serve_mcp``: serve a registry over MCP, the kernel's by default.

    With no ``registry`` (or ``runner``), it is the kernel's server: every
    served call is a live card in a panel under this cell, under the
    kernel's policies and approvals. Otherwise
    :func:`dsh_nb.mcp.server.serve_mcp` serves what it is given.
    """
    if registry is None and runner is None:
        from dsh_nb.notebook.mcpglue import serve

        return serve(**options)
    from dsh_nb.mcp.server import serve_mcp as serve_given

    return serve_given(registry=registry, runner=runner, **options)


async def connect_mcp(
    name: str, *, registry: ToolRegistry | None = None, **options: Any
) -> McpConnection:
    """``dsh_nb.connect_mcp``: the server's tools join the kernel's registry
    unless ``registry`` says otherwise; see :func:`dsh_nb.mcp.client.connect_mcp`.
    """
    from dsh_nb.mcp.client import connect_mcp as connect_given

    if registry is None:
        from dsh_nb.notebook.current import current_state

        registry = current_state().registry
    return await connect_given(name, registry=registry, **options)
