"""``ToolMagics``: define, list, call and police tools from cells.

``%%tool``, ``%tools``, ``%call``/``%%call``, ``%tool_policy`` and
``%tool_log``. The magics parse, call ``dsh_nb.tools`` through the kernel state and
display; no pipeline logic lives here. Mistakes on a magic line are a
one-line ``UsageError``; a failing tool is an ``isError`` card.

``%call`` runs inside the calling cell: an input transformer rewrites a
top-level ``%call NAME JSON`` line (or a ``%%call`` cell) into ``await
__dsh_nb_call_magic__(...)``, which IPython's autoawait runs in the cell, so
an approval click can reach it and every card update stays in that cell.
Reached any other way (indented, ``%autoawait off``), the magic starts the
call on the event loop and returns its awaitable ``LiveCall``.
"""

from __future__ import annotations

import difflib
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import (
    Magics,
    cell_magic,
    line_cell_magic,
    line_magic,
    magics_class,
)

from dsh_nb.cards.listing import (
    JsonListing,
    Table,
    ToolSpec,
    format_ms,
    parameters_summary,
)
from dsh_nb.notebook.callmagic import CallTransformer, parse_call
from dsh_nb.notebook.magicargs import argument, magic_arguments, parse_argstring
from dsh_nb.notebook.rewrite import remove_magics
from dsh_nb.notebook.state import POLICIES, PolicyEntry, ToolCell
from dsh_nb.notebook.toolcell import (
    build_definition,
    parse_timeout,
    pick_function,
    run_tool_cell,
    unquote,
)
from dsh_nb.tools.errors import HarnessError, error_message
from dsh_nb.tools.jsonvalue import compact_json, to_plain
from dsh_nb.tools.schema.wireschema import StrictSchemaError
from dsh_nb.tools.surrogates import escape_surrogates, escape_tree

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.live import LiveCall
    from dsh_nb.notebook.state import KernelState
    from dsh_nb.tools.definition import ToolDefinition
    from dsh_nb.tools.values.execution import ToolExecutionResult

__all__ = ["ToolMagics", "install"]


