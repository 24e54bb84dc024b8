"""The schema DSL: author-facing specs, wire JSON Schema, argument checks.

A :data:`SchemaSpec` is the one description of a tool's parameters. It
converts to the JSON Schema the model sees (:func:`schema_spec_to_json_schema`)
and validates what the model sends back with the same semantics
(:func:`validate_args`, contract §1.3). ``validate_args`` is the one
implementation of those checks: ``define_tool`` judges a spec once with
:func:`check_spec` (``_speccheck.py``) and runs ``validate_args`` on every
call over a copy read once (:func:`args_validator`). This module is the
one place to import the DSL from; it also re-exports
:func:`compile_json_schema_validator` (``_rawschema.py``), which serves raw
JSON Schema parameters. The DSL's values live in ``_dsl.py``, so none of
these modules imports another in a cycle.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Any, Final, NoReturn, TypeAlias

from dsh_nb.tools.errors import error_message
from dsh_nb.tools.jsonvalue import ABSENT, FrozenDict, FrozenList, compact_json
from dsh_nb.tools.schema._dsl import (
    _MISSING,
    _NOT_OBJECT,
    SCHEMA_TYPES,
    SchemaProp,
    SchemaSpec,
    Validator,
    _copy_json,
    _prop,
)
from dsh_nb.tools.schema._rawschema import compile_json_schema_validator
from dsh_nb.tools.schema._speccheck import check_spec
from dsh_nb.tools.schema.structured import _plain_scalar

__all__ = [
    "SCHEMA_TYPES",
    "SchemaProp",
    "SchemaSpec",
    "Validator",
    "args_validator",
    "check_spec",
    "compile_json_schema_validator",
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


# -- validation (§1.3) ----------------------------------------------------------

_MUST: Final = {
    "string": "must be a string",
    "number": "must be a number",
    "boolean": "must be a boolean",
    "object": "must be an object",
    "array": "must be an array",
}
_SCALARS: Final = frozenset({"string", "number", "boolean"})
_dict_get: Final = dict.get


class MalformedSpecError(ValueError):
    """A spec value no validator can check: the one thing validation raises."""


def validate_args(spec: SchemaSpec, args: object) -> list[str]:
    """List every way ``args`` breaks ``spec`` (contract §1.3); [] = valid.

    Total over ``args``. Raises only for a malformed spec (unknown type),
    when a value reaches the prop that has it. Reads ``spec`` on every
    call; :func:`args_validator` reads it once.
    """
    if not issubclass(type(args), dict):
        return [_NOT_OBJECT]
    errors: list[str] = []
    try:
        _walk_spec(spec, args, None, errors)  # type: ignore[arg-type]
    except MalformedSpecError:
        raise
    except Exception as exc:  # noqa: BLE001 - e.g. a key whose __eq__ raises
        return [f"arguments could not be validated: {error_message(exc)}"]
    return errors


def args_validator(spec: SchemaSpec) -> Validator:
    """Return :func:`validate_args` over ``spec`` read once (a detached copy).

    ``define_tool`` validates every call with it, over the spec
    :func:`check_spec` returned. Later edits to ``spec`` are not seen. The
    spec is read whole here, so a malformed part of one ``check_spec``
    never saw may raise here rather than when a value reaches it.
    """
    read: Any = _read_spec(spec)
    return functools.partial(validate_args, read)


_Fields: TypeAlias = tuple[Any, bool, Any, Any, Any, Any]


class _ReadProp(tuple):  # type: ignore[type-arg]
    """A prop as :func:`_fields` reads it, kept so a walk need not read it again."""

    __slots__ = ()


def _read_spec(spec: SchemaSpec) -> dict[Any, _ReadProp]:
    return {key: _read_prop(raw) for key, raw in spec.items()}


def _read_prop(raw: object) -> _ReadProp:
    kind, required, enum, properties, items, bare = _fields(raw)
    if isinstance(enum, list):
        enum = tuple(enum)
    if properties is not None:
        properties = _read_spec(properties)
    if items is not None:
        items = _read_prop(items)
    return _ReadProp((kind, required, enum, properties, items, bare))


def _fields(raw: object) -> _Fields:
    """Read a prop without building one: (type, required, enum, properties,
    items, bare), where bare is the type when the type is all there is to
    check (no enum, properties or items), else None.
    """
    kind: Any
    if isinstance(raw, SchemaProp):
        kind, enum, properties, items = raw.type, raw.enum, raw.properties, raw.items
        required = raw.required is True
    elif isinstance(raw, dict) or isinstance(raw, Mapping):
        get = raw.get
        kind, enum, properties = get("type"), get("enum"), get("properties")
        items, required = get("items"), get("required") is True
    else:
        kind, required = _prop(raw).type, False
        enum = properties = items = None
    bare = enum is None and properties is None and items is None
    return kind, required, enum, properties, items, kind if bare else None


# Values are read through type(value), never isinstance(): isinstance() honours
# a spoofed __class__ property, which would let a non-dict reach dict methods.
# The type of a value whose class is plain (its metaclass is ``type``) is
# looked up in _EXACT, where no code of the value's own can run; the rest,
# and subclasses, go through _json_type.
_EXACT: Final[dict[type, str]] = {
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    dict: "object",
    FrozenDict: "object",
    list: "array",
    FrozenList: "array",
}


def _walk_spec(
    spec: Mapping[Any, Any], obj: dict[Any, Any], prefix: str | None, errors: list[str]
) -> None:
    """Check ``obj`` against ``spec``, an author's or one :func:`_read_spec` read."""
    for key, raw in spec.items():
        fields = raw if type(raw) is _ReadProp else _fields(raw)
        value = _dict_get(obj, key, _MISSING)
        if value is _MISSING:
            if fields[1]:
                path = str(key) if prefix is None else f"{prefix}.{key}"
                errors.append(f'missing required property "{path}"')
            continue
        t = type(value)
        if type(t) is type and _EXACT.get(t, _MISSING) == fields[5]:
            continue  # the prop's type, and nothing inside it to check
        path = str(key) if prefix is None else f"{prefix}.{key}"
        _walk_value(fields, value, path, errors)


