"""``connect_mcp``: an MCP server's tools as registry tools.

Each server tool becomes ``NAME_tool`` in the registry, with its input
schema as given, so policies, approvals, guards, timeouts, cards and the
journal apply to it like to any other tool. The SDK client lives in one
long-lived task (entering and leaving it in different tasks breaks anyio's
cancel scopes); calls come from the pipeline's tasks and race the call's
abort signal and the connection's end, so nothing waits on a dead server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from dsh_nb.mcp.clienttalk import ServerTalk
from dsh_nb.mcp.errors import (
    McpConnectionError,
    McpToolError,
    describe,
    fingerprint,
    is_connection_error,
    not_json_rpc,
    quiet,
)
from dsh_nb.mcp.startup import STAGES, abandon, stderr_tail
from dsh_nb.mcp.tooldef import McpToolDefinition, remote_definition
from dsh_nb.mcp.transport import make_transport
from dsh_nb.tools.errors import ToolDefinitionError, error_message
from dsh_nb.tools.names import check_tool_name, suggest_tool_name
from dsh_nb.tools.running.abort import AbortError

if TYPE_CHECKING:
    from mcp import Client, types

    from dsh_nb.tools import Disposer
    from dsh_nb.tools.registry import ToolRegistry
    from dsh_nb.tools.values.execution import ToolExecution

__all__ = [
    "McpConnection",
    "McpConnectionError",
    "McpToolError",
    "check_name",
    "connect_mcp",
]

_log = logging.getLogger(__name__)
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
_TAIL = 2000
_OPEN: dict[tuple[int, str], McpConnection] = {}


def check_name(name: object) -> None:
    """Raise ValueError unless ``name`` can prefix tool names."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(
            f"connection name must be letters, digits, '_' or '-' (starting with "
            f"a letter), not {name!r}"
        )


