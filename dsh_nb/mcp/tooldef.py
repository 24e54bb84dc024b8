"""A tool definition that remembers the MCP server it came from."""

from __future__ import annotations

from dataclasses import dataclass

from dsh_nb.tools.definition import ToolDefinition

__all__ = ["McpToolDefinition"]


@dataclass(frozen=True, slots=True, kw_only=True)
class McpToolDefinition(ToolDefinition):
    """A ``ToolDefinition`` from an MCP server, with the names it came under.

    Its ``output_schema`` is the server's declared output schema
    (``serve_mcp`` re-declares it, so a tool served on keeps its structured
    content); ``remote_name`` is the tool's name on that server.
    """

    remote_name: str = ""
    connection: str = ""
