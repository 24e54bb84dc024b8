"""Write a standalone module that rebuilds a notebook's tool registry.

The module holds the cells' statements the tools need (as their authors
wrote them, in the order they ran), then ``registry = ToolRegistry()`` and
the registrations: every tool (with its ``%%tool`` options), the policy
table as one pre-execute listener, and every listener and guard in the
order a call meets them. Nothing is written when anything is missing: the
caller gets the problems instead, each naming the object and the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from dsh_nb.export.cells import Cell, Statement, needs_of
from dsh_nb.export.hooks import SEAMS, Hook
from dsh_nb.export.slicer import BUILTINS, MODULE_NAMES, Problem, Slicer
from dsh_nb.tools.audit.resultsize import DEFAULT_MAX_RESULT_ROWS

__all__ = ["POLICY_TABLE", "Export", "ToolSource", "export_module"]


class _PolicyTable:
    def __repr__(self) -> str:
        return "POLICY_TABLE"


POLICY_TABLE: Final[object] = _PolicyTable()
"""Stands, among a registry's hooks, for the notebook's policy table."""

_GENERATED: Final = ("registry", "_dsh", "_replace", "_POLICY", "_tool_policy")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSource:
    """One tool to export, and how it was made.

    ``obj`` is what its author wrote: the function ``%%tool`` turned into a
    tool (``build=True``), or a ``ToolDefinition`` to register as it is,
    with ``%%tool``'s ``description``/``timeout_ms`` applied on top.
    """

    name: str
    obj: object
    build: bool = False
    description: str | None = None
    timeout_ms: float | None = None
    coerce: bool = False


@dataclass(frozen=True, slots=True)
class Export:
    """The module's text, or why there is none."""

    text: str | None
    problems: tuple[Problem, ...]
    tools: tuple[str, ...] = ()
    hooks: int = 0
    policies: int = 0


def export_module(
    *,
    cells: Sequence[Cell],
    namespace: Mapping[str, Any],
    tools: Sequence[ToolSource],
    hooks: Sequence[Hook] = (),
    policies: Mapping[str, object] | None = None,
    default_timeout_ms: float | None = None,
    drop_decorators: Collection[object] = (),
    notebook_only: Mapping[int, str] | None = None,
    max_result_rows: int = DEFAULT_MAX_RESULT_ROWS,
) -> Export:
    """Build the module for ``tools``, ``hooks`` and ``policies``.

    Parameters
    ----------
    cells
        The notebook's cells in execution order.
    namespace
        The notebook's globals, to tell which binding made each object.
    hooks
        The registry's listeners and guards (:func:`registry_hooks`); a hook
        whose ``fn`` is :data:`POLICY_TABLE` marks where the policy table
        runs among the pre-execute listeners.
    policies
        Tool name to the decision its policy row stands for (``Deny``,
        ``Ask`` or ``Allow``).
    drop_decorators
        Decorators that only mean something in a kernel (the listener
        decorators): removed from the copied source, registered instead.
    notebook_only
        ``id(obj)`` to a description, for objects exported code must not
        use (the kernel's registry, say).
    max_result_rows
        The registry's bound on the rows of a table a model reads, written
        into the module when it is not the default.
    """
    slicer = Slicer(
        cells, namespace, drop_decorators=drop_decorators, notebook_only=notebook_only
    )
    lines: list[str] = []
    for item in tools:
        expr = slicer.name_for(item.obj, f"tool {item.name!r}")
        if expr is not None:
            lines.append(f"registry.register({_tool_expr(item, expr)})")
    rows = dict(policies or {})
    hooks = list(hooks)
    if rows and not any(h.fn is POLICY_TABLE for h in hooks):
        hooks.insert(0, Hook("pre_execute", POLICY_TABLE))
    count = 0
    for hook in hooks:
        if hook.fn is POLICY_TABLE:
            if rows:
                lines.append("registry.on_pre_execute(_tool_policy)")
            continue
        if hook.scope is not None:
            name = getattr(hook.scope, "name", None) or repr(hook.scope)
            slicer.problems.append(
                Problem(
                    hook.label,
                    f"it is registered for {name!r} alone; the module's registry "
                    "serves every client, so register it without a scope",
                )
            )
            continue
        expr = slicer.name_for(hook.fn, hook.label)
        if expr is not None:
            lines.append(f"{SEAMS[hook.seam]}({expr})")
            count += 1
    chosen = sorted(slicer.chosen, key=lambda s: s.order)
    _check_names(slicer, chosen)
    if slicer.problems:
        return Export(None, _unique(slicer.problems))
    text = _render(slicer, chosen, tools, lines, rows, default_timeout_ms)
    if max_result_rows != DEFAULT_MAX_RESULT_ROWS:
        at = text.index("\n", text.index("registry = _dsh.ToolRegistry(")) + 1
        rows_line = f"registry.max_result_rows = {int(max_result_rows)!r}\n"
        text = text[:at] + rows_line + text[at:]
    secrets = _secret_literals(chosen, text)
    if secrets:
        return Export(None, secrets)
    leftover = _unbound(text)
    if leftover:
        problems = [
            Problem("the module", f"it would read {name!r}, which nothing binds")
            for name in sorted(leftover)
        ]
        return Export(None, tuple(problems))
    return Export(text, (), tuple(t.name for t in tools), count, len(rows))


