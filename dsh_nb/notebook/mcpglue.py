"""The kernel's MCP server and connections: cards, a panel, lifetimes.

``serve_mcp()`` with no registry, and ``%tools serve``, come here: every
served call becomes a live card (the kernel's policies, approval prompts,
timeouts and journal apply, as for ``%call``), shown in the panel under the
cell that started the server. The server and every connection end on
``--stop``/``--close``, on ``%unload_ext`` and with the kernel.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_nb.notebook.mcppanel import McpPanel

if TYPE_CHECKING:
    from dsh_nb.mcp.client import McpConnection
    from dsh_nb.mcp.server import McpServer
    from dsh_nb.notebook.state import KernelState

__all__ = ["KernelMcp", "for_state", "kernel_name", "serve"]

_GLUE: weakref.WeakKeyDictionary[KernelState, KernelMcp] = weakref.WeakKeyDictionary()


def kernel_name() -> str | None:
    """This kernel's id (from its connection file), or None outside one."""
    try:
        from ipykernel.connect import get_connection_file

        stem = Path(get_connection_file()).stem
    except Exception:  # noqa: BLE001 - not in a kernel: no stable name
        return None
    return stem.removeprefix("kernel-") or None


class KernelMcp:
    """What one kernel serves and what it is connected to."""

    def __init__(self, state: KernelState) -> None:
        self.state = state
        self.server: McpServer | None = None
        self.panel: McpPanel | None = None
        self.connections: dict[str, McpConnection] = {}
        self.connecting: dict[str, asyncio.Future[Any]] = {}
        state.disposers.append(self.dispose)

    # --- serving ----------------------------------------------------------------

    def serve(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        token: str | None = None,
        allow_remote: bool = False,
        show_again: bool = False,
    ) -> McpServer:
        """Start the kernel's server, with its panel in the current cell.

        With ``show_again``, a server that already runs (on ``port``, if one
        is given) is not an error: its panel is shown in this cell again,
        as a newcomer expects after a page reload lost it.
        """
        from dsh_nb.mcp.server import serve_mcp

        running = self.server
        if running is not None and running.running:
            same = port in (None, 0, running.port) and token is None
            if show_again and same and self.panel is not None:
                self.panel.show_again()
                return running
            raise RuntimeError(
                f"this kernel already serves MCP at {running.url}; stop it "
                "first with %tools serve --stop (or server.stop()); %tools serve "
                "with no options shows its panel again"
            )
        panel = McpPanel(shown=self.state.shell is not None)
        server = serve_mcp(
            host=host,
            port=port,
            token=token,
            runner=self.state.runner,
            allow_remote=allow_remote,
            name=kernel_name(),
            on_agent=lambda agent: panel.refresh_header(),
        )
        # Served calls are the kernel runner's cards, in this panel.
        self.state.runner.placements["mcp"] = panel.add
        self.server, self.panel = server, panel
        panel.show(server)
        entry = server.token_file
        if entry is not None:
            atexit.register(_remove_quietly, entry)
        done = asyncio.ensure_future(server.started())
        done.add_done_callback(lambda fut: self._after_start(fut, server, panel))
        return server

    def _after_start(
        self, fut: asyncio.Future[Any], server: McpServer, panel: McpPanel
    ) -> None:
        if fut.cancelled() or fut.exception() is not None:
            panel.set_state(server.error or "failed to start")
            return
        task = server._task
        if task is not None:
            task.add_done_callback(
                lambda _t: panel.set_state(server.error or "stopped")
            )

    def stop(self) -> asyncio.Future[None] | None:
        """Stop serving; None if nothing was served."""
        server, self.server = self.server, None
        if server is None:
            return None
        stopping = server.stop()
        if self.panel is not None:
            self.panel.close()
            if self.state.runner.placements.get("mcp") == self.panel.add:
                del self.state.runner.placements["mcp"]
        return stopping

    # --- connections ------------------------------------------------------------

    def connect(self, name: str, **options: Any) -> asyncio.Future[McpConnection]:
        """Start connecting; the future settles when the tools are in."""
        from dsh_nb.mcp.client import check_name, connect_mcp

        check_name(name)
        if name in self.connecting and not self.connecting[name].done():
            raise RuntimeError(f"already connecting to {name!r}")
        existing = self.connections.get(name)
        if existing is not None and not existing.closed:
            raise RuntimeError(
                f"{name!r} is connected; close it first with "
                f"%tools connect --close {name}"
            )

        async def go() -> McpConnection:
            conn = await connect_mcp(name, registry=self.state.registry, **options)
            self.connections[name] = conn
            return conn

        fut = asyncio.ensure_future(go())
        self.connecting[name] = fut
        return fut

    async def close(self, name: str) -> bool:
        """Close one connection; False if there was none by that name."""
        conn = self.connections.pop(name, None)
        if conn is None:
            return False
        await conn.close()
        return True

    def dispose(self) -> None:
        """Unload: stop the server, close every connection (best effort)."""
        self.stop()
        for fut in self.connecting.values():
            fut.cancel()
        for conn in list(self.connections.values()):
            with contextlib.suppress(RuntimeError):
                task = asyncio.ensure_future(conn.close())
                _TASKS.add(task)
                task.add_done_callback(_TASKS.discard)
        self.connections.clear()
        _GLUE.pop(self.state, None)


_TASKS: set[asyncio.Future[Any]] = set()


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def for_state(state: KernelState) -> KernelMcp:
    """The kernel's MCP glue, created on first use."""
    glue = _GLUE.get(state)
    if glue is None:
        glue = _GLUE[state] = KernelMcp(state)
    return glue


def serve(**options: Any) -> McpServer:
    """``serve_mcp()`` without a registry: the kernel's server and panel."""
    from dsh_nb.notebook.current import current_state

    return for_state(current_state()).serve(**options)
