"""A tool definition that also carries an MCP output schema."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dsh_nb.tools.definition import ToolDefinition

__all__ = ["McpToolDefinition"]


@dataclass(frozen=True, slots=True, kw_only=True)
class McpToolDefinition(ToolDefinition):
    """A ``ToolDefinition`` from an MCP server, with the names it came under.

    ``output_schema`` is the server's declared output schema (``serve_mcp``
    re-declares it, so a tool served on keeps its structured content);
    ``remote_name`` is the tool's name on that server.
    """

    output_schema: Mapping[str, Any] | None = None
    remote_name: str = ""
    connection: str = ""
