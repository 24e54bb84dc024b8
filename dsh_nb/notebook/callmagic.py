"""``%call`` parsing and the rewrite that runs a call inside its cell.

A line magic cannot await. So an input transformer rewrites a top-level
``%call NAME JSON`` line, ``VAR = %call ...``, or a ``%%call NAME`` cell
into ``await __dsh_nb_call_magic__(...)`` before IPython compiles the cell;
IPython's autoawait then runs the call in the cell. The call's card updates
and any approval click happen while the cell runs, so headless runners and
JupyterLab both see them. With ``%autoawait off`` (or a non-asyncio runner)
the lines are left alone and the ``%call`` magic itself starts the call.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from dsh_nb.models import wire
from dsh_nb.tools.jsonvalue import compact_json

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.state import KernelState

__all__ = ["HELPER", "CallRequest", "CallTransformer", "parse_call"]

HELPER = "__dsh_nb_call_magic__"
_CALL_LINE = re.compile(
    r"\s*(?:(?:-o|--output)(?:\s+|=)(?P<out>\S+)\s+)?(?P<name>\S+)?(?P<rest>.*)\Z",
    re.S,
)
_LINE_FORM = re.compile(
    r"(?:(?P<target>[A-Za-z_]\w*)\s*=\s*)?%call(?P<rest>(?:\s.*)?)\Z", re.S
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

    ``helper`` is what the rewritten code awaits; it is put back into the
    user namespace whenever a rewrite needs it (``%reset`` clears it).
    """

    has_side_effects = False

    def __init__(self, shell: InteractiveShell, helper: Callable[..., Any]) -> None:
        self.shell = shell
        self.helper = helper

    def _ensure_helper(self) -> None:
        for namespace in (self.shell.user_ns, self.shell.user_ns_hidden):
            if namespace.get(HELPER) != self.helper:
                namespace[HELPER] = self.helper

    def _enabled(self) -> bool:
        from IPython.core.async_helpers import _asyncio_runner

        shell = self.shell
        return bool(
            shell.autoawait
            and shell.trio_runner is None
            and shell.loop_runner is _asyncio_runner
        )

    def __call__(self, lines: list[str]) -> list[str]:
        if not any("%call" in line for line in lines) or not self._enabled():
            return lines
        cell = _CELL_FORM.match(lines[0].rstrip("\r\n"))
        if cell is not None:
            self._ensure_helper()
            body = "".join(lines[1:])
            return [f"await {HELPER}({cell['rest'].strip()!r}, {body!r})\n"]
        out = []
        for line in lines:
            form = _LINE_FORM.match(line.rstrip("\r\n"))
            if form is None:
                out.append(line)
                continue
            self._ensure_helper()
            target, rest = form["target"], form["rest"].strip()
            if target:
                out.append(f"{target} = await {HELPER}({rest!r}, None, True)\n")
            else:
                out.append(f"await {HELPER}({rest!r})\n")
        return out
