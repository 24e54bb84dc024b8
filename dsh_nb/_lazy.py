"""A package face whose names are imported on first use (PEP 562).

``dsh_nb`` and ``dsh_nb.mcp`` list their public names with the module each
comes from; :func:`lazy_face` turns that table into the module's
``__getattr__`` and ``__dir__``, so importing the package costs nothing
until a name is used. This module imports nothing of dsh_nb, and no
Jupyter.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["lazy_face"]


def lazy_face(
    package: str,
    table: Mapping[str, str],
    *,
    home: bool = False,
    fallback: str | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Build a package's ``__getattr__`` and ``__dir__`` from ``{name: module}``.

    Parameters
    ----------
    package
        The package's ``__name__``; found names are cached in its globals.
    table
        Each public name and the module that defines it.
    home
        Make ``package`` the ``__module__`` of the classes and functions
        in ``table`` (as httpx does), so a repr, ``help()`` and pickle name
        the import users write, not the private file behind it.
    fallback
        A module whose ``__all__`` names also resolve, though they are not
        the package's own (kept out of ``__dir__`` and ``__all__``).

    Returns
    -------
    tuple
        ``(__getattr__, __dir__)``, to assign at the package's top level.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
            if home:
                _rehome(value, package, _Public(table))
        elif _is_submodule(package, name):
            value = importlib.import_module(f"{package}.{name}")
        elif (
            fallback is not None
            and not name.startswith("_")
            and name in _names(fallback)
        ):
            value = getattr(importlib.import_module(fallback), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        vars(sys.modules[package])[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return __getattr__, __dir__


def _rehome(value: object, package: str, public: Mapping[str, Any]) -> None:
    """Make ``package`` the ``__module__`` of a class or function of its own.

    A class's string annotations are read in the globals of the module its
    ``__module__`` names: they are resolved first, where they were written,
    so ``typing.get_type_hints`` and pydantic still read them. A class whose
    annotations cannot be resolved (with the names of the package's
    modules at hand, for those its module imports only for type checking)
    keeps its module.
    """
    if not isinstance(value, type | types.FunctionType):
        return  # a type alias, a sentinel: they keep their own
    if not value.__module__.startswith(f"{package}."):
        return
    if isinstance(value, type):
        try:
            own = inspect.get_annotations(value, locals=public, eval_str=True)
        except Exception:  # noqa: BLE001 - unresolvable: leave it where it is
            return
        value.__annotations__ = own
        for field in getattr(value, "__dataclass_fields__", {}).values():
            if field.name in own:
                field.type = own[field.name]
    value.__module__ = package


class _Public(Mapping[str, Any]):
    """A face's names, and those its modules export, as a mapping.

    A name of the table is imported when it is looked up; any other is
    taken from the ``__all__`` of a module of the table already imported.
    """

    def __init__(self, table: Mapping[str, str]) -> None:
        self._table = table

    def __getitem__(self, name: str) -> Any:
        if name in self._table:
            return getattr(importlib.import_module(self._table[name]), name)
        for module in dict.fromkeys(self._table.values()):
            loaded = sys.modules.get(module)
            if loaded is not None and name in getattr(loaded, "__all__", ()):
                return getattr(loaded, name)
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


def _is_submodule(package: str, name: str) -> bool:
    if name.startswith("_"):  # dunders, and what a package keeps private
        return False
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except (ImportError, ValueError):
        return False


def _names(module: str) -> tuple[str, ...]:
    return tuple(getattr(importlib.import_module(module), "__all__", ()))