def _secret_literals(chosen: list[Statement], text: str) -> tuple[Problem, ...]:
    """A registered secret (an API key, a token) the module would hold.

    The module is a file others read and commit: a key written in a cell
    must not be copied into it. Each statement that holds one is named;
    anything else that would (a policy row, a description) is the module.
    """
    from dsh_nb.tools.audit.secrets import has_secrets, redact

    if not has_secrets() or redact(text) == text:
        return ()
    fix = (
        "it holds a registered secret (an API key or a token) as a literal; "
        "read it from the environment instead, e.g. os.environ['API_KEY']"
    )
    found = [
        Problem(statement.where, fix)
        for statement in chosen
        if redact(statement.text()) != statement.text()
    ]
    return tuple(found) or (Problem("the module", fix),)


def _tool_expr(item: ToolSource, expr: str) -> str:
    options = []
    if item.build and item.name != expr:
        options.append(f"name={item.name!r}")
    if item.description is not None:
        options.append(f"description={item.description!r}")
    if item.timeout_ms is not None:
        options.append(f"timeout_ms={item.timeout_ms!r}")
    if item.build:
        if item.coerce:
            options.append("coerce=True")
        if not options:
            return f"_dsh.tool({expr})"
        return f"_dsh.tool({', '.join(options)})({expr})"
    if options:
        return f"_replace({expr}, {', '.join(options)})"
    return expr


def _check_names(slicer: Slicer, chosen: list[Statement]) -> None:
    for name in _GENERATED:
        for statement in chosen:
            if name in statement.binds:
                slicer.problems.append(
                    Problem(
                        f"{name!r} ({statement.where})",
                        "the module defines this name itself; rename it in "
                        "the notebook",
                    )
                )
    for name, owner in slicer.owner.items():
        last = [s for s in chosen if name in s.binds][-1]
        if last is not owner:
            slicer.problems.append(
                Problem(
                    f"{name!r}",
                    f"{owner.where} defines what is exported, but {last.where} "
                    "binds the name again; give one of them another name",
                )
            )


