"""What ``%%tool`` does: run the cell, pick the function, build the tool.

Plain functions over a shell and a namespace, so the magic stays a thin
parser and the steps are testable one by one.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from dsh_nb.tools.definition import ToolDefinition, tool
from dsh_nb.tools.errors import HarnessError, error_message
from dsh_nb.tools.running.abort import is_positive_finite

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = [
    "build_definition",
    "parse_timeout",
    "pick_function",
    "run_tool_cell",
    "unquote",
]


_UNITS = {"ms": 1.0, "s": 1000.0, "m": 60_000.0, None: 1000.0}
_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m)?\s*\Z")


def parse_timeout(text: str) -> float:
    """Read ``500ms``, ``5s``, ``2m`` or a bare number of seconds as ms."""
    match = _DURATION.match(text)
    value = float(match[1]) * _UNITS[match[2]] if match else 0.0
    if not is_positive_finite(value):
        raise UsageError(
            f"invalid --timeout {text!r}; write 500ms, 5s, 2m or a number of seconds"
        )
    return value


def unquote(text: str) -> str:
    """Drop one pair of matching quotes (magic lines keep them)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def run_tool_cell(shell: InteractiveShell, cell: str) -> list[str]:
    """Run a ``%%tool`` cell in the user namespace; return its top-level defs.

    A syntax error is a ``UsageError``; an exception from the user's code shows
    its own traceback (our frames cut off), then fails the cell in one line.
    """
    if not cell.strip():
        raise UsageError("%%tool needs a cell that defines a function")
    transform: Callable[[str], str] = shell.transform_cell
    code = transform(cell)
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise UsageError(
            f"%%tool cell has a syntax error at line {exc.lineno}: {exc.msg}"
        ) from None
    filename = shell.compile.cache(code, shell.execution_count, raw_code=cell)
    compiled = compile(tree, filename, "exec", shell.compile.flags, dont_inherit=True)
    try:
        exec(compiled, shell.user_global_ns, shell.user_ns)
    except Exception as exc:  # noqa: BLE001 - the user's code: show, then fail
        tb = sys.exc_info()[2]
        shell.showtraceback((type(exc), exc, tb.tb_next if tb else None), tb_offset=0)
        raise UsageError(
            f"the %%tool cell raised {type(exc).__name__}; no tool was registered"
        ) from None
    return [
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]


def pick_function(
    namespace: Mapping[str, Any], name: str | None, defs: list[str]
) -> object:
    """The object ``%%tool`` registers: ``name``, else the cell's last def."""
    if name is None:
        if not defs:
            raise UsageError(
                "the %%tool cell defines no function; add a def, or name an "
                "existing function: %%tool NAME"
            )
        name = defs[-1]
    found = namespace.get(name)
    if found is None or not (callable(found) or isinstance(found, ToolDefinition)):
        in_cell = f"; the cell defines {', '.join(map(repr, defs))}" if defs else ""
        raise UsageError(f"no function named {name!r}{in_cell}")
    return found


def build_definition(
    found: object,
    name: str | None,
    description: str | None,
    timeout_ms: float | None,
    *,
    coerce: bool = False,
) -> ToolDefinition:
    """Build the tool: schema from signature and docstring, flags applied."""
    if isinstance(found, ToolDefinition):
        changes: dict[str, Any] = {}
        if description is not None:
            changes["description"] = description
        if timeout_ms is not None:
            changes["timeout_ms"] = timeout_ms
        return replace(found, **changes)
    assert callable(found)
    fn: Callable[..., Any] = found
    tool_name = getattr(fn, "__name__", None)
    if not isinstance(tool_name, str) or not tool_name.isidentifier():
        tool_name = name
    try:
        build = tool(
            name=tool_name,
            description=description,
            timeout_ms=timeout_ms,
            coerce=coerce,
        )
        return build(fn)
    except (HarnessError, TypeError, ValueError) as exc:
        raise UsageError(f"%%tool {tool_name!r}: {error_message(exc)}") from None
