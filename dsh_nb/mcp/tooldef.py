"""A tool definition that remembers the MCP server it came from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dsh_nb.tools.definition import ToolDefinition, define_tool
from dsh_nb.tools.errors import ToolDefinitionError

if TYPE_CHECKING:
    from mcp import types

__all__ = ["McpToolDefinition", "remote_definition"]


@dataclass(frozen=True, slots=True, kw_only=True)
class McpToolDefinition(ToolDefinition):
    """A ``ToolDefinition`` from an MCP server, with the names it came under.

    Its ``output_schema`` is the server's declared output schema
    (``serve_mcp`` re-declares it, so a tool served on keeps its structured
    content); ``remote_name`` is the tool's name on that server.
    """

    remote_name: str = ""
    connection: str = ""


def remote_definition(
    local: str,
    remote: types.Tool,
    execute: Callable[..., Any],
    *,
    timeout_ms: float | None,
    connection: str,
) -> McpToolDefinition:
    """The registry tool ``local`` that runs the server's tool ``remote``."""
    schema = dict(remote.input_schema or {"type": "object"})
    try:
        base: ToolDefinition = define_tool(
            name=local,
            description=remote.description or "",
            parameters=schema,
            execute=execute,
            timeout_ms=timeout_ms,
        )
    except ToolDefinitionError:
        # A schema our validator cannot compile still reaches the server
        # as given; the server validates its own arguments.
        base = ToolDefinition(
            name=local,
            description=remote.description or "",
            parameters=schema,
            execute=execute,
            timeout_ms=timeout_ms,
        )
    return McpToolDefinition(
        name=base.name,
        description=base.description,
        parameters=base.parameters,
        execute=base.execute,
        timeout_ms=base.timeout_ms,
        output_schema=remote.output_schema,
        remote_name=remote.name,
        connection=connection,
    )
