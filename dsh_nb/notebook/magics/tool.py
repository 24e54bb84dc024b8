"""``ToolCellMagics``: ``%%tool``, a cell's function made a tool.

The magic parses its line and hands the steps to :mod:`.toolcell` (run the
cell, pick the function, build the definition); it registers the result
on the kernel's registry and records what the cell made, for ``%tools
export``. Mistakes on the line are a one-line ``UsageError``.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class

from dsh_nb.cards.listing import ToolSpec, format_ms
from dsh_nb.notebook.magics.args import argument, magic_arguments, parse_argstring
from dsh_nb.notebook.magics.toolcell import (
    build_definition,
    parse_timeout,
    pick_function,
    run_tool_cell,
    unquote,
)
from dsh_nb.notebook.state import PolicyEntry, ToolCell
from dsh_nb.tools.errors import HarnessError, error_message
from dsh_nb.tools.surrogates import escape_surrogates, escape_tree

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.state import KernelState
    from dsh_nb.tools.definition import ToolDefinition

__all__ = ["ToolCellMagics"]


@magics_class
class ToolCellMagics(Magics):
    """Define a tool from a notebook cell."""

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
