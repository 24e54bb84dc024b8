"""``serve_mcp``: a Streamable HTTP MCP server on the running event loop.

The server shares the kernel's loop, so it must never touch what the kernel
owns: uvicorn's signal capture is a no-op (it would take SIGINT from the
kernel), its ``sys.exit()`` on a failed start is contained (it would end the
kernel), and its logging config is left alone. The socket is bound here,
synchronously, so the port is known at once and a busy port is a plain
``OSError``. Every start builds a new app: a session manager runs once.

Decisions, documented once:

* Responses stream (SSE), never JSON: an approval may take minutes, and a
  JSON response hits the client's read timeout; SSE pings keep it alive.
* A session idle for :data:`SESSION_IDLE_S` (an hour) ends: sessions that
  never end grow the kernel's memory and the panel without bound. A client
  that comes back after that gets 404 and starts a new session, as the
  protocol says; a call in flight keeps its session alive.
* DNS-rebinding protection is on; a non-loopback host needs
  ``allow_remote=True`` and logs a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh_nb.mcp._adapter import RegistryAdapter
from dsh_nb.mcp._auth import BearerGate, new_token
from dsh_nb.mcp.runtime import remove_entry, write_entry
from dsh_nb.tools.audit.secrets import add_secret

if TYPE_CHECKING:
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.registry import ToolRegistry
    from dsh_nb.tools.runner import CallRunner

__all__ = ["SESSION_IDLE_S", "McpServer", "endpoint_url", "http_config", "serve_mcp"]

SESSION_IDLE_S = 3600.0
"""Seconds without a request after which a client's session ends."""

_log = logging.getLogger(__name__)
_STOP_S = 5.0


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def endpoint_url(host: str, port: int) -> str:
    """The Streamable HTTP endpoint at ``host:port`` (IPv6 in brackets)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/mcp"


def http_config(
    server: Any,
    *,
    token: str,
    host: str,
    security: Any,
    session_idle_timeout: float | None,
    stateless: bool = False,
    **uvicorn_options: Any,
) -> Any:
    """The uvicorn config serving ``server`` (the SDK's) at ``/mcp``.

    Both HTTP servers, the kernel's and a process of its own, answer the
    same way: SSE responses (see above), every request behind the bearer
    token, and uvicorn's logging config left alone.
    """
    import uvicorn

    app = server.streamable_http_app(
        json_response=False,
        stateless_http=stateless,
        session_idle_timeout=session_idle_timeout,
        host=host,
        transport_security=security,
    )
    return uvicorn.Config(
        BearerGate(app, token),
        log_config=None,
        access_log=False,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        **uvicorn_options,
    )


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not left 0: accepted sockets inherit it, and asyncio
    # turns Nagle off (TCP_NODELAY) only on sockets that say TCP. With it
    # on, uvicorn's response body waited for the client's delayed ACK:
    # about 40 ms on every request after the first on a kept-alive connection.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


class McpServer:
    """A running MCP server over one registry; see :func:`serve_mcp`.

    ``.url`` is the endpoint, ``.token`` the bearer token (never printed:
    it is kept out of ``repr`` and every display), ``.token_file`` the
    runtime file a bridge reads it from.
    """

    def __init__(
        self,
        *,
        registry: ToolRegistry,
        host: str,
        port: int,
        token: str,
        name: str | None,
        runner: CallRunner | None,
        on_agent: Callable[[Agent], object] | None,
    ) -> None:
        self.registry = registry
        self.host = host
        self.token = token
        add_secret(token)  # redacted wherever text is shown or stored
        self.name = name
        self._requested_port = port
        self.port = 0
        self.token_file: Path | None = None
        self.error: str | None = None
        self._adapter = RegistryAdapter(registry, runner=runner, on_agent=on_agent)
        self._uvicorn: Any = None
        self._task: asyncio.Task[None] | None = None
        self._started: asyncio.Future[None] | None = None
        self._stopping: asyncio.Future[None] | None = None

    # --- what users read --------------------------------------------------------

    @property
    def url(self) -> str:
        """The Streamable HTTP endpoint, e.g. ``http://127.0.0.1:8765/mcp``."""
        return endpoint_url(self.host, self.port)

    @property
    def running(self) -> bool:
        """Whether the server task is alive."""
        return self._task is not None and not self._task.done()

    @property
    def agents(self) -> list[Agent]:
        """The agent of every client session seen so far (one per session)."""
        return list(self._adapter.agents.values())

    @property
    def calls_in_flight(self) -> int:
        """Calls received and not yet answered."""
        return self._adapter.calls_in_flight

    def client_config(self) -> dict[str, Any]:
        """Ready-to-paste settings for common MCP clients; no token in them."""
        from dsh_nb.mcp.clientconfig import client_config

        return client_config(self.name)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<McpServer {self.url} {state}>"

    # --- lifecycle ----------------------------------------------------------------

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        sock = _bind(self.host, self._requested_port)
        self.port = sock.getsockname()[1]
        try:
            config = http_config(
                self._adapter.build(loop),
                token=self.token,
                host=self.host,
                security=_security(self.host, self.port),
                session_idle_timeout=SESSION_IDLE_S,
            )
            self._uvicorn = _new_uvicorn(config)
            # Written before the task starts: a folder it cannot be written
            # to fails the start cleanly, with nothing left running.
            self.token_file = write_entry(
                url=self.url, token=self.token, name=self.name
            )
            self._started = loop.create_future()
            self._task = loop.create_task(self._serve(sock), name="dsh_nb mcp server")
        except BaseException:
            sock.close()
            self._adapter.close()
            if self.token_file is not None:
                remove_entry(self.token_file)
            raise

    async def _serve(self, sock: socket.socket) -> None:
        server = self._uvicorn
        watcher = asyncio.ensure_future(_watch_started(server, self._started))
        try:
            await server.serve(sockets=[sock])
        except SystemExit as exc:  # uvicorn exits the process on a failed start
            self.error = f"the MCP server failed to start (exit {exc.code})"
        except Exception as exc:  # noqa: BLE001 - the kernel outlives its server
            self.error = f"the MCP server stopped: {type(exc).__name__}: {exc}"
        finally:
            watcher.cancel()
            sock.close()
            self._adapter.close()
            if self.token_file is not None:
                remove_entry(self.token_file)
            started = self._started
            if started is not None and not started.done():
                started.set_exception(RuntimeError(self.error or "the server stopped"))
                started.exception()  # retrieved: nobody may be waiting

    async def started(self) -> McpServer:
        """Wait until the server accepts requests; raise if its start failed."""
        if self._started is None:
            raise RuntimeError("the server was never started")
        await asyncio.shield(self._started)
        return self

    def stop(self) -> asyncio.Future[None]:
        """Stop serving and free the port; await the result to wait for it.

        Calls in flight are cancelled after a short grace period; their
        pending approvals settle as ``cancelled``.
        """
        if self._stopping is not None:
            return self._stopping
        loop = asyncio.get_event_loop()
        self._stopping = loop.create_future()
        task = self._task
        if task is None or task.done():
            self._stopping.set_result(None)
            return self._stopping
        self._uvicorn.should_exit = True
        # What a new server could trip over goes now, not when the task
        # ends: the file (no client finds a stopping server) and the
        # listening socket (the same port can be served again at once).
        if self.token_file is not None:
            remove_entry(self.token_file)
        for listener in getattr(self._uvicorn, "servers", ()):
            listener.close()
        stopping = self._stopping

        async def wait() -> None:
            try:
                await asyncio.wait_for(asyncio.shield(task), _STOP_S)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._uvicorn.force_exit = True
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            if not stopping.done():
                stopping.set_result(None)

        waiter = loop.create_task(wait())
        _TASKS.add(waiter)
        waiter.add_done_callback(_TASKS.discard)
        return stopping


_TASKS: set[asyncio.Future[Any]] = set()


async def _watch_started(server: Any, started: asyncio.Future[None] | None) -> None:
    while not server.started:
        await asyncio.sleep(0.005)
    if started is not None and not started.done():
        started.set_result(None)


def _security(host: str, port: int) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if not _is_loopback(host):
        hosts.append(f"{host}:{port}")
        origins.append(f"http://{host}:{port}")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=origins,
    )


