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
lazily because that import costs over a second next to JupyterLab.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn, TypeAlias, TypeGuard

from dsh_nb.tools.errors import error_message
from dsh_nb.tools.jsonvalue import ABSENT, compact_json

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

SCHEMA_TYPES: Final = ("string", "number", "boolean", "object", "array")
"""The five prop types, in the order hints list them."""

_NOT_OBJECT: Final = '"arguments" must be an object'
_MUST: Final = {
    "string": "must be a string",
    "number": "must be a number",
    "boolean": "must be a boolean",
    "object": "must be an object",
    "array": "must be an array",
}
_MISSING: Final = object()
_dict_get: Final = dict.get


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaProp:
    """One parameter of a tool, as its author declares it (contract §1.1).

    Only ``required=True`` marks a property required. ``enum`` and
    ``default`` are emitted whenever present, even when empty or falsy;
    ``default=None`` is JSON null, absence is :data:`ABSENT`. ``enum`` takes
    any sequence of strings; a list is stored as a tuple.
    """

    type: str
    required: bool = False
    description: str | None = None
    enum: Sequence[str] | None = None
    default: Any = ABSENT
    properties: Mapping[str, SchemaProp] | None = None
    items: SchemaProp | None = None

    def __post_init__(self) -> None:
        if isinstance(self.enum, list):
            object.__setattr__(self, "enum", tuple(self.enum))


SchemaSpec: TypeAlias = Mapping[str, SchemaProp | Mapping[str, Any]]
"""Ordered property name → :class:`SchemaProp` (or a plain dict of its shape)."""

Validator: TypeAlias = Callable[[object], list[str]]
"""Arguments in, violation texts out (empty = valid); never raises on args."""


def _prop(raw: object) -> SchemaProp:
    """Read a SchemaProp or a plain dict of its shape, without judging it."""
    if isinstance(raw, SchemaProp):
        return raw
    if isinstance(raw, Mapping):
        return SchemaProp(
            type=raw.get("type"),  # type: ignore[arg-type]
            required=raw.get("required") is True,
            description=raw.get("description"),
            enum=raw.get("enum"),
            default=raw.get("default", ABSENT),
            properties=raw.get("properties"),
            items=raw.get("items"),
        )
    raise TypeError(f"a schema property must be a SchemaProp or a mapping: {raw!r}")


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


def _copy_json(value: Any) -> Any:
    """Detach nested dicts/lists so the wire schema never aliases the spec."""
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value


# -- validation (§1.3), shared predicates ---------------------------------------


# Value checks read type(value), never isinstance(): isinstance() honours a
# spoofed __class__ property, which would let a non-dict reach dict methods.


def _is(value: object, kind: type | tuple[type, ...]) -> bool:
    return issubclass(type(value), kind)


def _is_dict(value: object) -> TypeGuard[dict[Any, Any]]:
    return issubclass(type(value), dict)


def _is_list(value: object) -> TypeGuard[list[Any]]:
    return issubclass(type(value), list)


def _is_str(value: object) -> TypeGuard[str]:
    return issubclass(type(value), str)


def _is_number(value: object) -> bool:
    t = type(value)
    return issubclass(t, (int, float)) and not issubclass(t, bool)


_IS: Final[dict[str, Callable[[object], bool]]] = {
    "string": lambda v: issubclass(type(v), str),
    "number": _is_number,
    "boolean": lambda v: issubclass(type(v), bool),
    "object": lambda v: issubclass(type(v), dict),
    "array": lambda v: issubclass(type(v), list),
}
_SCALARS: Final = frozenset({"string", "number", "boolean"})


class MalformedSpecError(ValueError):
    """A spec value no validator can check: the one thing validation raises."""


def _unreachable(prop_type: object) -> NoReturn:
    try:
        shown = compact_json(prop_type)
    except (TypeError, ValueError):
        shown = repr(prop_type)
    raise MalformedSpecError(f"unreachable variant in validateArgs: {shown}")


def _unreadable(exc: Exception) -> list[str]:
    """The violation for arguments whose own methods raised while being read."""
    return [f"arguments could not be validated: {error_message(exc)}"]


def _kind(value: object) -> str | None:
    """The JSON scalar kind of ``value`` (for strict enum equality)."""
    if _is(value, bool):
        return "boolean"
    if _is(value, str):
        return "string"
    return "number" if _is_number(value) else None


def _plain(value: object) -> object:
    """Read a scalar through its builtin base; never runs overridden ``__eq__``."""
    if _is(value, bool):
        return value
    if _is_str(value):
        return str.__str__(value)
    if _is(value, int):
        return int.__int__(value)  # type: ignore[arg-type]
    if _is(value, float):
        return float.__float__(value)  # type: ignore[arg-type]
    return value


def _member(enum: Iterable[object], value: object) -> bool:
    """JS ``===`` membership: no coercion, ``True`` is not ``1``, NaN never."""
    kind = _kind(value)
    if kind is None:
        return any(item is value for item in enum)
    plain = _plain(value)
    return any(_kind(item) == kind and _plain(item) == plain for item in enum)


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


# -- the checks that live beside the DSL ---------------------------------------
#
# They import the values and predicates above, so they are imported last;
# code outside this package reaches them only through this module.

from dsh_nb.tools._compiled import compile_validator  # noqa: E402
from dsh_nb.tools._rawschema import compile_json_schema_validator  # noqa: E402
from dsh_nb.tools._speccheck import check_spec  # noqa: E402