@magics_class
class ToolMagics(Magics):
    """Define, list, call and police tools from notebook cells."""

    def __init__(self, shell: InteractiveShell, state: KernelState) -> None:
        super().__init__(shell)
        self.state = state

    @magic_arguments()
    @argument(
        "name",
        nargs="?",
        help="which function of the cell to register (default: the last def); "
        "the tool takes the function's name",
    )
    @argument("--timeout", metavar="T", help="deadline: 500ms, 5s, 2m or seconds")
    @argument("--ask", action="store_true", help="ask for approval before each call")
    @argument("--deny", action="store_true", help="deny every call (policy deny)")
    @argument("--description", metavar="TEXT", help="description (default: docstring)")
    @argument(
        "--coerce",
        action="store_true",
        help='convert loosely typed arguments ("50" to 50), pydantic lax mode',
    )
    @cell_magic
    def tool(self, line: str, cell: str) -> None:
        """Run the cell and register the function it defines as a tool.

        The schema comes from the signature and the docstring, through
        pydantic. Rerunning the cell replaces the tool. The output shows what
        the model will see. Arguments must have the JSON types the schema
        names (``50.0`` counts as an integer, ``"50"`` does not) unless
        ``--coerce`` is given.

        Examples
        --------
        ::

            %%tool --timeout 5s
            def add(a: int, b: int) -> str:
                '''Add two integers.'''
                return str(a + b)

            %%tool search --ask --description "Search the notes"
        """
        args = parse_argstring(self.tool, line, "%%tool")  # type: ignore[misc]
        shell = self.shell
        assert shell is not None
        if args.ask and args.deny:
            raise UsageError("%%tool takes --ask or --deny, not both")
        timeout_ms = parse_timeout(unquote(args.timeout)) if args.timeout else None
        description = None if args.description is None else unquote(args.description)
        defs = run_tool_cell(shell, cell)
        found = pick_function(shell.user_ns, args.name, defs)
        # The definition's own warnings (no type hints, a *args) are about
        # the user's function: one readable line each under the cell, not
        # a UserWarning pointing into dsh_nb's files.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            definition = build_definition(
                found, args.name, description, timeout_ms, coerce=args.coerce
            )
        for warning in caught:
            print(f"warning: {warning.message}", file=sys.stderr)
        self._register(definition)
        name = definition.name
        transform: Callable[[str], str] = shell.transform_cell
        self.state.tool_cells[name] = ToolCell(
            found=found,
            definition=definition,
            description=description,
            timeout_ms=timeout_ms,
            coerce=args.coerce,
            source=transform(cell),
            number=shell.execution_count,
        )
        entry = self.state.policies.get(name)
        if args.ask or args.deny:
            policy = "ask" if args.ask else "deny"
            self.state.policies[name] = PolicyEntry(policy=policy, source="%%tool")
        elif entry is not None and entry.source == "%%tool":
            del self.state.policies[name]
        from IPython.display import display

        show: Callable[..., Any] = display
        show(self._spec(definition))

    def _register(self, definition: ToolDefinition) -> None:
        state, name = self.state, definition.name
        previous = state.tools.pop(name, None)
        if previous is None and name in state.registry:
            raise UsageError(
                f"tool {name!r} was registered by code, not by %%tool; dispose that "
                "registration first, or give this function another name"
            )
        if previous is not None:
            previous()
        try:
            state.tools[name] = state.registry.register(definition)
        except HarnessError as exc:
            raise UsageError(f"%%tool {name!r}: {error_message(exc)}") from None

    def _spec(self, definition: ToolDefinition) -> ToolSpec:
        notes = []
        if definition.timeout_ms is not None:
            notes.append(f"timeout {format_ms(definition.timeout_ms)}")
        entry = self.state.policies.get(definition.name)
        if entry is not None:
            notes.append(f"policy {entry.policy}")
        return ToolSpec(
            name=definition.name,
            description=escape_surrogates(definition.description),
            parameters=escape_tree(definition.parameters),
            notes=notes,
        )

    @magic_arguments()
    @argument("--json", action="store_true", help="the schemas() list as JSON")
    @argument("--openai", action="store_true", help="OpenAI Chat Completions tools")
    @argument("--anthropic", action="store_true", help="Anthropic Messages tools")
    @argument(
        "--strict",
        action="store_true",
        help="with --openai: schemas for OpenAI strict function calling",
    )
    @line_magic
    def tools(self, line: str) -> Table | JsonListing | None:
        """List the registered tools, or export them for a model request.

        The result of ``--json``, ``--openai`` and ``--anthropic`` is a plain
        list: bind it (``tools = %tools --openai``) and pass it to the client.
        ``--openai --strict`` gives ``"strict": true`` tools: no extra keys,
        every property required, optional parameters nullable (a tool reads
        ``null`` there as its default).

        ``%tools serve [--port N] [--stop]`` serves the kernel's tools over
        MCP (a panel under the cell shows the URL, the clients and each call
        as a card). ``%tools connect NAME [--url URL] [--header 'K: V']
        [-- COMMAND ARGS...]`` brings an MCP server's tools in as
        ``NAME_tool``; ``%tools connect --close NAME`` closes it.
        ``%tools export FILE.py [NAMES...] [--force]`` writes the tools, their
        cells' code, policies, listeners and guards as a module that builds
        ``registry``; what cannot be exported is listed and nothing written.

        Examples
        --------
        ::

            %tools
            %tools --json
            tools = %tools --openai
            tools = %tools --openai --strict
            %tools --anthropic
            %tools serve
            %tools serve --stop
            %tools connect time -- mcp-server-time --local-timezone UTC
            %tools connect --close time
            %tools export tools.py
        """
        head = line.split(None, 1)
        if head and head[0] == "export":
            from dsh_nb.notebook.exportmagic import export

            export(self.state, head[1] if len(head) > 1 else "")
            return None
        if head and head[0] in ("serve", "connect"):
            from dsh_nb.notebook import mcpmagic

            mcpmagic.run(self.state, head[0], head[1] if len(head) > 1 else "")
            return None
        args = parse_argstring(self.tools, line, "%tools")  # type: ignore[misc]
        chosen = [f for f in ("json", "openai", "anthropic") if getattr(args, f)]
        if len(chosen) > 1:
            raise UsageError(f"%tools takes one format, not {', '.join(chosen)}")
        state = self.state
        schemas = state.registry.schemas(state.agent)
        if args.strict and chosen != ["openai"]:
            raise UsageError("%tools --strict goes with --openai")
        from dsh_nb.models import wire  # a model's wire forms, when asked for

        if chosen == ["openai"]:
            try:
                return JsonListing(wire.to_openai_tools(schemas, strict=args.strict))
            except StrictSchemaError as exc:
                raise UsageError(str(exc)) from None
        if chosen == ["anthropic"]:
            return JsonListing(wire.to_anthropic_tools(schemas))
        if chosen == ["json"]:
            return JsonListing(escape_tree(to_plain(schemas)))
        default = state.config.default_timeout_ms
        rows = []
        for name, definition in state.registry.view(state.agent).items():
            if definition.timeout_ms is not None:
                timeout = format_ms(definition.timeout_ms)
            else:
                timeout = f"{format_ms(default)} (default)" if default else "none"
            entry = state.policies.get(name)
            description = escape_surrogates(definition.description)
            if len(description) > 60:
                description = description[:59] + "…"
            rows.append(
                (
                    name,
                    description,
                    escape_surrogates(parameters_summary(definition.parameters)),
                    timeout,
                    entry.policy if entry else "-",
                )
            )
        return Table(
            "tools",
            ("name", "description", "parameters", "timeout", "policy"),
            rows,
            empty="none registered; define one with %%tool",
        )

    @magic_arguments()
    @argument("-o", "--output", metavar="VAR", help="bind the result to VAR")
    @argument("name", help="the tool to call")
    @argument("json", nargs="?", help="the arguments, a JSON object (default {})")
    @line_cell_magic
    def call(self, line: str, cell: str | None = None) -> LiveCall:
        """Call a tool through the pipeline and show its live card.

        The line form takes the JSON after the name; ``%%call`` reads it from
        the cell body. The JSON is taken verbatim (not shell-split), so it may
        hold spaces and quotes. A top-level ``%call`` waits for the call in
        its cell; ``-o VAR`` binds the ``ToolExecutionResult`` to ``VAR``.
        Where the cell cannot wait (an indented ``%call``, ``%autoawait
        off``) the call starts in the background and the magic returns (and
        ``-o`` binds) its awaitable ``LiveCall``.

        Examples
        --------
        ::

            %call add {"a": 1, "b": 2}
            res = %call add {"a": 1, "b": 2}

            %%call -o res search
            {"query": "tool cards", "limit": 3}
        """
        request = parse_call(self.state, line, cell)
        live = (
            self.state.runner.new_call(request.name, request.arguments).show().start()
        )
        if request.output is not None:
            assert self.shell is not None
            self.shell.user_ns[request.output] = live
        return live

    async def call_in_cell(
        self, line: str, cell: str | None = None, returns: bool = False
    ) -> ToolExecutionResult | None:
        """What a rewritten ``%call`` awaits: the call, run in the cell."""
        request = parse_call(self.state, line, cell)
        result = await self.state.runner.new_call(
            request.name, request.arguments
        ).show()
        if request.output is not None:
            assert self.shell is not None
            self.shell.user_ns[request.output] = result
        return result if returns else None

    @magic_arguments()
    @argument("policy", nargs="?", help="allow, ask or deny")
    @argument("names", nargs="*", help="tool names")
    @argument("--clear", action="store_true", help="remove rows (all if no names)")
    @line_magic
    def tool_policy(self, line: str) -> Table:
        """Set, list or clear per-tool policies (one pre-execute listener).

        ``deny`` denies each call; ``ask`` routes it to the approval prompt;
        ``allow`` lets it through without asking other pre-execute
        listeners (guards still run).

        Examples
        --------
        ::

            %tool_policy deny shell rm
            %tool_policy ask search
            %tool_policy
            %tool_policy --clear search
        """
        args = parse_argstring(self.tool_policy, line, "%tool_policy")  # type: ignore[misc]
        table = self.state.policies
        if args.clear:
            names = ([args.policy] if args.policy else []) + args.names
            for name in names or list(table):
                self.state.clear_policy(name, everything=not names)
            return self._policy_table()
        if args.policy is None:
            return self._policy_table()
        policy = args.policy.lower()
        if policy not in POLICIES:
            close = difflib.get_close_matches(policy, POLICIES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UsageError(
                f"unknown policy {args.policy!r}{hint} (allow, ask or deny)"
            )
        if not args.names:
            raise UsageError(f"%tool_policy {policy} needs tool names: NAME...")
        for name in args.names:
            table[name] = PolicyEntry(policy=policy, source="%tool_policy")
        return self._policy_table()

    def _policy_table(self) -> Table:
        known = self.state.registry.view(self.state.agent)
        rows = []
        for name, entry in self.state.policies.items():
            note = "" if name in known else "not registered"
            close = difflib.get_close_matches(name, list(known), n=1)
            if note and close:
                note += f"; did you mean {close[0]!r}?"
            source = entry.source
            if entry.agent is not None:
                source += f" (agent {entry.agent.name!r})"
                if entry.shadows is not None:
                    source += f"; otherwise {entry.shadows.policy}"
            rows.append((name, entry.policy, source, note))
        return Table("tool policies", ("tool", "policy", "set by", "note"), rows)

    @magic_arguments()
    @argument("--save", metavar="FILE", help="write the events as JSON Lines")
    @argument("--follow", metavar="FILE", nargs="?", const="", help="show new calls")
    @argument("--stop", action="store_true", help="with --follow: stop following")
    @line_magic
    def tool_log(self, line: str) -> Table | None:
        """Show the session's events, save them, or follow a server's journal.

        ``--follow FILE`` shows each call another process (a server run
        with ``--journal FILE``) appends to FILE, live, as cards under this
        cell, until ``%tool_log --follow --stop`` or the next ``--follow``.

        Examples
        --------
        ::

            %tool_log
            %tool_log --save session.jsonl
            %tool_log --follow journal.jsonl
            %tool_log --follow --stop
        """
        args = parse_argstring(self.tool_log, line, "%tool_log")  # type: ignore[misc]
        if args.follow is not None or args.stop:
            from dsh_nb.notebook.follow import run

            run(self.state, unquote(args.follow or ""), stop=args.stop)
            return None
        session = self.state.agent.session
        if args.save:
            path = unquote(args.save)
            try:
                session.write_jsonl(path)
            except OSError as exc:
                raise UsageError(
                    f"cannot write {path!r}: {exc.strerror or exc}"
                ) from None
            print(f"wrote {len(session)} events to {path!r}")
            return None
        rows = []
        for index, event in enumerate(session.events):
            text = compact_json(to_plain(event["data"]))
            rows.append(
                (
                    str(index),
                    event["type"],
                    text[:117] + "…" if len(text) > 120 else text,
                )
            )
        return Table("session log", ("#", "type", "data"), rows, empty="no events yet")


def install(shell: InteractiveShell, state: KernelState) -> Callable[[], None]:
    """Register the magics and the ``%call`` rewrite; return the undo."""
    magics = ToolMagics(shell, state)
    shell.register_magics(magics)
    transformer = CallTransformer(shell, magics.call_in_cell)
    untransform = transformer.install()

    def undo() -> None:
        remove_magics(shell, magics)
        untransform()

    return undo
