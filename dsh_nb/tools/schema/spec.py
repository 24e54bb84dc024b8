"""The schema DSL: author-facing specs, wire JSON Schema, argument checks.

A :data:`SchemaSpec` is the one description of a tool's parameters. It
converts to the JSON Schema the model sees (:func:`schema_spec_to_json_schema`)
and validates what the model sends back with the same semantics
(:func:`validate_args`, contract §1). This module is the one place to import
the DSL from; it also re-exports the checks that live beside it:
:func:`compile_validator` (``_compiled.py``) is the same check compiled once
for the per-call hot path, :func:`check_spec` (``_speccheck.py``) judges a
spec at definition time, and :func:`compile_json_schema_validator`
(``_rawschema.py``) serves raw JSON Schema parameters, importing jsonschema
lazily because that import costs over a second next to JupyterLab. The DSL's
values and the predicates all of them share live in ``_dsl.py``, so none of
these modules imports another in a cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_nb.tools.jsonvalue import ABSENT, compact_json
from dsh_nb.tools.schema._compiled import compile_validator
from dsh_nb.tools.schema._dsl import (
    _IS,
    _MISSING,
    _MUST,
    _NOT_OBJECT,
    _SCALARS,
    SCHEMA_TYPES,
    MalformedSpecError,
    SchemaProp,
    SchemaSpec,
    Validator,
    _copy_json,
    _dict_get,
    _is_dict,
    _member,
    _prop,
    _unreachable,
    _unreadable,
)
from dsh_nb.tools.schema._rawschema import compile_json_schema_validator
from dsh_nb.tools.schema._speccheck import check_spec

__all__ = [
    "SCHEMA_TYPES",
    "SchemaProp",
    "SchemaSpec",
    "Validator",
    "check_spec",
    "compile_json_schema_validator",
    "compile_validator",
    "schema_spec_to_json_schema",
    "validate_args",
]

# -- conversion (§1.2) --------------------------------------------------------


def schema_spec_to_json_schema(spec: SchemaSpec) -> dict[str, Any]:
    """Build the wire JSON Schema the model is shown for ``spec``."""
    properties, required = _convert_spec(spec)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def _convert_spec(spec: SchemaSpec) -> tuple[dict[str, Any], list[str]]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key, raw in spec.items():
        prop = _prop(raw)
        properties[key] = _convert_prop(prop)
        if prop.required is True:
            required.append(key)
    return properties, required


def _convert_prop(prop: SchemaProp) -> dict[str, Any]:
    out: dict[str, Any] = {"type": prop.type}
    if prop.description:
        out["description"] = prop.description
    if prop.enum is not None:
        enum: Any = prop.enum
        out["enum"] = list(enum) if isinstance(enum, (list, tuple)) else enum
    if prop.default is not ABSENT:
        out["default"] = _copy_json(prop.default)
    if prop.type == "object" and prop.properties is not None:
        out["properties"], required = _convert_spec(prop.properties)
        if required:
            out["required"] = required
    elif prop.type == "array" and prop.items is not None:
        out["items"] = _convert_prop(_prop(prop.items))
    return out


def validate_args(spec: SchemaSpec, args: object) -> list[str]:
    """List every way ``args`` breaks ``spec`` (contract §1.3); [] = valid.

    Total over ``args``. Raises only for a malformed spec (unknown type).
    """
    if not _is_dict(args):
        return [_NOT_OBJECT]
    errors: list[str] = []
    try:
        _walk_spec(spec, args, None, errors)
    except MalformedSpecError:
        raise
    except Exception as exc:  # noqa: BLE001 - e.g. a key whose __eq__ raises
        return _unreadable(exc)
    return errors


def _fields(raw: object) -> tuple[Any, bool, Any, Any, Any]:
    """Read (type, required, enum, properties, items) without building a prop."""
    if isinstance(raw, SchemaProp):
        return raw.type, raw.required is True, raw.enum, raw.properties, raw.items
    if isinstance(raw, dict) or isinstance(raw, Mapping):
        get = raw.get
        return (
            get("type"),
            get("required") is True,
            get("enum"),
            get("properties"),
            get("items"),
        )
    return _prop(raw).type, False, None, None, None


def _walk_spec(
    spec: SchemaSpec, obj: dict[Any, Any], prefix: str | None, errors: list[str]
) -> None:
    for key, raw in spec.items():
        fields = _fields(raw)
        path = str(key) if prefix is None else f"{prefix}.{key}"
        value = _dict_get(obj, key, _MISSING)
        if value is _MISSING:
            if fields[1]:
                errors.append(f'missing required property "{path}"')
        else:
            _walk_value(fields, value, path, errors)


def _walk_value(
    fields: tuple[Any, bool, Any, Any, Any],
    value: object,
    path: str,
    errors: list[str],
) -> None:
    kind, _, enum, properties, items = fields
    is_kind = _IS.get(kind) if isinstance(kind, str) else None
    if is_kind is None:
        _unreachable(kind)
    if not is_kind(value):
        errors.append(f'"{path}" {_MUST[kind]}')
    elif kind == "object" and properties is not None:
        _walk_spec(properties, value, path, errors)  # type: ignore[arg-type]
    elif kind == "array" and items is not None:
        item = _fields(items)
        elements: list[object] = value  # type: ignore[assignment]
        for i, element in enumerate(list.__iter__(elements)):
            _walk_value(item, element, f"{path}[{i}]", errors)
    elif kind in _SCALARS and enum is not None and not _member(enum, value):
        errors.append(f'"{path}" must be one of {compact_json(list(enum))}')
