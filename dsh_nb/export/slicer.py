"""Pick the statements a set of objects needs, cell by cell.

A program slice: start from the objects to export (tools, listeners, guards),
find the statement that made each one, then, transitively, the statements
binding every global name those statements read. Functions are found where
their code says they were defined (the cell text and line), everything else
by the latest statement binding the name it is known by. What cannot be
found, or must not be copied (a closure, a lambda, IPython's own names, the
kernel's registry), becomes a :class:`Problem` naming the object and why.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import sys
import types
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from dsh_nb.export.cells import Cell, Statement, needs_of, statements_of
from dsh_nb.tools.origin import origin_of

__all__ = ["BUILTINS", "MODULE_NAMES", "Problem", "Slicer"]

# IPython puts these in a kernel's builtins or namespace; a module has none.
_NOTEBOOK_NAMES: Final = {
    "get_ipython": "IPython's get_ipython (a magic or a shell command)",
    "display": "IPython's display",
    "In": "the notebook's input history",
    "Out": "the notebook's output history",
    "exit": "IPython's exit",
    "quit": "IPython's quit",
}
MODULE_NAMES: Final = frozenset(
    {"__name__", "__doc__", "__file__", "__spec__", "__loader__", "__builtins__"}
)
BUILTINS: Final = (
    frozenset(dir(builtins)) - frozenset(_NOTEBOOK_NAMES) - {"__IPYTHON__"}
)


@dataclass(frozen=True, slots=True)
class Problem:
    """Something that cannot be exported, and why."""

    subject: str
    reason: str


class Slicer:
    """Collect the statements some objects need; note what is missing."""

    def __init__(
        self,
        cells: Sequence[Cell],
        namespace: Mapping[str, Any],
        *,
        drop_decorators: Collection[object] = (),
        notebook_only: Mapping[int, str] | None = None,
    ) -> None:
        self.statements = statements_of(cells)
        self.namespace = namespace
        self._drop = [obj for obj in drop_decorators]
        self._notebook_only = dict(notebook_only or {})
        self._binders: dict[str, list[Statement]] = {}
        for statement in self.statements:
            for name in statement.binds:
                self._binders.setdefault(name, []).append(statement)
        self.chosen: dict[Statement, set[str] | None] = {}
        self.extra_imports: dict[str, str] = {}  # name -> import line
        self.problems: list[Problem] = []
        # The statement each referenced name must come from (see writer).
        self.owner: dict[str, Statement] = {}
        self._seen: set[tuple[int, str]] = set()

    # --- objects ---------------------------------------------------------------

    def name_for(self, obj: object, subject: str) -> str | None:
        """The module-level expression for ``obj``, its statements taken.

        None (with a problem noted) when it cannot be rebuilt.
        """
        if isinstance(obj, types.MethodType):
            owner = self.name_for(obj.__self__, subject)
            return None if owner is None else f"{owner}.{obj.__func__.__name__}"
        fn = _unwrapped(origin_of(obj) or obj)
        made_in: Statement | None = None
        if isinstance(fn, types.FunctionType):
            problem = _nested(fn)
            if problem is not None:
                self.problems.append(Problem(subject, problem))
                return None
            made_in = self._defining(fn)
            name = None if made_in is None else self._bound_name(obj, made_in)
            if made_in is not None and name is not None:
                self._take(made_in, {name}, subject)
                self.owner[name] = made_in
                return name
        names = [k for k, v in self.namespace.items() if v is obj and k.isidentifier()]
        for name in sorted(names, key=lambda n: (n.startswith("_"), n)):
            found = self._find(name, None)
            if found is not None:
                self._take(found, {name}, subject)
                self.owner[name] = found
                return name
        if made_in is not None:
            reason = (
                f"it is made in {made_in.where} but bound to no name; bind it to a name"
            )
            self.problems.append(Problem(subject, reason))
            return None
        importable = _import_line(obj)
        if importable is not None:
            name, line = importable
            self.extra_imports[name] = line
            return name
        self.problems.append(Problem(subject, _unfound(obj, names)))
        return None

    def _defining(self, fn: types.FunctionType) -> Statement | None:
        """The statement of a cell whose code holds ``fn``'s definition."""
        code = fn.__code__
        lines = linecache.getlines(code.co_filename)
        if not lines:
            return None
        text = "".join(lines).splitlines()
        for statement in reversed(self.statements):
            if (
                list(statement.lines) == text
                and statement.spans(code.co_firstlineno)
                and fn.__name__ in statement.binds | {"<lambda>"}
            ):
                return statement
        for statement in reversed(self.statements):  # e.g. x = define_tool(...)
            if list(statement.lines) == text and statement.spans(code.co_firstlineno):
                return statement
        return None

    def _bound_name(self, obj: object, statement: Statement) -> str | None:
        for name in sorted(statement.binds):
            if self.namespace.get(name) is obj:
                return name
        own = getattr(_unwrapped(obj), "__name__", None)
        return own if isinstance(own, str) and own in statement.binds else None

    # --- names -----------------------------------------------------------------

    def need(self, names: Collection[str], before: int | None, subject: str) -> None:
        """Take the statements binding ``names`` (bound before ``before``)."""
        for name in sorted(names):
            self._take_name(name, before, subject)

    def _find(self, name: str, before: int | None) -> Statement | None:
        """The statement whose binding of ``name`` is in force (at ``before``)."""
        if before is None:
            fn = _unwrapped(self.namespace.get(name, _MISSING))
            if isinstance(fn, types.FunctionType):
                statement = self._defining(fn)
                if statement is not None and name in statement.binds:
                    return statement
        binders = self._binders.get(name, ())
        for statement in reversed(binders):
            if before is None or statement.order < before:
                return statement
        return None

    def _find_before(self, name: str, before: int) -> Statement | None:
        for statement in reversed(self._binders.get(name, ())):
            if statement.order < before:
                return statement
        return None

    def _take_name(self, name: str, before: int | None, subject: str) -> None:
        key = (-1 if before is None else before, name)
        if key in self._seen:
            return
        self._seen.add(key)
        statement = self._find(name, before)
        if statement is not None:
            self._take(statement, {name}, subject)
            return
        value = self.namespace.get(name, _MISSING)
        if name in MODULE_NAMES or (name in BUILTINS and value is _MISSING):
            return
        importable = None if value is _MISSING else _import_line(value, name)
        if importable is not None:
            self.extra_imports[name] = importable[1]
            return
        if name in _NOTEBOOK_NAMES:
            reason = f"it uses {name!r}, {_NOTEBOOK_NAMES[name]}, which a module lacks"
        elif value is _MISSING:
            reason = f"it uses {name!r}, which no cell defines"
        else:
            reason = (
                f"it uses the notebook variable {name!r}, which no cell assigns "
                "at its top level (set by a function, a loop, exec or %store?)"
            )
        self.problems.append(Problem(subject, reason))

    def _take(self, statement: Statement, names: set[str], subject: str) -> None:
        """Choose ``statement`` (for ``names``, if an import) and its needs."""
        if isinstance(statement.node, ast.Import | ast.ImportFrom):
            taken = self.chosen.get(statement, set())
            assert taken is not None
            if names <= taken:
                return
            self.chosen[statement] = taken | names
            return
        if statement in self.chosen:
            return
        self.chosen[statement] = None
        drop = self.dropped_decorators(statement)
        text = statement.text(drop)
        self._check_forbidden(statement, drop, subject)
        if _awaits_at_top(statement.node):
            self.problems.append(
                Problem(
                    subject,
                    f"{statement.where} awaits at its top level, which a module "
                    "cannot; move the await into a function",
                )
            )
        needs = needs_of(text)
        self.need(needs.now, statement.order, f"{subject} ({statement.where})")
        self.need(needs.later, None, f"{subject} ({statement.where})")
        for name in needs.rebinds:  # x = x + 1: the earlier x, if any
            earlier = [
                s for s in self._binders.get(name, ()) if s.order < statement.order
            ]
            if earlier:
                self._take(earlier[-1], {name}, subject)

    def dropped_decorators(self, statement: Statement) -> list[ast.expr]:
        """The decorators of ``statement`` that only a kernel has."""
        decorators = getattr(statement.node, "decorator_list", None) or ()
        out = []
        for decorator in decorators:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            value = self._resolve(target)
            if any(value is d for d in self._drop):
                out.append(decorator)
        return out

    def _check_forbidden(
        self, statement: Statement, drop: list[ast.expr], subject: str
    ) -> None:
        skip = {id(n) for d in drop for n in ast.walk(d)}
        for node in ast.walk(statement.node):
            if id(node) in skip or not isinstance(node, ast.Name | ast.Attribute):
                continue
            value = self._resolve(node)
            reason = (
                self._notebook_only.get(id(value)) if value is not _MISSING else None
            )
            if reason is not None:
                self.problems.append(
                    Problem(subject, f"{statement.where} uses {reason}")
                )
                return

    def _resolve(self, node: ast.expr) -> object:
        """What a dotted name means in the notebook (modules only)."""
        if isinstance(node, ast.Name):
            return self.namespace.get(node.id, _MISSING)
        if isinstance(node, ast.Attribute):
            base = self._resolve(node.value)
            if isinstance(base, types.ModuleType):
                return getattr(base, node.attr, _MISSING)
        return _MISSING


