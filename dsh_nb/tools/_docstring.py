"""Read tool and parameter descriptions from Google or NumPy docstrings.

Split out of ``signature.py`` because docstring parsing is plain text work
with its own section grammar, independent of type hints. Import
:func:`docstring_summary` through :mod:`dsh_nb.tools.signature`, which
re-exports it.
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any, Final

__all__ = ["docstring_of", "docstring_summary", "param_docs", "target_of"]

_GOOGLE: Final = frozenset(
    {"args", "arguments", "parameters", "params", "attributes", "keyword args"}
)
_SECTIONS: Final = _GOOGLE | {"returns", "raises", "yields", "examples", "notes"}
_NUMPY: Final = frozenset({"parameters", "other parameters", "attributes"})
_RULE: Final = re.compile(r"-{3,}")
_GOOGLE_ENTRY: Final = re.compile(r"\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:(.*)")
_NUMPY_ENTRY: Final = re.compile(r"(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_header(lines: list[str], i: int) -> bool:
    """Whether line ``i`` opens a Google or NumPy section."""
    text = lines[i].strip()
    if i + 1 < len(lines) and _RULE.fullmatch(lines[i + 1].strip()) and text:
        return True
    return text.endswith(":") and text[:-1].strip().lower() in _SECTIONS


def target_of(func: object) -> Any:
    """Return the function whose hints and docstring describe ``func``."""
    while isinstance(func, functools.partial):
        func = func.func
    if inspect.isroutine(func) or inspect.isclass(func) or not callable(func):
        return func
    return type(func).__call__


def docstring_of(obj: object) -> str:
    """Return ``obj``'s docstring, dedented ('' when none)."""
    return inspect.cleandoc(getattr(obj, "__doc__", None) or "")


def docstring_summary(func: object) -> str:
    """Return the docstring's first paragraph on one line ('' when none)."""
    lines = docstring_of(target_of(func)).splitlines()
    para: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip() or _is_header(lines, i):
            if para or _is_header(lines, i):
                break
            continue
        para.append(line)
    return " ".join(" ".join(para).split())


def param_docs(doc: str) -> dict[str, str]:
    """Map parameter name → description from Google or NumPy sections."""
    lines = doc.splitlines()
    out: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        numpy = i + 1 < len(lines) and _RULE.fullmatch(lines[i + 1].strip())
        if numpy and text.lower() in _NUMPY:
            i = _numpy_section(lines, i + 2, _indent(lines[i]), out)
        elif text.endswith(":") and text[:-1].strip().lower() in _GOOGLE:
            i = _google_section(lines, i + 1, _indent(lines[i]), out)
        else:
            i += 1
    return {name: " ".join(" ".join(parts).split()) for name, parts in out.items()}


def _google_section(
    lines: list[str], i: int, header: int, out: dict[str, list[str]]
) -> int:
    entry_indent: int | None = None
    current: list[str] | None = None
    while i < len(lines):
        line = lines[i]
        if line.strip():
            indent = _indent(line)
            if indent <= header:
                break
            if entry_indent is None:
                entry_indent = indent
            match = _GOOGLE_ENTRY.fullmatch(line.strip())
            if indent <= entry_indent and match:
                current = out.setdefault(match.group(1), [])
                current.append(match.group(2))
            elif current is not None:
                current.append(line)
        i += 1
    return i


def _numpy_section(
    lines: list[str], i: int, header: int, out: dict[str, list[str]]
) -> int:
    current: list[list[str]] = []
    while i < len(lines):
        line = lines[i]
        if line.strip():
            if _is_header(lines, i) and _indent(line) <= header:
                break
            match = _NUMPY_ENTRY.fullmatch(line.strip())
            if _indent(line) <= header and match:
                names = [n.strip().lstrip("*") for n in match.group(1).split(",")]
                current = [out.setdefault(n, []) for n in names]
            else:
                for parts in current:
                    parts.append(line)
        i += 1
    return i
