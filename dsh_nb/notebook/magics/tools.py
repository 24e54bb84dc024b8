"""``ToolsMagics``: ``%tools``, the registered tools and their sub-commands.

Without a sub-command ``%tools`` lists the tools, or exports their schemas
for a model request (``--json``, or one flag per provider of
:data:`~dsh_nb.models.providers.PROVIDER_TABLE`: ``--openai``,
``--anthropic``). Its
sub-commands are argparse sub-parsers (:class:`~.args.subcommands`), each
declared on its handler: ``serve`` and ``connect`` (:mod:`.mcp`) and
``export`` (:mod:`.export`). The part of a line after `` -- `` is a server's
command line, split on its own, and only ``connect`` takes one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class

from dsh_nb.cards.listing import JsonListing, Table, format_ms, parameters_summary
from dsh_nb.models.providers import PROVIDER_TABLE
from dsh_nb.notebook.magics import export, mcp
from dsh_nb.notebook.magics.args import (
    argument,
    magic_arguments,
    parse_known,
    subcommands,
    unrecognized,
)
from dsh_nb.tools.jsonvalue import to_plain
from dsh_nb.tools.schema.wireschema import StrictSchemaError
from dsh_nb.tools.surrogates import escape_surrogates, escape_tree

if TYPE_CHECKING:
    from argparse import Namespace

    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.state import KernelState

__all__ = ["ToolsMagics", "split_command"]

_FORMATS = ("json", *PROVIDER_TABLE)
_F = TypeVar("_F", bound=Callable[..., Any])


def _provider_flags(func: _F) -> _F:
    """One flag per provider row: the tools as that API takes them."""
    for row in reversed(list(PROVIDER_TABLE.values())):
        flag = argument(
            f"--{row.name}", action="store_true", help=f"{row.label or row.name} tools"
        )
        func = flag(func)
    return func


def split_command(line: str) -> tuple[str, str | None]:
    """Split ``... -- COMMAND ARGS`` into the magic's words and the command.

    The command is a server's command line, split as a shell would by the
    sub-command that takes it; a trailing ``--`` is an empty command.
    """
    head, sep, tail = f" {line}".partition(" -- ")
    if sep:
        return head[1:], tail
    words = line.split()
    if words[-1:] == ["--"] and len(words) > 1:
        return line.rstrip()[:-2], ""
    return line, None


@magics_class
class ToolsMagics(Magics):
    """List, export, serve and connect the kernel's tools from a cell."""

    def __init__(self, shell: InteractiveShell, state: KernelState) -> None:
        super().__init__(shell)
        self.state = state

    @magic_arguments()
    @argument("--json", action="store_true", help="the schemas() list as JSON")
    @_provider_flags
    @argument(
        "--strict",
        action="store_true",
        help="with --openai: schemas for OpenAI strict function calling",
    )
    @subcommands(serve=mcp.serve, connect=mcp.connect, export=export.export)
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
        head, command = split_command(line)
        args, extras = parse_known(self.tools, head, "%tools")  # type: ignore[misc]
        chosen = [f for f in _FORMATS if getattr(args, f)]
        if args.run is None:
            if extras:
                raise unrecognized(extras)
            if command is not None:
                raise UsageError(
                    "%tools: only %tools connect takes '-- COMMAND ARGS...'"
                )
            return self._listing(args, chosen)
        if chosen or args.strict:
            flags = ", ".join(f"--{f}" for f in (*chosen, "strict") if getattr(args, f))
            raise UsageError(f"%tools {args.command} takes no {flags}")
        args.extras, args.server_command = extras, command
        args.run(self.state, args)
        return None

    def _listing(self, args: Namespace, chosen: list[str]) -> Table | JsonListing:
        if len(chosen) > 1:
            raise UsageError(f"%tools takes one format, not {', '.join(chosen)}")
        state = self.state
        schemas = state.registry.schemas(state.agent)
        if args.strict and chosen != ["openai"]:
            raise UsageError("%tools --strict goes with --openai")
        from dsh_nb.models import wire  # a model's wire forms, when asked for

        if args.strict:  # OpenAI's strict function calling, its own schema form
            try:
                return JsonListing(wire.to_openai_tools(schemas, strict=True))
            except StrictSchemaError as exc:
                raise UsageError(str(exc)) from None
        if chosen == ["json"]:
            return JsonListing(escape_tree(to_plain(schemas)))
        if chosen:
            adapter = PROVIDER_TABLE[chosen[0]].adapter_class()
            return JsonListing(adapter.tools(schemas))
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