def _walk_value(fields: _Fields, value: object, path: str, errors: list[str]) -> None:
    kind, _, enum, properties, items, _ = fields
    t = type(value)
    found = _EXACT.get(t) if type(t) is type else None
    if found is None:
        found = _json_type(value)
    if found is None or found != kind:
        must = _MUST.get(kind) if isinstance(kind, str) else None
        if must is None:
            _unreachable(kind)
        errors.append(f'"{path}" {must}')
    elif properties is not None and kind == "object":
        _walk_spec(properties, value, path, errors)  # type: ignore[arg-type]
    elif items is not None and kind == "array":
        item = items if type(items) is _ReadProp else _fields(items)
        bare = item[5]
        elements: list[object] = value  # type: ignore[assignment]
        for i, element in enumerate(list.__iter__(elements)):
            t = type(element)
            if type(t) is not type or _EXACT.get(t, _MISSING) != bare:
                _walk_value(item, element, f"{path}[{i}]", errors)
    elif enum is not None and kind in _SCALARS and not _member(enum, kind, value):
        errors.append(f'"{path}" must be one of {compact_json(list(enum))}')


def _json_type(value: object) -> str | None:
    """The prop type ``value`` satisfies (at most one), or None."""
    t = type(value)
    if issubclass(t, str):
        return "string"
    if issubclass(t, bool):
        return "boolean"
    if issubclass(t, (int, float)):
        return "number"
    if issubclass(t, dict):
        return "object"
    return "array" if issubclass(t, list) else None


def _unreachable(prop_type: object) -> NoReturn:
    try:
        shown = compact_json(prop_type)
    except (TypeError, ValueError):
        shown = repr(prop_type)
    raise MalformedSpecError(f"unreachable variant in validateArgs: {shown}")


def _member(enum: Iterable[object], kind: str, value: object) -> bool:
    """JS ``===`` membership: no coercion, ``True`` is not ``1``, NaN never.

    ``value`` is a scalar of type ``kind``; both sides are read through
    their builtin base, so no overridden ``__eq__`` runs.
    """
    plain = _plain_scalar(value)
    for item in enum:
        if type(item) is type(plain):  # two builtin scalars of one type
            if item == plain:
                return True
        elif _json_type(item) == kind and _plain_scalar(item) == plain:
            return True
    return False
