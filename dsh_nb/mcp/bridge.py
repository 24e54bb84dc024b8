"""``python -m dsh_nb mcp-bridge``: a stdio MCP server that re-serves a kernel.

Desktop clients (Claude Code, Cursor, VS Code, the MCP Inspector) launch a
command and speak MCP on its stdin/stdout. The bridge is such a command: it
finds a running kernel's server through its runtime file (which holds the
token, so the client's settings never do), forwards ``tools/list`` and
``tools/call`` to it, passes ``tools/list_changed`` on, and when the kernel
restarts (a new port, a new token, a new file) it reconnects on the next
request. Between kernels a call gets a clear error, not a hang.

The kernel names one agent per client after its ``clientInfo``, so that
policies can target Claude Code apart from Cursor; the bridge therefore
introduces itself upstream with its own client's ``clientInfo``, not as
a generic SDK client.

The upstream SDK client lives in one long-lived task: entering and leaving
it in different tasks breaks anyio's cancel scopes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_nb.mcp._lowlevel import changing_server
from dsh_nb.mcp.runtime import RuntimeEntry, find_entry

if TYPE_CHECKING:
    from mcp import Client, types
    from mcp.server.context import ServerRequestContext

__all__ = ["Bridge", "main", "print_config"]

_log = logging.getLogger(__name__)


class Bridge:
    """Forward one stdio client's requests to the kernel named ``target``."""

    def __init__(self, target: str | None) -> None:
        self.target = target
        self.entry: RuntimeEntry | None = None
        self._client: Client | None = None
        self._life: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._downstream: weakref.WeakSet[Any] = weakref.WeakSet()
        self._bus: Any = None
        self._client_info: types.Implementation | None = None

    def _unreachable(self) -> Exception:
        from mcp.shared.exceptions import MCPError

        which = f"kernel {self.target!r}" if self.target else "any kernel"
        return MCPError(
            -32000,
            f"no dsh_nb MCP server is running for {which}; start one with "
            "%tools serve in the notebook (the bridge reconnects by itself)",
        )

    async def upstream(self) -> Client:
        """The live upstream client, (re)connecting through the runtime file."""
        async with self._lock:
            client = self._client
            if client is not None and self._life is not None and not self._life.done():
                return client
            entry = find_entry(self.target)
            if entry is None:
                raise self._unreachable()
            ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._life = asyncio.ensure_future(self._run(entry, ready))
            try:
                client = await asyncio.wait_for(asyncio.shield(ready), 15)
            except Exception:  # noqa: BLE001 - any failure: the kernel is not there
                self._stop.set()
                raise self._unreachable() from None
            previous, self.entry = self.entry, entry
            if previous is not None and previous.path != entry.path:
                await self._tell_changed()  # a new kernel may have other tools
            return client

    async def _run(self, entry: RuntimeEntry, ready: asyncio.Future[Client]) -> None:
        import httpx2
        from mcp import Client, types
        from mcp.client.streamable_http import streamable_http_client

        info = self._client_info or types.Implementation(
            name="dsh_nb-bridge", version="0.1"
        )

        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {entry.token}"},
            timeout=httpx2.Timeout(30, read=3600),
        )
        try:
            async with Client(
                streamable_http_client(entry.url, http_client=http),
                mode="legacy",
                message_handler=self._on_upstream,
                client_info=info,
            ) as client:
                self._client = client
                if not ready.done():
                    ready.set_result(client)
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - a gone kernel is expected
            _log.info("upstream ended: %s", type(exc).__name__)
            if not ready.done():
                ready.set_exception(RuntimeError("the kernel did not answer"))
                ready.exception()
        finally:
            self._client = None

    def broken(self) -> None:
        """Forget the upstream: the next request reconnects."""
        self._stop.set()
        self._client = None

    async def _on_upstream(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            await self._tell_changed()

    async def _tell_changed(self) -> None:
        from mcp.server.subscriptions import ToolsListChanged

        for connection in list(self._downstream):
            with contextlib.suppress(Exception):
                await connection.send_tool_list_changed()
        if self._bus is not None:
            with contextlib.suppress(Exception):
                await self._bus.publish(ToolsListChanged())

    # --- the downstream (stdio) server -------------------------------------------

    async def _remember(
        self, ctx: ServerRequestContext[Any, Any], call_next: Any
    ) -> Any:
        connection = getattr(ctx.session, "_connection", None)
        if connection is not None and not ctx.protocol_version.startswith("2026"):
            self._downstream.add(connection)
        params = getattr(ctx.session, "client_params", None)
        if params is not None and self._client_info is None:
            self._client_info = params.client_info
        return await call_next(ctx)

    async def list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: Any
    ) -> types.ListToolsResult:
        client = await self.upstream()
        try:
            return await client.list_tools(cache_mode="bypass")
        except Exception:  # noqa: BLE001 - a stale upstream: reconnect once
            self.broken()
            client = await self.upstream()
            return await client.list_tools(cache_mode="bypass")

    async def call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        from mcp.shared.exceptions import MCPError

        client = await self.upstream()
        try:
            return await client.call_tool(params.name, params.arguments or {})
        except MCPError as exc:
            if "closed" in str(exc).lower() or "connection" in str(exc).lower():
                self.broken()
                raise MCPError(
                    -32000,
                    "the kernel went away during the call (restarted or shut "
                    "down); call again once it serves",
                ) from None
            raise

    def server(self) -> Any:
        """The stdio-side low-level server."""
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        self._bus = InMemorySubscriptionBus()

        server = changing_server(
            "dsh_nb-bridge",
            instructions="Tools of a running Jupyter kernel, through dsh_nb.",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        server.middleware = [self._remember]
        return server


async def _serve_stdio(target: str | None) -> None:
    from mcp.server.stdio import stdio_server

    bridge = Bridge(target)
    server = bridge.server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
    bridge.broken()


def _target(args: argparse.Namespace) -> str | None:
    return None if args.latest or not args.kernel else str(args.kernel)


def _parser(prog: str, what: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=f"python -m dsh_nb {prog}", description=what)
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--kernel", metavar="NAME", help="a kernel id (or its server name)"
    )
    group.add_argument(
        "--latest", action="store_true", help="the newest serving kernel (default)"
    )
    return parser