def _render(
    slicer: Slicer,
    chosen: list[Statement],
    tools: Sequence[ToolSource],
    registrations: list[str],
    rows: Mapping[str, object],
    default_timeout_ms: float | None,
) -> str:
    noun = "tool" if len(tools) == 1 else "tools"
    out = [
        '"""Tools exported from a notebook with ``%tools export``.',
        "",
        f"``registry`` holds {len(tools)} {noun}, the policy table and the",
        "listeners and guards of the notebook. Serve it with",
        "``python -m dsh_nb serve`` and this file, or import ``registry``. An",
        "``Ask`` goes to ``registry.approval``, which a server sets; with none",
        "set, the call is denied with the ask's reason.",
        '"""',
        "",
    ]
    futures = sorted(
        {
            alias.name
            for s in slicer.statements
            if isinstance(s.node, ast.ImportFrom) and s.node.module == "__future__"
            for alias in s.node.names
        }
    )
    if futures:
        out += [f"from __future__ import {', '.join(futures)}", ""]
    out.append("import dsh_nb.tools as _dsh")
    if any(not t.build and (t.description or t.timeout_ms) for t in tools):
        out.append("from dataclasses import replace as _replace")
    out += sorted(set(slicer.extra_imports.values()))
    cell: Cell | None = None
    previous: Statement | None = None
    for statement in chosen:
        if _is_future(statement):
            continue
        if statement.cell is not cell:
            cell = statement.cell
            out += ["", "", f"# {cell.label}"]
        elif previous is not None:
            out += [""] * _gap(previous, statement)
        out.append(_statement_text(slicer, statement))
        previous = statement
    out += ["", "", 'registry = _dsh.ToolRegistry(sync_tools="thread")']
    if default_timeout_ms is not None:
        out.append(
            f"_dsh.TimeoutPolicy(default_timeout_ms={default_timeout_ms!r})"
            ".install(registry)"
        )
    else:
        out.append("_dsh.TimeoutPolicy().install(registry)")
    if rows:
        out += ["", "", "# the notebook's %tool_policy rows", "_POLICY = {"]
        for name, decision in rows.items():
            out.append(f"    {name!r}: {_decision(decision)},")
        out += [
            "}",
            "",
            "",
            "def _tool_policy(execution, next):",
            '    """Deny, ask or allow a tool by its row; others go on."""',
            "    decision = _POLICY.get(execution.name)",
            "    return next() if decision is None else decision",
        ]
    out += ["", "", *registrations]
    return "\n".join(out) + "\n"


def _statement_text(slicer: Slicer, statement: Statement) -> str:
    names = slicer.chosen.get(statement)
    node = statement.node
    if names is not None and isinstance(node, ast.Import | ast.ImportFrom):
        kept = [a for a in node.names if (a.asname or a.name.split(".")[0]) in names]
        if len(kept) < len(node.names):
            copy: ast.Import | ast.ImportFrom
            if isinstance(node, ast.Import):
                copy = ast.Import(names=kept)
            else:
                copy = ast.ImportFrom(module=node.module, names=kept, level=node.level)
            return ast.unparse(copy)
    return statement.text(slicer.dropped_decorators(statement))


def _gap(previous: Statement, statement: Statement) -> int:
    """Blank lines between two statements of a cell: two around a def."""
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    if isinstance(previous.node, scopes) or isinstance(statement.node, scopes):
        return 2
    end = previous.node.end_lineno or previous.node.lineno
    between = statement.lines[end : statement.first_line - 1]
    return 1 if any(not line.strip() for line in between) else 0


def _is_future(statement: Statement) -> bool:
    node = statement.node
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _decision(decision: object) -> str:
    kind = type(decision).__name__
    reason = getattr(decision, "reason", None)
    if kind not in ("Allow", "Ask", "Deny"):
        raise TypeError(f"a policy row must be Allow, Ask or Deny, not {decision!r}")
    if kind == "Allow" or (kind == "Ask" and reason is None):
        return f"_dsh.{kind}()"
    return f"_dsh.{kind}({reason!r})"


def _unbound(text: str) -> set[str]:
    """Names the module reads that it never binds (a last check)."""
    needs = needs_of(text)
    return set(needs.now | needs.later) - BUILTINS - MODULE_NAMES


def _unique(problems: list[Problem]) -> tuple[Problem, ...]:
    return tuple(dict.fromkeys(problems))