class McpConnection:
    """One open connection; its tools are in the registry while it lives."""

    def __init__(
        self, name: str, registry: ToolRegistry, *, call_timeout: float | None
    ) -> None:
        self.name = name
        self.registry = registry
        self.call_timeout = call_timeout
        self.tools: dict[str, types.Tool] = {}
        self.error: str | None = None
        self.protocol_version: str | None = None
        self._disposers: dict[str, tuple[Disposer, tuple[Any, ...]]] = {}
        self._client: Client | None = None
        self._closing = asyncio.Event()
        self._ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        self._stderr: IO[str] | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._refresh_again = False
        self._dead = False
        self._ready: asyncio.Future[None] | None = None
        self._stage = "spawn"
        self._talk = ServerTalk()  # progress, logs, questions: to their call

    @property
    def closed(self) -> bool:
        """Whether calls can still reach the server."""
        return self._dead or self._ended.done()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<McpConnection {self.name!r} {state}, {len(self.tools)} tools>"

    def stderr_tail(self, limit: int = _TAIL) -> str:
        """The last ``limit`` characters the server wrote to stderr."""
        return stderr_tail(self._stderr, limit)

    def _why(self, what: str) -> str:
        tail = self.stderr_tail()
        return f"{what}\nserver stderr (last lines):\n{tail}" if tail else what

    async def close(self) -> None:
        """End the connection (and a stdio server's process); idempotent."""
        self._closing.set()
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(task), 10)
            if not task.done():
                task.cancel()
        self._dispose_tools()
        if _OPEN.get((id(self.registry), self.name)) is self:
            del _OPEN[(id(self.registry), self.name)]
        if self._stderr is not None:
            self._stderr.close()

    def _dispose_tools(self) -> None:
        for dispose, _ in self._disposers.values():
            dispose()
        self._disposers.clear()

    # --- the connection's own task ----------------------------------------------

    async def _life(
        self, transport: Any, mode: str, ready: asyncio.Future[None]
    ) -> None:
        import anyio
        from mcp import Client, types

        def on_end() -> None:
            if not self._ended.done():
                self._ended.set_result(None)

        self._ready = ready
        try:
            self._stage = "initialize"
            async with Client(
                transport,
                mode=mode,
                message_handler=self._on_message,
                **self._talk.callbacks(),
                client_info=types.Implementation(name="dsh_nb", version="0.1"),
            ) as client:
                self._client = client
                self.protocol_version = client.protocol_version
                self._stage = "tools/list"
                await self._refresh()
                if not ready.done():
                    ready.set_result(None)
                async with anyio.create_task_group() as group:
                    if client.protocol_version.startswith("2026"):
                        group.start_soon(self._listen, client)
                    await self._closing.wait()
                    group.cancel_scope.cancel()
        except BaseException as exc:  # the kernel outlives a server
            if self.error is None and not self._closing.is_set():
                self.error = describe(exc)
            if not ready.done():
                why = self.error or "the connection closed"
                ready.set_exception(
                    McpConnectionError(
                        self._why(f"MCP server {self.name!r} did not start: {why}")
                    )
                )
                ready.exception()  # retrieved: the caller may have timed out
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self._client = None
            on_end()

    async def _listen(self, client: Client) -> None:
        async with client.listen(tools_list_changed=True) as sub:
            async for _event in sub:
                self._schedule_refresh()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):  # the stream can no longer be trusted
            self._mark_dead(not_json_rpc(message))
            return
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            self._schedule_refresh()

    def _schedule_refresh(self) -> None:
        if self._refreshing is not None and not self._refreshing.done():
            self._refresh_again = True
            return
        self._refreshing = asyncio.ensure_future(self._refresh_loop())

    async def _refresh_loop(self) -> None:
        while True:
            self._refresh_again = False
            try:
                await self._refresh()
            except Exception as exc:  # noqa: BLE001 - a failed refresh keeps the old list
                _log.warning(
                    "refreshing %r tools failed: %s", self.name, error_message(exc)
                )
            if not self._refresh_again:
                return

    async def _refresh(self) -> None:
        client = self._client
        if client is None:
            return
        tools: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="bypass")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self._apply(tools)

    def _apply(self, tools: Sequence[types.Tool]) -> None:
        wanted: dict[str, types.Tool] = {}
        for remote in tools:
            local = f"{self.name}_{remote.name}"
            if check_tool_name(local, "") is not None:
                # Model APIs refuse a whole request for one bad name (a dot,
                # a space): register under the nearest name they accept.
                local = suggest_tool_name(local)
            if local in wanted:
                _log.warning(
                    "MCP tool %r not registered: %r already names %r",
                    remote.name,
                    local,
                    wanted[local].name,
                )
                continue
            wanted[local] = remote
        for local in list(self._disposers):
            if local not in wanted:
                self._disposers.pop(local)[0]()
        for local, remote in wanted.items():
            key = fingerprint(remote)
            existing = self._disposers.get(local)
            if existing is not None and existing[1] == key:
                continue
            if existing is not None:
                self._disposers.pop(local)[0]()
            try:
                definition = self._definition(local, remote)
                self._disposers[local] = (self.registry.register(definition), key)
            except ToolDefinitionError as exc:
                _log.warning("MCP tool %r not registered: %s", local, exc)
        self.tools = {local: wanted[local] for local in self._disposers}

    def _definition(self, local: str, remote: types.Tool) -> McpToolDefinition:
        connection = self

        async def execute(args: Any, execution: ToolExecution) -> Any:
            return await connection._call(remote.name, args, execution)

        timeout_ms = None if self.call_timeout is None else self.call_timeout * 1000
        return remote_definition(
            local, remote, execute, timeout_ms=timeout_ms, connection=self.name
        )

    # --- calls --------------------------------------------------------------------

    async def _call(self, remote: str, args: Any, execution: ToolExecution) -> Any:
        from dsh_nb.mcp.content import from_call_result
        from dsh_nb.tools.jsonvalue import to_plain

        client = self._client
        if client is None or self.closed:
            raise McpConnectionError(self._closed_message())
        args = to_plain(args)
        call = asyncio.ensure_future(self._talk.calling(client.call_tool, remote, args))
        waiters: set[asyncio.Future[Any]] = {call, self._ended}
        signal = execution.signal
        aborted: asyncio.Future[None] | None = None
        undo = None
        if signal is not None:
            aborted = asyncio.get_running_loop().create_future()
            fut = aborted

            def on_abort(_reason: object) -> None:
                if not fut.done():
                    fut.set_result(None)

            undo = signal.add_callback(on_abort)
            if signal.aborted:
                on_abort(None)
            waiters.add(aborted)
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if undo is not None:
                undo()
            if not call.done():
                call.cancel()  # the SDK sends notifications/cancelled
                call.add_done_callback(quiet)
        if not call.done() or call.cancelled():
            if aborted is not None and aborted.done():
                raise AbortError(f"the call to {self.name}/{remote} was aborted")
            raise McpConnectionError(self._why(self._closed_message()))
        exc = call.exception()
        if exc is not None:
            if self.closed or is_connection_error(exc):
                self._mark_dead(describe(exc))
                raise McpConnectionError(self._why(self._closed_message()))
            raise McpConnectionError(
                self._why(f"MCP server {self.name!r} failed the call: {describe(exc)}")
            )
        result = call.result()
        mapped = from_call_result(result)
        if result.is_error:
            text = "\n".join(
                b.get("text", "") for b in mapped["content"] if b.get("type") == "text"
            )
            raise McpToolError(text or f"{self.name}/{remote} returned an error")
        return mapped

    def _mark_dead(self, why: str) -> None:
        if self.error is None:
            self.error = why
        self._dead = True
        self._closing.set()
        ready = self._ready
        if ready is not None and not ready.done():
            # Dead while starting: the connect fails now, with this reason,
            # instead of waiting out its timeout for an answer.
            ready.set_exception(
                McpConnectionError(
                    self._why(f"MCP server {self.name!r} did not start: {why}")
                )
            )
            ready.exception()

    async def _abandon(self, budget: float) -> None:
        """End a connection that never started, within ``budget`` seconds."""
        self._closing.set()
        self._dispose_tools()
        await abandon(self._task, self._stderr, budget)

    def _closed_message(self) -> str:
        why = f" ({self.error})" if self.error else ""
        return (
            f"the MCP connection {self.name!r} is closed{why}; reconnect with "
            f"connect_mcp({self.name!r}, ...) or %tools connect {self.name}"
        )