def _kernel_uvicorn() -> type[Any]:
    import uvicorn

    class KernelUvicorn(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            # The kernel owns SIGINT (interrupts) and SIGTERM (shutdown).
            yield

    return KernelUvicorn


def _new_uvicorn(config: Any) -> Any:
    return _kernel_uvicorn()(config)


def serve_mcp(
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    token: str | None = None,
    registry: ToolRegistry | None = None,
    allow_remote: bool = False,
    name: str | None = None,
    runner: CallRunner | None = None,
    on_agent: Callable[[Agent], object] | None = None,
) -> McpServer:
    """Serve a registry over MCP (Streamable HTTP) on the running loop.

    Parameters
    ----------
    host
        Loopback by default; any other address needs ``allow_remote=True``.
    port
        A free port if None.
    token
        The bearer token every request must carry; random if None. It is
        written to ``dsh-mcp-<pid>-<random>.json`` (mode 0600) in the Jupyter
        runtime folder, where ``python -m dsh_nb mcp-bridge`` finds it.
    registry
        The registry to serve, live; the runner's when None. (In a
        notebook, ``dsh_nb.serve_mcp()`` serves the kernel's registry with
        a card per call.)
    name
        A stable name for the runtime file (``mcp-bridge --kernel NAME``).
    runner
        The :class:`~dsh_nb.tools.runner.CallRunner` every call goes
        through (the notebook's adds a card); a plain one when None.
    on_agent
        Called with each new client's agent, e.g. to restrict it.

    Returns
    -------
    McpServer
        Already listening; ``await server.started()`` waits until it answers.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError(
            "serve_mcp() needs a running event loop: call it in a notebook "
            "cell or inside async code (not under asyncio.run from a cell)"
        ) from None
    if not isinstance(host, str) or not host:
        raise ValueError(f"host must be a non-empty str, not {host!r}")
    if not _is_loopback(host):
        if not allow_remote:
            raise ValueError(
                f"host {host!r} is not a loopback address; pass allow_remote=True "
                "to serve your tools to other machines"
            )
        _log.warning(
            "dsh_nb MCP server on %s: reachable from other machines; "
            "anyone with the token can run your tools",
            host,
        )
    if port is not None and (type(port) is not int or not 0 <= port <= 65535):
        raise ValueError(f"port must be an int in 0..65535, not {port!r}")
    if token is not None and (not isinstance(token, str) or len(token) < 16):
        raise ValueError("token must be a str of at least 16 characters")
    if registry is None:
        if runner is None:
            raise TypeError(
                "serve_mcp() needs the registry to serve (registry= or runner=); "
                "dsh_nb.serve_mcp() serves the notebook's own"
            )
        registry = runner.registry
    server = McpServer(
        registry=registry,
        host=host,
        port=port or 0,
        token=token or new_token(),
        name=name,
        runner=runner,
        on_agent=on_agent,
    )
    server._start(loop)
    return server
