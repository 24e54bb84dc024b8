"""Displays for the magics: tables, JSON listings and a tool's model view.

Each object renders ``text/plain`` and escaped ``text/html`` (or
``application/json``) through ``_repr_mimebundle_``, so it reads well in
JupyterLab, in a terminal and in a stored notebook alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dsh_nb.cards.escape import esc
from dsh_nb.tools.jsonvalue import compact_json, format_number, to_plain

__all__ = [
    "NO_TEX",
    "JsonListing",
    "Table",
    "ToolSpec",
    "format_ms",
    "parameters_summary",
]

# JupyterLab typesets "$...$" in HTML outputs; tool text (docstrings,
# names) must stay text, so every listing opts out as the cards do.
NO_TEX = "mathjax_ignore tex2jax_ignore"
_CELL = "padding:2px 8px;text-align:left;vertical-align:top"
_PRE = "margin:0;white-space:pre;overflow-x:auto;user-select:text"


def format_ms(ms: float) -> str:
    """Show a budget as people write it: ``500ms``, ``5s``, ``2m``."""
    if ms >= 60_000 and ms % 60_000 == 0:
        return f"{format_number(ms / 60_000)}m"
    if ms >= 1000:
        return f"{format_number(round(ms / 1000, 3))}s"
    return f"{format_number(ms)}ms"


def parameters_summary(schema: Mapping[str, Any]) -> str:
    """One line per schema: ``query: string*, limit: integer = 10``."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return "(none)"
    required = set(schema.get("required") or ())
    parts = []
    for name, prop in properties.items():
        kind = prop.get("type", "any") if isinstance(prop, Mapping) else "any"
        members = prop.get("anyOf") if isinstance(prop, Mapping) else None
        if kind == "any" and isinstance(members, list):  # a union, e.g. X | None
            kind = [m.get("type", "any") for m in members if isinstance(m, Mapping)]
        if isinstance(kind, list):
            kind = "|".join(str(k) for k in kind)
        text = f"{name}: {kind}{'*' if name in required else ''}"
        if isinstance(prop, Mapping) and "default" in prop:
            text += f" = {compact_json(to_plain(prop['default']))}"
        parts.append(text)
    return ", ".join(parts)


class Table:
    """A titled table of strings, shown as aligned text or an HTML table."""

    __slots__ = ("columns", "empty", "rows", "title")

    def __init__(
        self,
        title: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[str]],
        *,
        empty: str = "(none)",
    ) -> None:
        self.title = title
        self.columns = tuple(columns)
        self.rows = [tuple(r) for r in rows]
        self.empty = empty

    def _plain(self) -> str:
        if not self.rows:
            return f"{self.title}: {self.empty}"
        widths = [
            max(len(c), *(len(r[i]) for r in self.rows))
            for i, c in enumerate(self.columns)
        ]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(
                c.ljust(w) for c, w in zip(cells, widths, strict=True)
            ).rstrip()

        body = [line(self.columns), line(["-" * w for w in widths])]
        body += [line(r) for r in self.rows]
        return "\n".join([self.title, *body])

    def _html(self) -> str:
        if not self.rows:
            return (
                f'<p class="{NO_TEX}"><b>{esc(self.title)}</b>: {esc(self.empty)}</p>'
            )
        head = "".join(f'<th style="{_CELL}">{esc(c)}</th>' for c in self.columns)
        rows = "".join(
            "<tr>"
            + "".join(f'<td style="{_CELL}"><code>{esc(c)}</code></td>' for c in r)
            + "</tr>"
            for r in self.rows
        )
        return (
            f'<table class="dsh-Table {NO_TEX}"><caption style="text-align:left">'
            f"<b>{esc(self.title)}</b></caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, Any]:
        return {"text/plain": self._plain(), "text/html": self._html()}

    def __repr__(self) -> str:
        return self._plain()


class JsonListing(list[Any]):
    """A plain list of JSON values that displays as indented JSON text.

    ``tools = %tools --openai`` binds it; it is a ``list``, so it goes
    straight into a model request. It shows as the JSON itself, ready to
    select and copy, not as ``application/json``: JupyterLab renders that as
    a collapsed tree ("root [] 1 item") that hides what a reader came for.
    """

    __slots__ = ()

    def _text(self) -> str:
        return json.dumps(list(self), indent=2, ensure_ascii=False)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, Any]:
        text = self._text()
        html = f'<pre class="dsh-JsonListing {NO_TEX}" style="{_PRE}">{esc(text)}</pre>'
        return {"text/plain": text, "text/html": html}

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # IPython's list printer would win over the bundle's text/plain.
        printer.text(self._text())


class ToolSpec:
    """What the model sees of one tool: name, description, JSON Schema."""

    __slots__ = ("description", "name", "notes", "parameters")

    def __init__(
        self,
        *,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        notes: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.description = description
        self.parameters = to_plain(parameters)
        self.notes = tuple(notes)

    def _schema(self) -> str:
        return json.dumps(self.parameters, indent=2, ensure_ascii=False)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, Any]:
        notes = f" ({', '.join(self.notes)})" if self.notes else ""
        plain = [f"tool {self.name!r} registered{notes}"]
        if self.description:
            plain.append(f"  {self.description}")
        plain.append(f"  parameters: {parameters_summary(self.parameters)}")
        plain.append(self._schema())
        html = (
            f'<div class="dsh-ToolSpec {NO_TEX}"><p>tool <b><code>'
            f"{esc(self.name)}</code></b> registered{esc(notes)}</p>"
            + (f"<p>{esc(self.description)}</p>" if self.description else "")
            + "<details><summary>JSON Schema: "
            f"<code>{esc(parameters_summary(self.parameters))}</code></summary>"
            f"<pre>{esc(self._schema())}</pre></details></div>"
        )
        return {"text/plain": "\n".join(plain), "text/html": html}

    def __repr__(self) -> str:
        text: str = self._repr_mimebundle_()["text/plain"]
        return text
