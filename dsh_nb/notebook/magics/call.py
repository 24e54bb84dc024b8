"""``CallMagics``: ``%call`` and ``%%call``, one tool call from a cell.

The magic's ``[-o VAR] NAME`` is read by :func:`parse_call` and the JSON
after it taken verbatim (never shell-split, so it may hold spaces and
quotes); its flags are declared with ``@argument`` for the help.

A line magic cannot await. So IPython's input transformers rewrite a
top-level ``%call NAME JSON`` line, ``VAR = %call ...``, or a ``%%call NAME``
cell into ``await __dsh_nb_call_magic__(...)`` before IPython compiles the
cell. The line forms are found on Python tokens, never inside a string, a
comment or another cell magic's body;
IPython's autoawait then runs the call in the cell. The call's card updates
and any approval click happen while the cell runs, so headless runners and
JupyterLab both see them. With ``%autoawait off`` (or a non-asyncio runner)
the lines are left alone and the ``%call`` magic itself starts the call
and returns its awaitable ``LiveCall``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class

from dsh_nb.notebook.magics.args import argument, magic_arguments
from dsh_nb.notebook.magics.rewrite import (
    Helper,
    can_await,
    cell_call,
    line_rest,
    line_transformer,
    remove_magics,
)
from dsh_nb.tools.jsonvalue import compact_json

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.live import LiveCall
    from dsh_nb.notebook.state import KernelState
    from dsh_nb.tools.values.execution import ToolExecutionResult

__all__ = [
    "HELPER",
    "CallMagics",
    "CallRequest",
    "CallTransformer",
    "install",
    "parse_call",
]

HELPER = "__dsh_nb_call_magic__"
_CALL_LINE = re.compile(
    r"\s*(?:(?:-o|--output)(?:\s+|=)(?P<out>\S+)\s+)?(?P<name>\S+)?(?P<rest>.*)\Z",
    re.S,
)
_CELL_FORM = re.compile(r"%%call(?P<rest>(?:\s.*)?)\Z", re.S)


def _unknown_tool(state: KernelState, name: str) -> UsageError:
    known = sorted(state.registry.view(state.agent))
    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return UsageError(f"unknown tool {name!r}; did you mean {close[0]!r}?")
    if not known:
        return UsageError(
            f"unknown tool {name!r}; no tools yet, define one with %%tool"
        )
    return UsageError(f"unknown tool {name!r}; known tools: {', '.join(known)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class CallRequest:
    """A parsed ``%call``: which tool, which arguments, bound to which name."""

    name: str
    arguments: dict[str, Any]
    output: str | None = None


def parse_call(state: KernelState, line: str, cell: str | None = None) -> CallRequest:
    """Parse ``[-o VAR] NAME [JSON]`` (JSON from the body for ``%%call``)."""
    match = _CALL_LINE.match(line)
    assert match is not None  # the pattern matches every string
    output, name, rest = match["out"], match["name"], match["rest"]
    if not name:
        raise UsageError('%call needs a tool name: %call NAME {"arg": value}')
    if name.startswith("-"):
        raise UsageError(f"unknown option {name!r}; usage: %call [-o VAR] NAME [JSON]")
    if output is not None and not output.isidentifier():
        raise UsageError(f"-o takes a variable name, not {output!r}")
    if cell is not None and rest.strip():
        raise UsageError(
            "%%call reads the JSON arguments from the cell body, not the line"
        )
    if state.registry.get(name, state.agent) is None:
        raise _unknown_tool(state, name)
    from dsh_nb.models import wire  # loaded by the first call, not the load

    arguments, problem = wire.parse_arguments(rest if cell is None else cell)
    if problem is not None:
        raise UsageError(f"invalid JSON arguments for {name!r}: {problem}")
    if not isinstance(arguments, dict):
        raise UsageError(
            f'the arguments for {name!r} must be a JSON object such as {{"a": 1}}, '
            f"not {compact_json(arguments)[:40]}"
        )
    return CallRequest(name=name, arguments=arguments, output=output)


class CallTransformer:
    """Rewrite ``%call`` lines and ``%%call`` cells into awaited calls.

    The ``%%call`` cell form is a cleanup transform (it must see the cell
    before IPython's own cell-magic transform wraps it). The line forms are
    token transformers (:mod:`dsh_nb.notebook.magics.rewrite`), found by IPython's
    ``TransformerManager`` after cell magics were turned into calls.
    ``helper`` is what the rewritten code awaits.
    """

    has_side_effects = False

    def __init__(self, shell: InteractiveShell, helper: Callable[..., Any]) -> None:
        self.shell = shell
        self.helper = Helper(shell, HELPER, helper)
        self.token_transformer = line_transformer(
            "call", self.rewrite, self.enabled, assign=True
        )

    def enabled(self) -> bool:
        """Whether a cell can await the call (autoawait on asyncio)."""
        return can_await(self.shell)

    def __call__(self, lines: list[str]) -> list[str]:
        return cell_call(lines, _CELL_FORM, self.helper)

    def rewrite(self, lines: list[str], row: int, col: int) -> list[str]:
        """Replace the ``%call`` starting at ``lines[row][col]`` with an await."""
        self.helper.put()
        rest, end = line_rest(lines, row, col, "call")
        target = lines[row][:col]
        if target:
            call = f"{target}await {HELPER}({rest!r}, None, True)\n"
        else:
            call = f"await {HELPER}({rest!r})\n"
        return [*lines[:row], call, *lines[end + 1 :]]

    def install(self) -> Callable[[], None]:
        """Add both transforms to the shell; return the undo."""
        shell = self.shell
        shell.input_transformers_cleanup.append(self)
        tokens: list[Any] = shell.input_transformer_manager.token_transformers
        tokens.insert(0, self.token_transformer)
        self.helper.put()

        def undo() -> None:
            cleanup = shell.input_transformers_cleanup
            if self in cleanup:
                cleanup.remove(self)
            if self.token_transformer in tokens:
                tokens.remove(self.token_transformer)
            self.helper.remove()

        return undo


@magics_class
class CallMagics(Magics):
    """Call a tool from a cell, shown as its live card."""

    def __init__(self, shell: InteractiveShell, state: KernelState) -> None:
        super().__init__(shell)
        self.state = state

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
        runner = self.state.runner
        live = runner.new_call(request.name, request.arguments).show().start()
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


def install(shell: InteractiveShell, state: KernelState) -> Callable[[], None]:
    """Register ``%call`` and its rewrite; return the undo."""
    magics = CallMagics(shell, state)
    shell.register_magics(magics)
    untransform = CallTransformer(shell, magics.call_in_cell).install()

    def undo() -> None:
        remove_magics(shell, magics)
        untransform()

    return undo
