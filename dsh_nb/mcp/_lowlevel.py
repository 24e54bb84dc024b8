"""A low-level MCP server that says its tool list changes.

The Streamable HTTP transport asks the server for its initialization options
with no arguments, which would advertise ``listChanged=False``. Both of our
servers (the kernel's and the stdio bridge) do change their tool lists and
notify clients, so they advertise it: one subclass, built lazily because
``mcp`` is an optional, slow import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server import Server

__all__ = ["changing_server"]


def changing_server(name: str, **handlers: Any) -> Server[Any]:
    """Build an ``mcp.server.Server`` that advertises ``tools.listChanged``."""
    from mcp.server import NotificationOptions
    from mcp.server import Server as _Server

    class _ChangingServer(_Server[Any]):
        def create_initialization_options(
            self, notification_options: Any = None, *args: Any, **kwargs: Any
        ) -> Any:
            options = notification_options or NotificationOptions(tools_changed=True)
            return super().create_initialization_options(options, *args, **kwargs)

    return _ChangingServer(name, **handlers)
