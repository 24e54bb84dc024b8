"""Definition-time checks of a schema spec, with fixes in every message.

Kept apart from :mod:`dsh_nb.tools.schema.spec` because it runs once per
tool definition, not per call, and speaks to the tool's author
(:class:`ToolDefinitionError` naming the property path and the fix) rather
than to the model. Import it through
:mod:`dsh_nb.tools.schema.spec`, which re-exports :func:`check_spec`; this module
imports the DSL values from ``_dsl.py``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Final, NoReturn

from dsh_nb.tools.errors import ToolDefinitionError
from dsh_nb.tools.jsonvalue import ABSENT, is_json_data, to_plain
from dsh_nb.tools.schema._dsl import SCHEMA_TYPES, SchemaProp, _prop
from dsh_nb.tools.shown import shown

__all__ = ["check_spec"]

_PROP_KEYS: Final = (
    "type",
    "required",
    "description",
    "enum",
    "default",
    "properties",
    "items",
)


def _hint(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    if close:
        return f'; did you mean "{close[0]}"?'
    return "; use one of " + ", ".join(f'"{c}"' for c in choices)


def check_spec(spec: object, *, tool_name: str) -> dict[str, SchemaProp]:
    """Check ``spec`` at definition time and return it as SchemaProps.

    Raises
    ------
    ToolDefinitionError
        Naming the tool, the property path and the fix.
    """
    return _check_spec(spec, f"defineTool({tool_name}): ", None)


def _check_spec(spec: object, where: str, parent: str | None) -> dict[str, SchemaProp]:
    if not isinstance(spec, Mapping):
        what = "parameters" if parent is None else f'property "{parent}" properties'
        raise ToolDefinitionError(
            f"{where}{what} must be a mapping of property names to SchemaProp, "
            f"got {shown(spec)}"
        )
    out: dict[str, SchemaProp] = {}
    for key, raw in spec.items():
        if not isinstance(key, str):
            raise ToolDefinitionError(
                f"{where}property name {shown(key)} is not a string"
            )
        path = key if parent is None else f"{parent}.{key}"
        out[key] = _check_prop(raw, where, path)
    return out


def _check_prop(raw: object, where: str, path: str) -> SchemaProp:
    def fail(problem: str) -> NoReturn:
        raise ToolDefinitionError(f'{where}property "{path}" {problem}')

    if isinstance(raw, Mapping):
        for name in raw:
            if name not in _PROP_KEYS:
                fail(f'has unknown key "{name}"' + _hint(str(name), _PROP_KEYS))
        if "type" not in raw:
            fail('has no "type"' + _hint("", SCHEMA_TYPES))
    elif not isinstance(raw, SchemaProp):
        fail(f"must be a SchemaProp or a dict of its fields, got {shown(raw)}")
    prop = _prop(raw)
    kind: object = prop.type
    if not isinstance(kind, str):
        fail(f"has type {shown(kind)}" + _hint("", SCHEMA_TYPES))
    if kind not in SCHEMA_TYPES:
        fail(f'has unknown type "{kind}"' + _hint(kind, SCHEMA_TYPES))
    required = raw.get("required", False) if isinstance(raw, Mapping) else prop.required
    if type(required) is not bool:
        fail(f"has required={shown(required)}; use True or False")
    if prop.description is not None and not isinstance(prop.description, str):
        fail(f"has description={shown(prop.description)}; use a string")
    enum: object = prop.enum
    if enum is not None and not (
        isinstance(enum, (list, tuple)) and all(type(m) is str for m in enum)
    ):
        given = raw.get("enum") if isinstance(raw, Mapping) else enum
        fail(f"has enum={shown(given)}; use a list of strings")
    if prop.default is not ABSENT and not is_json_data(prop.default):
        fail(
            f"has default={shown(prop.default)}, which is not lossless JSON; "
            "use str, int, float, bool, None, or a list/dict of those"
        )
    properties = None
    if prop.properties is not None:
        if kind != "object":
            fail(f'has properties but type "{kind}"; properties need type "object"')
        properties = _check_spec(prop.properties, where, path)
    items = None
    if prop.items is not None:
        if kind != "array":
            fail(f'has items but type "{kind}"; items need type "array"')
        items = _check_prop(prop.items, where, f"{path}[]")
    default = prop.default
    return SchemaProp(
        type=kind,
        required=required,
        description=prop.description,
        enum=tuple(enum) if isinstance(enum, (list, tuple)) else None,
        default=to_plain(default) if default is not ABSENT else ABSENT,
        properties=properties,
        items=items,
    )