_MISSING: Final[Any] = object()


def _unwrapped(obj: object) -> object:
    try:
        return inspect.unwrap(obj) if callable(obj) else obj
    except ValueError:  # a __wrapped__ cycle
        return obj


def _nested(fn: types.FunctionType) -> str | None:
    if "<locals>" in fn.__qualname__ or fn.__code__.co_freevars:
        outer = fn.__qualname__.split(".<locals>")[0]
        return (
            f"it is defined inside {outer}() and keeps that call's variables "
            "(a closure); define it at the top level of a cell"
        )
    return None


def _awaits_at_top(node: ast.stmt) -> bool:
    for sub in _top_scope(node):
        if isinstance(sub, ast.Await | ast.AsyncFor | ast.AsyncWith):
            return True
    return False


def _top_scope(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef | ast.Lambda):
        return []
    out: list[ast.AST] = [node]
    for child in ast.iter_child_nodes(node):
        out.extend(_top_scope(child))
    return out


def _import_line(obj: object, name: str | None = None) -> tuple[str, str] | None:
    """``(name, "from m import q as name")`` for an object a module exports."""
    if isinstance(obj, types.ModuleType):
        dotted = obj.__name__
        if dotted == "__main__" or dotted not in sys.modules:
            return None
        alias = name or dotted.split(".")[-1]
        if alias == dotted:
            return alias, f"import {dotted}"
        return alias, f"import {dotted} as {alias}"
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if (
        not isinstance(module, str)
        or not isinstance(qualname, str)
        or module == "__main__"
        or "." in qualname
        or "<" in qualname
    ):
        return None
    owner = sys.modules.get(module)
    if owner is None or getattr(owner, qualname, None) is not obj:
        return None
    alias = name or qualname
    suffix = "" if alias == qualname else f" as {alias}"
    return alias, f"from {module} import {qualname}{suffix}"


def _unfound(obj: object, names: list[str]) -> str:
    if names:
        return (
            f"no cell binds {names[0]!r} where it can be copied from "
            "(made by exec, a loop or a function?)"
        )
    kind = type(obj).__name__
    return f"this {kind} is bound to no notebook variable; bind it to a name"
