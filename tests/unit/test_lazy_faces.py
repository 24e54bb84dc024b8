"""Every lazy package face agrees with itself: one table, one typed view.

A face (``dsh_nb``, ``dsh_nb.tools``, ``dsh_nb.cards``...) lists each public
name once, in the table it hands :func:`dsh_nb._lazy.lazy_face`, and builds
``__all__`` from it; its ``TYPE_CHECKING`` imports are the same names as type
checkers see them. This reads each face's source and holds the two
together: a name added to one and not the other, or resolving to another
object than the typed import says, fails here.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import dsh_nb

ROOT = Path(dsh_nb.__file__).parent
FACES = sorted(
    ".".join(("dsh_nb", *path.parent.relative_to(ROOT).parts))
    for path in ROOT.rglob("__init__.py")
    if "lazy_face(" in path.read_text(encoding="utf-8")
)


def typed_names(package: str) -> dict[str, str]:
    """``{name: module}`` of the face's ``if TYPE_CHECKING:`` imports."""
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module:
                for alias in stmt.names:
                    out[alias.asname or alias.name] = stmt.module
    return out


ROOMS = sorted(f"dsh_nb.{path.parent.name}" for path in ROOT.glob("*/__init__.py"))


def test_every_room_has_the_same_kind_of_face() -> None:
    assert {"dsh_nb.tools", "dsh_nb.cards", "dsh_nb.evals", "dsh_nb.export"} <= set(
        ROOMS
    )
    assert set(FACES) == {"dsh_nb", *ROOMS}


@pytest.mark.parametrize("package", FACES)
def test_each_name_is_written_in_one_list(package: str) -> None:
    face = importlib.import_module(package)
    assert face.__getattr__.__module__ == "dsh_nb._lazy"
    assert face.__all__ == list(face._PUBLIC)
    # ``__all__`` is built from the table, never written out beside it.
    tree = ast.parse(Path(face.__file__ or "").read_text(encoding="utf-8"))
    assigned = [
        ast.unparse(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    assert assigned == ["list(_PUBLIC)"]
    # The table and the typed imports name the same module for each name.
    typed = typed_names(package)
    assert {n: typed.get(n) for n in face._PUBLIC} == dict(face._PUBLIC)


@pytest.mark.parametrize("package", FACES)
def test_the_typed_view_is_the_table(package: str) -> None:
    face = importlib.import_module(package)
    typed = typed_names(package)
    public = list(face.__all__)
    assert len(public) == len(set(public)), "a name listed twice"
    # dsh_nb's face also answers the notebook's helpers, not in __all__.
    assert set(public) == set(typed) - {"_jupyter_labextension_paths"}


@pytest.mark.parametrize("package", FACES)
def test_each_name_resolves_to_the_typed_object(package: str) -> None:
    face = importlib.import_module(package)
    for name, module in typed_names(package).items():
        if name not in face.__all__:
            continue
        expected = getattr(importlib.import_module(module), name)
        got = getattr(face, name)
        # Another test may have reloaded the defining module after the face
        # cached it: the same definition, then, by module and qualname.
        same = got is expected or (
            getattr(got, "__module__", None) == module
            and getattr(got, "__qualname__", None)
            == getattr(expected, "__qualname__", object())
        )
        assert same, (package, name, module)
        assert name in dir(face)


def test_the_runner_is_public_in_tools() -> None:
    import dsh_nb.tools as tools
    from dsh_nb.tools import runner

    for name in ("CallRunner", "DoorCall", "CallView", "CallAnswer"):
        assert name in tools.__all__
        assert getattr(tools, name) is getattr(runner, name)
