"""jsonschema, imported without compiling a grammar no check of ours uses.

jsonschema's format module imports ``rfc3987_syntax`` when it is installed,
and every JupyterLab environment has it (jupyter-events requires
``jsonschema[format-nongpl]``). That module builds an Earley parser for the
IRI grammar as it is imported: measured here, ``import jsonschema`` takes
2.9 s with it and 0.21 s without. dsh_nb checks no ``format``, so the first
``connect_mcp`` or raw-schema tool in a kernel paid almost 3 s for nothing.

While jsonschema is imported, ``rfc3987_syntax`` is a stand-in whose
``is_valid_syntax`` imports the real module on its first call, so a user's
``FormatChecker`` still checks ``iri`` and ``iri-reference`` (then paying the
grammar's cost once). Afterwards the stand-in leaves ``sys.modules``: any
later ``import rfc3987_syntax`` gets the real module.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any, Final

__all__ = ["load_jsonschema"]

_GRAMMAR: Final = "rfc3987_syntax"
_lock = threading.Lock()


def _is_valid_syntax_later(term: str, value: str) -> Any:
    """The real ``is_valid_syntax``, imported on the first format check."""
    real = importlib.import_module(_GRAMMAR)
    return real.is_valid_syntax(term, value)


def load_jsonschema() -> Any:
    """The ``jsonschema`` module, imported (once) as the module docstring says."""
    loaded = sys.modules.get("jsonschema")
    if loaded is not None:
        return loaded
    with _lock:
        loaded = sys.modules.get("jsonschema")  # another thread got here first
        if loaded is not None:
            return loaded
        if _GRAMMAR in sys.modules or importlib.util.find_spec(_GRAMMAR) is None:
            import jsonschema

            return jsonschema
        stand_in = types.ModuleType(_GRAMMAR, "imported on first use by dsh_nb")
        stand_in.is_valid_syntax = _is_valid_syntax_later  # type: ignore[attr-defined]
        sys.modules[_GRAMMAR] = stand_in
        try:
            import jsonschema
        finally:
            if sys.modules.get(_GRAMMAR) is stand_in:
                del sys.modules[_GRAMMAR]
        return jsonschema
