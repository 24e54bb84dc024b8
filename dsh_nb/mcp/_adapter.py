"""The MCP handlers over a live ``ToolRegistry``: list, call, notify.

A new low-level ``mcp.server.Server`` is built for every start (a session
manager runs only once); this adapter is what outlives it. Each MCP client
session is one :class:`~dsh_nb.tools.audit.session.Agent`, named after the
client's ``clientInfo``, so policies, restrictions and guards can target a
client, and each call runs inside an open turn on that agent's log.

``tools/list_changed`` differs between the protocol eras the SDK speaks:

* handshake era (``initialize``, up to 2025-11-25): the SDK has no public
  broadcast outside a request, so every connection is remembered (weakly)
  when it first sends a request, and told on its standalone stream;
* 2026-07-28 era: no connection outlives a request; clients hear changes
  through ``subscriptions/listen``, fed by one subscription bus.

Changes are coalesced: a redefinition (dispose, then register) is one
notification, sent on the next loop turn.

Both servers (the kernel's ``%tools serve`` and ``python -m dsh_nb serve``)
hear a call here, so both make its request known to an approval answerer
that elicits (:mod:`dsh_nb.mcp.elicit`), and both answer a 2026-07-28
client that declared elicitation with ``input_required`` rounds
(:mod:`.rounds`): its approval question and its ``ToolContext.ask`` come
back as the call's answer, and the call waits for the client's retry.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import warnings
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.mcp._lowlevel import changing_server
from dsh_nb.mcp.rounds import Channel, Rounds
from dsh_nb.mcp.talk import LogLevels, McpTalk
from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.runner import VISIBLE, CallAnswer, CallRunner, DoorCall
from dsh_nb.tools.running.abort import AbortController, AbortError

if TYPE_CHECKING:
    from mcp import types
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext

    from dsh_nb.tools.registry import ToolRegistry

__all__ = ["RegistryAdapter"]

_log = logging.getLogger(__name__)

# How long a cancelled call may take to settle (audit, card) before the
# handler lets the SDK finish the cancellation anyway.
_SETTLE_S = 5.0
# 2026-07-28 clients have no session to end: their agents are remembered up
# to this many, the idle one used least recently forgotten for a new one.
_MAX_MODERN_AGENTS = 256


def _client_name(ctx: ServerRequestContext[Any, Any]) -> tuple[str, str]:
    params = ctx.session.client_params
    if params is None:
        return "mcp-client", ""
    info = params.client_info
    return (info.name or "mcp-client"), (info.version or "")


class RegistryAdapter:
    """Serve one registry to MCP clients; survives restarts of the server."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        runner: CallRunner | None = None,
        on_agent: Callable[[Agent], object] | None = None,
    ) -> None:
        self.registry = registry
        if runner is not None and runner.registry is not registry:
            raise ValueError("the runner runs calls through another registry")
        self.runner = runner if runner is not None else CallRunner(registry)
        self.on_agent = on_agent
        self.agents: dict[object, Agent] = {}
        self.calls_in_flight = 0
        # 2026-07-28 agents, least recently used first, and the calls each
        # has running (held for an input round included): a busy one stays.
        self._modern: dict[object, None] = {}
        self._busy: dict[Agent, int] = {}
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()
        self._bus: Any = None
        self._listen: Any = None
        self._pending_notice = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dispose_change = registry.on_change(self._changed)
        self.levels = LogLevels()
        self.rounds = Rounds()

    def close(self) -> None:
        """Stop listening, end the listen streams and the held calls."""
        self.rounds.close()
        self._dispose_change()
        self._end_listen()

    def _end_listen(self) -> None:
        if self._listen is not None:
            self._listen.close()
            self._listen = None

    # --- the low-level server, new per start ----------------------------------

    def build(self, loop: asyncio.AbstractEventLoop) -> Server[Any]:
        """A fresh low-level server whose handlers read this registry."""
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
        from mcp.shared.exceptions import MCPDeprecationWarning

        self._loop = loop
        self._end_listen()
        self._bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self._bus)
        adapter = self

        with warnings.catch_warnings():
            # ``logging/setLevel`` is the handshake era's (deprecated in
            # 2026-07-28, where clients opt in per request): we serve both.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            server = self._server()
        # Our own middleware only: remember handshake-era connections. The
        # SDK's default OpenTelemetry middleware is a no-op without an
        # exporter, and costs a span per message.
        server.middleware = [adapter._remember]
        return server

    def _server(self) -> Server[Any]:
        return changing_server(
            "dsh_nb",
            version=_version(),
            instructions="Tools from a Jupyter notebook, run through dsh_nb.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self._listen,
            on_set_logging_level=self.levels.set_level,
        )

    async def _remember(
        self, ctx: ServerRequestContext[Any, Any], call_next: Any
    ) -> Any:
        connection = getattr(ctx.session, "_connection", None)
        if connection is not None and not ctx.protocol_version.startswith("2026"):
            if connection not in self._connections:
                self._connections.add(connection)
        return await call_next(ctx)

    # --- agents -----------------------------------------------------------------

    def agent_for(self, ctx: ServerRequestContext[Any, Any]) -> Agent:
        """The agent of the client session behind one request."""
        name, version = _client_name(ctx)
        connection: Any = getattr(ctx.session, "_connection", None)
        key: object
        if connection is not None and not ctx.protocol_version.startswith("2026"):
            key = connection  # one handshake = one session
        else:
            # 2026-07-28 has no session: a client is its clientInfo.
            key = ("modern", name, version)
        agent = self.agents.get(key)
        if agent is not None:
            if key in self._modern:  # now the most recently used
                del self._modern[key]
                self._modern[key] = None
            return agent
        if isinstance(key, tuple):
            self._make_room()
        agent = Agent(name)
        self.agents[key] = agent
        if isinstance(key, tuple):
            self._modern[key] = None
        else:
            connection.exit_stack.callback(self._forget, key)
        # Every agent, remembered or not, goes through the hook: what it
        # restricts is what the client may do.
        if self.on_agent is not None:
            try:
                self.on_agent(agent)
            except Exception as exc:  # noqa: BLE001 - a hook never fails a call
                _log.warning("on_agent hook failed: %s", error_message(exc))
        return agent

    def _make_room(self) -> None:
        """Forget the least recently used idle 2026-07-28 agent, if at the cap.

        A forgotten client that comes back gets a new agent, through
        ``on_agent`` again. When every remembered agent has a call running,
        a new client is refused rather than let any of them go.
        """
        if len(self._modern) < _MAX_MODERN_AGENTS:
            return
        for key in self._modern:
            if self._busy.get(self.agents[key], 0) == 0:
                self._forget(key)
                return
        from mcp.shared.exceptions import MCPError

        raise MCPError(
            -32000,
            f"this server is busy with {len(self._modern)} clients; retry later",
        )

    def _forget(self, key: object) -> None:
        self._modern.pop(key, None)
        agent = self.agents.pop(key, None)
        if agent is not None:
            self.registry.dispose_scope(agent)

    # --- handlers ---------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: Any
    ) -> types.ListToolsResult:
        from mcp import types

        agent = self.agent_for(ctx)
        view = self.registry.view(agent)
        tools = []
        for schema in self.registry.schemas(agent):
            definition = view.get(schema["name"])
            output = getattr(definition, "output_schema", None)
            tools.append(
                types.Tool(
                    name=schema["name"],
                    description=schema["description"],
                    input_schema=schema["parameters"],
                    output_schema=dict(output) if output is not None else None,
                )
            )
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        from dsh_nb.mcp.elicit import declares_elicitation, serving

        # The call's task copies this context, so its approval answerer
        # finds the request to elicit on.
        if not (ctx.protocol_version.startswith("2026") and declares_elicitation(ctx)):
            with serving(ctx, params.arguments):
                return await self._run_call(ctx, params)
        # 2026-07-28: the call outlives this request (input rounds), so it
        # must not end when this request's HTTP exchange does.
        quiet = dataclasses.replace(ctx, request=None)

        async def start(channel: Channel) -> types.CallToolResult:
            with serving(ctx, params.arguments, channel):
                return await self._run_call(quiet, params)

        return await self.rounds.call(ctx, params, self.agent_for(ctx), start)

    async def _run_call(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        import anyio

        from dsh_nb.mcp.content import to_call_result
        from dsh_nb.mcp.elicit import explain_unasked, served_call

        agent = self.agent_for(ctx)
        controller = AbortController()
        # Not a counter: another door must not be able to guess it.
        call_id = f"mcp-{secrets.token_hex(6)}"
        arguments = params.arguments if params.arguments is not None else {}
        served = served_call()
        # The call's ToolContext speaks to this client (progress, log
        # lines, questions, samples) through its request.
        talk = McpTalk(ctx, self.levels, served.channel if served else None)
        task = asyncio.ensure_future(
            _contained(
                self.runner.run(
                    DoorCall(name=params.name, arguments=arguments, wire_id=call_id),
                    agent=agent,
                    door="mcp",
                    signal=controller.signal,
                    offered=VISIBLE,  # a tool this client cannot see is unknown
                    talk=talk,
                )
            )
        )
        self.calls_in_flight += 1
        self._busy[agent] = self._busy.get(agent, 0) + 1
        gone = _exchange_ended(ctx)
        try:
            if gone is not None:
                # Handshake era: the SDK does not cancel a request whose
                # client vanished (its POST stream just ends), so watch it.
                waiter = asyncio.ensure_future(gone.wait())
                try:
                    await asyncio.wait(
                        {task, waiter}, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    waiter.cancel()
                if not task.done():
                    raise asyncio.CancelledError("the MCP client went away")
            answer = await asyncio.shield(task)
        except BaseException:
            # The client cancelled (or went away): abort the call, so a
            # pending approval settles as cancelled, and let it finish its
            # audit before the SDK unwinds this handler.
            controller.abort(AbortError("the MCP client cancelled the call"))
            with anyio.CancelScope(shield=True), anyio.move_on_after(_SETTLE_S):
                await asyncio.wait({task})
            if not task.done():
                task.cancel()
            else:
                task.exception() if not task.cancelled() else None
            raise
        finally:
            self.calls_in_flight -= 1
            left = self._busy.pop(agent) - 1
            if left:
                self._busy[agent] = left
        await talk.drain()  # its progress and lines before its result
        if isinstance(answer, BaseException):
            return _interrupted(answer)
        definition = self.registry.get(params.name, agent)
        output = getattr(definition, "output_schema", None)
        # A client that could not be asked is told why (elicit.py).
        return explain_unasked(
            to_call_result(answer.result, output), served, answer.outcome
        )

    # --- list_changed -----------------------------------------------------------

    def _changed(self) -> None:
        loop = self._loop
        if loop is None or self._pending_notice or loop.is_closed():
            return
        self._pending_notice = True
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.call_soon(self._spawn_notice)
        else:
            loop.call_soon_threadsafe(self._spawn_notice)

    def _spawn_notice(self) -> None:
        task = asyncio.ensure_future(self._notify())
        _TASKS.add(task)
        task.add_done_callback(_TASKS.discard)

    async def _notify(self) -> None:
        from mcp.server.subscriptions import ToolsListChanged

        self._pending_notice = False
        for connection in list(self._connections):
            try:
                await connection.send_tool_list_changed()
            except Exception as exc:  # noqa: BLE001 - a gone client is dropped
                _log.debug("list_changed not delivered: %s", error_message(exc))
                self._connections.discard(connection)
        bus = self._bus
        if bus is not None:
            try:
                await bus.publish(ToolsListChanged())
            except Exception as exc:  # noqa: BLE001 - never into the loop
                _log.warning("list_changed publish failed: %s", error_message(exc))


_TASKS: set[asyncio.Future[Any]] = set()


async def _contained(run: Awaitable[CallAnswer]) -> CallAnswer | BaseException:
    """The runner's answer, or the interrupt a listener raised past it.

    A ``KeyboardInterrupt`` raised in the call's task would leave the event
    loop and end the kernel or the server; a ``GeneratorExit`` would close
    the handler's frames. As the task's own frame, this one catches both.
    """
    try:
        return await run
    except (KeyboardInterrupt, GeneratorExit) as exc:
        return exc


def _interrupted(exc: BaseException) -> types.CallToolResult:
    from mcp import types

    text = f"Error: the call was interrupted ({type(exc).__name__})"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=True
    )


def _exchange_ended(ctx: ServerRequestContext[Any, Any]) -> asyncio.Event | None:
    from dsh_nb.mcp._auth import EXCHANGE_ENDED

    request = ctx.request
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict):
        return None
    ended = scope.get(EXCHANGE_ENDED)
    return ended if isinstance(ended, asyncio.Event) else None


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("dsh_nb")
    except Exception:  # noqa: BLE001 - a version string is cosmetic
        return "0"