async def connect_mcp(
    name: str,
    *,
    command: Sequence[str] | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    registry: ToolRegistry | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    timeout: float = 30.0,
    call_timeout: float | None = None,
) -> McpConnection:
    """Connect to an MCP server and register its tools as ``NAME_tool``.

    Parameters
    ----------
    name
        The connection's name and the tools' prefix (letters, digits, ``_``,
        ``-``).
    command
        A stdio server to launch, e.g. ``["mcp-server-time"]``; the
        connection owns the process and ends it on ``close()``.
    url, headers
        A Streamable HTTP server instead, with e.g. an ``Authorization``
        header.
    registry
        Where the tools go; the notebook's registry if None.
    timeout
        Seconds to wait for the server to start and list its tools.
    call_timeout
        A per-tool timeout (seconds) for every call; None leaves it to the
        registry's timeout policy.

    Raises
    ------
    McpConnectionError
        The server did not start (the message ends with its stderr tail).
    """
    check_name(name)
    if (command is None) == (url is None):
        raise ValueError("connect_mcp() needs exactly one of command=[...] or url=")
    if command is not None:
        if (
            isinstance(command, str)
            or not command
            or not all(isinstance(part, str) for part in command)
        ):
            raise ValueError(
                f"command must be a non-empty list of str, not {command!r}"
            )
    if registry is None:
        raise TypeError(
            "connect_mcp() needs the registry its tools go into (registry=); "
            "dsh_nb.connect_mcp() uses the notebook's own"
        )
    key = (id(registry), name)
    previous = _OPEN.get(key)
    if previous is not None:
        if not previous.closed:
            raise ValueError(
                f"an MCP connection named {name!r} is open; close it first "
                f"(await connection.close() or %tools connect --close {name})"
            )
        await previous.close()
    connection = McpConnection(name, registry, call_timeout=call_timeout)
    sink: list[IO[str]] = []
    transport, mode = make_transport(sink, command, url, headers, env, cwd)
    connection._stderr = sink[0] if sink else None
    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    connection._task = asyncio.ensure_future(connection._life(transport, mode, ready))
    budget = min(0.25, 0.05 * timeout)  # the timeout holds within 10 %
    try:
        await asyncio.wait_for(asyncio.shield(ready), timeout)
    except asyncio.TimeoutError:
        waiting = STAGES[connection._stage]
        message = connection._why(
            f"MCP server {name!r} did not answer within {timeout:g} s "
            f"(waiting for {waiting})"
        )
        connection.error = connection.error or message
        await connection._abandon(budget)
        raise McpConnectionError(message) from None
    except BaseException:
        await connection._abandon(budget)
        raise
    if connection.closed:  # it died as it started: never report success
        why = connection.error or "the connection closed"
        message = connection._why(f"MCP server {name!r} did not start: {why}")
        await connection._abandon(budget)
        raise McpConnectionError(message)
    _OPEN[key] = connection
    return connection
