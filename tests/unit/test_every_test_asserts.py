"""No test asserts nothing: every ``test_*`` function can fail on what it runs.

A test counts when it holds an ``assert``, a ``pytest.raises`` (``warns``,
``fail``), a Playwright ``expect``, or calls a helper that does, defined in
its own file or in a test module it imports (followed transitively). A test
that only runs code and waits for it not to raise is found here: make it
assert the behaviour it exercises.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).parents[1]
CHECKS = {"raises", "warns", "fail", "expect"}

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _called(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _checks_directly(fn: Function) -> bool:
    return any(
        isinstance(n, ast.Assert) or (isinstance(n, ast.Call) and _called(n) in CHECKS)
        for n in ast.walk(fn)
    )


def _functions(tree: ast.AST) -> dict[str, list[Function]]:
    found: dict[str, list[Function]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(node.name, []).append(node)
    return found


class _Suite:
    """Every Python file under tests/, parsed once."""

    def __init__(self) -> None:
        self.trees = {p: ast.parse(p.read_text("utf-8")) for p in TESTS.rglob("*.py")}
        self.modules = {p.stem: p for p in self.trees}
        self.defs = {p: _functions(t) for p, t in self.trees.items()}

    def visible(self, path: Path) -> dict[str, list[Function]]:
        """The helpers a file can call: its own and its imported test modules'."""
        seen = {name: list(fns) for name, fns in self.defs[path].items()}
        for node in ast.walk(self.trees[path]):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                other = self.modules.get(name.rsplit(".", 1)[-1])
                if other is not None and other != path:
                    for helper, fns in self.defs[other].items():
                        seen.setdefault(helper, []).extend(fns)
        return seen

    def tests(self) -> Iterator[tuple[Path, Function]]:
        for path, tree in sorted(self.trees.items()):
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if node.name.startswith("test_"):
                        yield path, node


def _checks(fn: Function, helpers: dict[str, list[Function]], seen: set[int]) -> bool:
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    if _checks_directly(fn):
        return True
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            name = _called(node)
        elif isinstance(node, ast.Name):  # passed along: target=helper
            name = node.id
        else:
            continue
        for helper in helpers.get(name or "", ()):
            if helper is not fn and _checks(helper, helpers, seen):
                return True
    return False


def test_every_test_function_asserts_something() -> None:
    suite = _Suite()
    visible = {path: suite.visible(path) for path in suite.trees}
    silent = []
    for path, fn in suite.tests():
        if not _checks(fn, visible[path], set()):
            silent.append(f"{path.relative_to(TESTS)}:{fn.lineno} {fn.name}")
    assert silent == []


def test_the_scan_finds_a_test_that_asserts_nothing() -> None:
    source = (
        "def helper(x):\n    assert x\n\n"
        "def test_silent():\n    run()\n\n"
        "def test_through_a_helper():\n    helper(1)\n\n"
        "def test_raises():\n    with pytest.raises(ValueError):\n        run()\n"
    )
    tree = ast.parse(source)
    helpers = _functions(tree)
    verdicts = {
        name: _checks(fns[0], helpers, set())
        for name, fns in helpers.items()
        if name.startswith("test_")
    }
    assert verdicts == {
        "test_silent": False,
        "test_through_a_helper": True,
        "test_raises": True,
    }
