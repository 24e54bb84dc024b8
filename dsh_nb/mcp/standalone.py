"""A registry served by its own process: stdio or Streamable HTTP, no kernel.

The handlers are the kernel server's (:class:`RegistryAdapter`): one agent
per client session, every call inside an open turn on it, the whole
pipeline. What a process of its own adds:

* an approval answerer that elicits (:mod:`dsh_nb.mcp.elicit`, mounted by
  ``serve``), so an ``ask`` becomes an elicitation, or an
  ``input_required`` round for a 2026-07-28 client (the adapter's
  :mod:`.rounds`, shared with the kernel's server);
* each new client session is attached to the journal file, under an agent
  id unique across processes and restarts (``<boot>-<n>``);
* HTTP is served as ``%tools serve`` serves it (loopback unless allowed,
  ``/mcp``, a bearer token, a 0600 runtime file that ``mcp-config`` and the
  bridge read, SSE responses, DNS-rebinding protection), optionally in the
  SDK's stateless mode, where every request is a session of its own and
  any replica behind a load balancer can answer it. Unlike the kernel's
  server, this one owns its process: uvicorn's own signal handling stays
  (SIGINT and SIGTERM stop it gracefully).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import sys
import uuid
import weakref
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from dsh_nb.mcp._adapter import RegistryAdapter
from dsh_nb.mcp.server import SESSION_IDLE_S
from dsh_nb.tools.audit.secrets import add_secret

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from dsh_nb.mcp.journalfile import JournalFile
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.registry import ToolRegistry

__all__ = [
    "HttpOptions",
    "ListenError",
    "StandaloneAdapter",
    "serve_http",
    "serve_stdio",
]

Transport = Literal["stdio", "streamable-http"]
_KEEP_ALIVE_S = 75


class ListenError(OSError):
    """The HTTP server cannot bind its address (busy, not ours, refused)."""


class StandaloneAdapter(RegistryAdapter):
    """The kernel server's handlers, with a journal file and agent ids."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        spec: str,
        transport: Transport,
        journal: JournalFile | None = None,
    ) -> None:
        super().__init__(registry)
        self.spec = spec
        self.transport = transport
        self.journal = journal
        self.boot = uuid.uuid4().hex[:8]
        self._agent_numbers = itertools.count(1)
        self._agent_ids: weakref.WeakKeyDictionary[Agent, str] = (
            weakref.WeakKeyDictionary()
        )

    def agent_for(self, ctx: ServerRequestContext[Any, Any]) -> Agent:
        """The session's agent; a new one is announced in the journal."""
        agent = super().agent_for(ctx)
        if agent not in self._agent_ids:
            agent_id = f"{self.boot}-{next(self._agent_numbers)}"
            self._agent_ids[agent] = agent_id
            if self.journal is not None:
                self.journal.attach(agent, agent_id, self._about(ctx, agent))
        return agent

    def agent_id(self, agent: Agent) -> str | None:
        """The id an agent's journal lines carry."""
        return self._agent_ids.get(agent)

    def _about(
        self, ctx: ServerRequestContext[Any, Any], agent: Agent
    ) -> dict[str, Any]:
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        return {
            "client": agent.name,
            "clientVersion": (info.version if info is not None else "") or "",
            "protocol": ctx.protocol_version,
            "transport": self.transport,
            "server": self.spec,
            "pid": os.getpid(),
        }


async def serve_stdio(adapter: StandaloneAdapter, wire: int | None = None) -> None:
    """Serve one client on stdin/stdout until it closes them.

    ``wire`` is the client's pipe when fd 1 was diverted already
    (:mod:`dsh_nb.mcp.stdiowire`); otherwise the SDK moves the process's own
    stdout out of the way (to stderr) while it serves. Either way a tool
    that prints cannot corrupt the protocol.
    """
    from mcp.server.stdio import stdio_server

    from dsh_nb.mcp.stdiowire import wire_stream

    server = adapter.build(asyncio.get_running_loop())
    stdout = wire_stream(wire) if wire is not None else None
    try:
        async with stdio_server(stdout=stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        adapter.close()


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpOptions:
    """How to serve over HTTP; see ``python -m dsh_nb serve --help``."""

    host: str = "127.0.0.1"
    port: int = 0
    token: str
    stateless: bool = False
    name: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    #: A session idle this long ends (the kernel's server does the same);
    #: a stateless server keeps no session.
    session_idle_s: float = SESSION_IDLE_S


def _security(options: HttpOptions, port: int) -> Any:
    from dsh_nb.mcp.server import _security as kernel_security

    settings = kernel_security(options.host, port)
    for host in options.allowed_hosts:
        settings.allowed_hosts.append(host)
        settings.allowed_origins.extend((f"http://{host}", f"https://{host}"))
    return settings


def _own_uvicorn() -> type[Any]:
    import uvicorn

    class OwnUvicorn(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            # uvicorn's own capture re-raises the signal once it has stopped,
            # which would end the process before the runtime file is removed;
            # on the loop, a signal only asks for the graceful stop.
            loop = asyncio.get_running_loop()
            signals = (signal.SIGINT, signal.SIGTERM)
            for sig in signals:
                loop.add_signal_handler(sig, self.handle_exit, sig, None)
            try:
                yield
            finally:
                for sig in signals:
                    loop.remove_signal_handler(sig)

    return OwnUvicorn


async def serve_http(
    adapter: StandaloneAdapter,
    options: HttpOptions,
    on_ready: Callable[[str, str | None], object] = lambda url, path: None,
) -> None:
    """Serve until SIGINT or SIGTERM; ``on_ready(url, token_file)`` once up."""
    from dsh_nb.mcp.runtime import remove_entry, write_entry
    from dsh_nb.mcp.server import _bind, endpoint_url, http_config

    try:
        sock = _bind(options.host, options.port)
    except OSError as exc:
        raise ListenError(
            f"cannot listen on {options.host}:{options.port}: {exc.strerror or exc}"
        ) from None
    port = sock.getsockname()[1]
    url = endpoint_url(options.host, port)
    token_file = None
    add_secret(options.token)  # redacted from the journal and the logs
    try:
        config = http_config(
            adapter.build(asyncio.get_running_loop()),
            token=options.token,
            host=options.host,
            security=_security(options, port),
            session_idle_timeout=None if options.stateless else options.session_idle_s,
            stateless=options.stateless,
            backlog=2048,
            # Longer than a proxy keeps idle upstream connections (nginx: 60
            # s): one closed here as the proxy reuses it would be a 502, as
            # a proxy does not retry a POST.
            timeout_keep_alive=_KEEP_ALIVE_S,
        )
        server = _own_uvicorn()(config)
        token_file = write_entry(url=url, token=options.token, name=options.name)

        async def announce() -> None:
            while not server.started:
                if server.should_exit:
                    return
                await asyncio.sleep(0.005)
            on_ready(url, str(token_file))

        watcher = asyncio.ensure_future(announce())
        try:
            await server.serve(sockets=[sock])
        finally:
            watcher.cancel()
        if not server.started:
            raise RuntimeError("the HTTP server did not start (see the log above)")
    finally:
        sock.close()
        adapter.close()
        if token_file is not None:
            remove_entry(token_file)
        sys.stdout.flush()
