"""Ready-to-paste settings for MCP clients: they launch the stdio bridge.

None of them carries the token. The bridge reads it from the runtime file
when the client starts it, so a settings file that is synced, shared or
committed gives nothing away, and it keeps working across kernel restarts.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["bridge_command", "client_config"]


def bridge_command(name: str | None = None) -> list[str]:
    """The command line that starts the bridge to this (or the newest) server."""
    target = ["--kernel", name] if name else ["--latest"]
    return [sys.executable, "-m", "dsh_nb", "mcp-bridge", *target]


def client_config(name: str | None = None, *, server: str = "dsh_nb") -> dict[str, Any]:
    """Settings for Claude Code, Cursor, VS Code and the MCP Inspector.

    Returns
    -------
    dict
        ``{"claude_code": ..., "cursor": ..., "vscode": ..., "inspector": ...,
        "command": [...]}``: each value is the JSON (or command line) that
        client's documentation asks for.
    """
    command, *args = bridge_command(name)
    stdio = {"command": command, "args": args}
    return {
        "command": [command, *args],
        # `.mcp.json` in a project, or `claude mcp add-json NAME '<json>'`.
        "claude_code": {"mcpServers": {server: {"type": "stdio", **stdio}}},
        # `~/.cursor/mcp.json` or `.cursor/mcp.json`.
        "cursor": {"mcpServers": {server: stdio}},
        # `.vscode/mcp.json`.
        "vscode": {"servers": {server: {"type": "stdio", **stdio}}},
        # `npx @modelcontextprotocol/inspector <command> <args...>`.
        "inspector": ["npx", "@modelcontextprotocol/inspector", command, *args],
    }
