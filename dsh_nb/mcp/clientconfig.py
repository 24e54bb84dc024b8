"""Ready-to-paste settings for MCP clients: each launches a stdio command.

For a kernel (or any HTTP server with a runtime file) the command is the
stdio bridge; for a module it is ``python -m dsh_nb serve MODULE --stdio``.
None of them carries a token. The bridge reads it from the runtime file
when the client starts it, so a settings file that is synced, shared or
committed gives nothing away, and it keeps working across kernel restarts.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["bridge_command", "client_config", "serve_command", "serve_config"]


def bridge_command(name: str | None = None) -> list[str]:
    """The command line that starts the bridge to this (or the newest) server."""
    target = ["--kernel", name] if name else ["--latest"]
    return [sys.executable, "-m", "dsh_nb", "mcp-bridge", *target]


def serve_command(target: str, journal: str | None = None) -> list[str]:
    """The command line that serves ``MODULE[:ATTR]`` on stdio."""
    extra = ["--journal", journal] if journal else []
    return [sys.executable, "-m", "dsh_nb", "serve", target, "--stdio", *extra]


def serve_config(
    target: str, *, journal: str | None = None, server: str = "dsh_nb"
) -> dict[str, Any]:
    """:func:`client_config`'s settings for a module served on stdio."""
    return _settings(serve_command(target, journal), server)


def client_config(name: str | None = None, *, server: str = "dsh_nb") -> dict[str, Any]:
    """Settings for Claude Code, Cursor, VS Code and the MCP Inspector.

    Returns
    -------
    dict
        ``{"claude_code": ..., "cursor": ..., "vscode": ..., "inspector": ...,
        "command": [...]}``: each value is the JSON (or command line) that
        client's documentation asks for.
    """
    return _settings(bridge_command(name), server)


def _settings(argv: list[str], server: str) -> dict[str, Any]:
    command, *args = argv
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
