"""Notebook cells as statements: what each binds, needs and says.

A cell is the Python its kernel ran (magic lines already rewritten). Each
top-level statement is indexed by the module-level names it binds, and read
back as its author wrote it (decorators and the comment lines just above
included). What a statement *needs* is found with :mod:`symtable` on that
text: names it reads at once (the top level, decorators, defaults, class
bodies) must be bound before it; names read inside a function body are
looked up when it is called, so the binding in force at the end counts.
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Cell", "Needs", "Statement", "needs_of", "statements_of"]

_FUNCTION_KINDS: Final = ("function", "lambda")


@dataclass(frozen=True, slots=True)
class Cell:
    """One executed cell: its place in execution order and its code."""

    number: int
    code: str

    @property
    def label(self) -> str:
        """How a person finds it: the kernel's execution count."""
        return f"cell [{self.number}]"


@dataclass(frozen=True, slots=True, eq=False)
class Statement:
    """One top-level statement of a cell (hashed by identity)."""

    cell: Cell
    order: int  # position among every statement of every cell
    node: ast.stmt
    binds: frozenset[str]
    lines: tuple[str, ...] = field(repr=False)

    @property
    def first_line(self) -> int:
        """The statement's first line, counting its decorators."""
        decorators: list[ast.expr] = getattr(self.node, "decorator_list", None) or []
        return min([self.node.lineno, *(d.lineno for d in decorators)])

    def spans(self, line: int) -> bool:
        """Whether ``line`` (1-based, in the cell) is part of this statement."""
        end = self.node.end_lineno or self.node.lineno
        return self.first_line <= line <= end

    @property
    def where(self) -> str:
        """``cell [3] line 2``, for messages."""
        return f"{self.cell.label} line {self.first_line}"

    def text(self, drop: Sequence[ast.expr] = ()) -> str:
        """The statement as written, without the decorators in ``drop``."""
        node = self.node
        end = node.end_lineno or node.lineno
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            skip: set[int] = set()
            for decorator in drop:
                skip.update(range(decorator.lineno, (decorator.end_lineno or 0) + 1))
            body = [
                self.lines[i - 1]
                for i in range(self.first_line, end + 1)
                if i not in skip
            ]
            text = "\n".join(body)
        else:
            text = ast.get_source_segment("\n".join(self.lines), node) or ""
        return "\n".join([*self._comments(), text])

    def _comments(self) -> list[str]:
        """The comment lines right above the statement (when it starts a line)."""
        first = self.first_line
        if self.lines[first - 1][: self.node.col_offset].strip():
            return []
        found: list[str] = []
        line = first - 1
        while line >= 1 and self.lines[line - 1].lstrip().startswith("#"):
            found.insert(0, self.lines[line - 1].rstrip())
            line -= 1
        return found


def statements_of(cells: Sequence[Cell]) -> list[Statement]:
    """Every top-level statement of the cells that parse, in order."""
    out: list[Statement] = []
    for cell in cells:
        try:
            tree = ast.parse(cell.code)
        except (SyntaxError, ValueError):
            continue  # it never ran as written: it binds nothing we can copy
        lines = tuple(cell.code.splitlines())
        for node in tree.body:
            out.append(
                Statement(
                    cell=cell,
                    order=len(out),
                    node=node,
                    binds=frozenset(_bound(node)),
                    lines=lines,
                )
            )
    return out


def _bound(node: ast.stmt) -> Iterator[str]:
    """Module-level names a statement binds when it runs."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
        return
    if isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            if alias.name != "*":
                yield alias.asname or alias.name.split(".")[0]
        return
    for sub in _same_scope(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store | ast.Del):
            yield sub.id
        elif isinstance(sub, ast.Import | ast.ImportFrom):
            yield from _bound(sub)
        elif isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield sub.name
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            yield sub.name


def _same_scope(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and what it holds, stopping at nested scopes' bodies."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield child  # its name binds here; its body is another scope
        elif isinstance(child, ast.Lambda):
            continue
        else:
            yield from _same_scope(child)


@dataclass(frozen=True, slots=True)
class Needs:
    """The module-level names a piece of code reads."""

    now: frozenset[str]  # read while it runs at the top level
    later: frozenset[str]  # read inside a function body, when called
    rebinds: frozenset[str]  # bound by it and also read by it at the top level


def needs_of(text: str) -> Needs:
    """What ``text`` (module-level code) reads from the module's globals."""
    try:
        table = symtable.symtable(text, "<export>", "exec")
    except SyntaxError:
        return Needs(frozenset(), frozenset(), frozenset())
    now: set[str] = set()
    later: set[str] = set()
    rebinds: set[str] = set()
    for symbol in table.get_symbols():
        if symbol.is_referenced():
            if symbol.is_assigned() or symbol.is_imported():
                rebinds.add(symbol.get_name())
            else:
                now.add(symbol.get_name())
    for node in _same_scope(ast.parse(text)):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            rebinds.add(node.target.id)  # x += 1 reads x, though symtable is mute
    bound = {s.get_name() for s in table.get_symbols() if _binds(s)}
    for child in table.get_children():
        _walk(child, deferred=False, now=now, later=later)
    return Needs(
        now=frozenset(now),
        later=frozenset(later - bound),
        rebinds=frozenset(rebinds),
    )


def _binds(symbol: symtable.Symbol) -> bool:
    return symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()


def _walk(
    table: symtable.SymbolTable, *, deferred: bool, now: set[str], later: set[str]
) -> None:
    deferred = deferred or table.get_type() in _FUNCTION_KINDS
    for symbol in table.get_symbols():
        if symbol.is_referenced() and symbol.is_global():
            (later if deferred else now).add(symbol.get_name())
    for child in table.get_children():
        _walk(child, deferred=deferred, now=now, later=later)
