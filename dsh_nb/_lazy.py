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
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_face"]


def lazy_face(
    package: str,
    table: Mapping[str, str],
    *,
    fallback: str | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Build a package's ``__getattr__`` and ``__dir__`` from ``{name: module}``.

    Parameters
    ----------
    package
        The package's ``__name__``; found names are cached in its globals.
    table
        Each public name and the module that defines it.
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


def _is_submodule(package: str, name: str) -> bool:
    if name.startswith("_"):  # dunders, and what a package keeps private
        return False
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except (ImportError, ValueError):
        return False


def _names(module: str) -> tuple[str, ...]:
    return tuple(getattr(importlib.import_module(module), "__all__", ()))