def print_config(argv: list[str]) -> int:
    """``mcp-config``: how a client reaches a server.

    With ``MODULE[:ATTR]``: the settings that launch ``serve`` on stdio.
    Else the URL and header of a running HTTP server (a kernel's or a
    standalone one), and the settings that launch the bridge to it.
    """
    import json
    import shlex

    from dsh_nb.mcp.clientconfig import client_config, serve_config
    from dsh_nb.mcp.runtime import pick, scan

    parser = _parser("mcp-config", "Print how to reach a dsh_nb MCP server.")
    parser.add_argument(
        "target",
        nargs="?",
        metavar="MODULE[:ATTR]",
        help="print the settings that launch `serve MODULE --stdio`",
    )
    parser.add_argument(
        "--journal", metavar="FILE", help="with MODULE: add --journal FILE"
    )
    args = parser.parse_args(argv)
    if args.target is not None:
        if args.kernel or args.latest:
            parser.error("give MODULE or --kernel/--latest, not both")
        from dsh_nb.mcp.target import module_file, short_name

        target = module_file(args.target)
        journal = str(Path(args.journal).resolve()) if args.journal else None
        config = serve_config(target, journal=journal, server=short_name(target))
        print("Claude Code (.mcp.json, or claude mcp add-json NAME '<json>'):")
        print(json.dumps(config["claude_code"], indent=2))
        print()
        print("Cursor (.cursor/mcp.json):")
        print(json.dumps(config["cursor"], indent=2))
        print()
        print("VS Code (.vscode/mcp.json):")
        print(json.dumps(config["vscode"], indent=2))
        return 0
    entries, skipped = scan()
    for name, why in skipped.items():
        print(f"skipped {name}: it {why}", file=sys.stderr)
    entry = pick(entries, _target(args))
    if entry is None:
        print(
            "no dsh_nb MCP server is running; start one with %tools serve in a "
            "notebook, or python -m dsh_nb serve MODULE --http",
            file=sys.stderr,
        )
        return 1
    config = client_config(entry.name)
    print(f"URL:    {entry.url}")
    print(f"Header: Authorization: Bearer {entry.token}")
    print()
    print("Or let the client launch the bridge (no token in its settings).")
    print("Claude Code (.mcp.json) and Cursor (.cursor/mcp.json):")
    print(json.dumps(config["claude_code"], indent=2))
    print("VS Code (.vscode/mcp.json):")
    print(json.dumps(config["vscode"], indent=2))
    print("The MCP Inspector:")
    print(shlex.join(config["inspector"]))
    return 0


def main(argv: list[str]) -> int:
    """``mcp-bridge``: serve on stdio until the client closes it."""
    args = _parser("mcp-bridge", "Re-serve a kernel's MCP tools on stdio.").parse_args(
        argv
    )
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    import anyio

    anyio.run(_serve_stdio, _target(args))
    return 0
