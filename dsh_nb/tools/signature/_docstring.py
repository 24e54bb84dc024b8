"""Read tool and parameter descriptions from docstrings, through griffe.

Split out of ``signature.py`` because docstring parsing is its own grammar,
independent of type hints. griffe reads Google, NumPy and Sphinx styles (it
detects which), so a data scientist's existing docstrings describe their
tool's parameters as they are. griffe is imported on first use: the summary
line needs no parser, and ``%load_ext dsh_nb`` must not pay for one.
"""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any, Final

__all__ = [
    "docstring_of",
    "docstring_summary",
    "param_docs",
    "target_of",
    "with_section_breaks",
]

_OPTIONS: Final = {"warnings": False, "warn_unknown_params": False}
_HEADER: Final = re.compile(
    r"\s*(?:(?:args|arguments|parameters|params|attributes|keyword args|returns"
    r"|raises|yields|examples|notes)\s*:\s*|:\w[^:]*:.*)\Z",
    re.IGNORECASE,
)
_RULE: Final = re.compile(r"\s*-{3,}\s*\Z")
# A Google section title alone on an unindented line (griffe's names).
_GOOGLE_TITLE: Final = re.compile(
    r"(?:(?:other |type |keyword )?(?:args|arguments|params|parameters)|raises"
    r"|exceptions|returns|yields|receives|examples|attributes|functions|methods"
    r"|classes|type aliases|modules|warns|warnings)\s*:\s*\Z",
    re.IGNORECASE,
)


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
    """Return the docstring's first paragraph on one line ('' when none).

    A section header (``Args:``, ``:param x:``, a NumPy rule) ends the
    paragraph even without a blank line before it.
    """
    lines = docstring_of(target_of(func)).splitlines()
    para: list[str] = []
    for i, line in enumerate(lines):
        header = _HEADER.match(line) is not None or (
            i + 1 < len(lines) and _RULE.match(lines[i + 1]) is not None
        )
        if header or not line.strip():
            if para or header:
                break
            continue
        para.append(line)
    return " ".join(" ".join(para).split())


def with_section_breaks(doc: str) -> str:
    """Return ``doc`` with a blank line above each section that lacks one.

    griffe reads a Google ``Args:`` (or a NumPy ``Parameters`` over its
    rule) as a section only after a blank line, and people often write it
    straight under the summary; openai-agents adds the line too.
    """
    lines = doc.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        below = lines[i + 1] if i + 1 < len(lines) else ""
        title = not line[:1].isspace() and (
            (_GOOGLE_TITLE.match(line) is not None and below[:1].isspace())
            or (line.strip() != "" and _RULE.match(below) is not None)
        )
        if title and out and out[-1].strip():
            out.append("")
        out.append(line)
    return "\n".join(out)


def param_docs(doc: str) -> dict[str, str]:
    """Map parameter name → description, from any docstring style.

    Descriptions are joined onto one line. ``*args``/``**kwargs`` entries
    lose their stars. A docstring griffe cannot read gives no descriptions
    rather than an error: a tool must not fail to define over prose.
    """
    if not doc.strip():
        return {}
    import griffe

    doc = with_section_breaks(doc)

    options: Any = {style: _OPTIONS for style in ("google", "numpy", "sphinx")}
    try:
        sections = griffe.parse_auto(
            griffe.Docstring(doc, lineno=1), per_style_options=options
        )
    except Exception:  # noqa: BLE001 - prose never fails a definition
        return {}
    out: dict[str, str] = {}
    for section in sections:
        if section.kind.value not in ("parameters", "other parameters", "attributes"):
            continue
        for item in section.value:
            text = " ".join(str(item.description or "").split())
            name = str(item.name).lstrip("*")
            if text and name not in out:
                out[name] = text
    return out
