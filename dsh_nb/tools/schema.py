"""The schema DSL: author-facing specs, wire JSON Schema, argument checks.

A :data:`SchemaSpec` is the one description of a tool's parameters. It
converts to the JSON Schema the model sees (:func:`schema_spec_to_json_schema`)
and validates what the model sends back with the same semantics
(:func:`validate_args`, contract §1). :func:`compile_validator` is the same
check compiled once for the per-call hot path. Raw JSON Schema parameters get
:func:`compile_json_schema_validator`, which imports jsonschema lazily because
that import costs over a second next to JupyterLab.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, NoReturn, TypeAlias

from dsh_nb.tools.errors import ToolDefinitionError
from dsh_nb.tools.jsonvalue import (
    ABSENT,
    FrozenDict,
    FrozenList,
    compact_json,
    is_json_data,
    to_plain,
)

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

_PROP_KEYS: Final = (
    "type",
    "required",
    "description",
    "enum",
    "default",
    "properties",
    "items",
)
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
    ``default=None`` is JSON null, absence is :data:`ABSENT`.
    """

    type: str
    required: bool = False
    description: str | None = None
    enum: tuple[str, ...] | None = None
    default: Any = ABSENT
    properties: Mapping[str, SchemaProp] | None = None
    items: SchemaProp | None = None

    def __post_init__(self) -> None:
        if isinstance(self.enum, list):
            object.__setattr__(self, "enum", tuple(self.enum))


SchemaSpec: TypeAlias = Mapping[str, "SchemaProp | Mapping[str, Any]"]
"""Ordered property name → :class:`SchemaProp` (or a plain dict of its shape)."""

Validator: TypeAlias = Callable[[object], list[str]]
"""Arguments in, violation texts out (empty = valid); never raises on args."""

_Check: TypeAlias = Callable[[object, str, list[str]], None]


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


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_IS: Final[dict[str, Callable[[object], bool]]] = {
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}
_SCALARS: Final = frozenset({"string", "number", "boolean"})


def _unreachable(prop_type: object) -> NoReturn:
    try:
        shown = compact_json(prop_type)
    except (TypeError, ValueError):
        shown = repr(prop_type)
    raise ValueError(f"unreachable variant in validateArgs: {shown}")


def _kind(value: object) -> str | None:
    """The JSON scalar kind of ``value`` (for strict enum equality)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, str):
        return "string"
    return "number" if _is_number(value) else None


def _plain(value: object) -> object:
    """Read a scalar through its builtin base; never runs overridden ``__eq__``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
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
    if not isinstance(args, dict):
        return [_NOT_OBJECT]
    errors: list[str] = []
    _walk_spec(spec, args, None, errors)
    return errors


def _fields(raw: object) -> tuple[Any, bool, Any, Any, Any]:
    """Read (type, required, enum, properties, items) without building a prop."""
    if isinstance(raw, SchemaProp):
        return raw.type, raw.required is True, raw.enum, raw.properties, raw.items
    if isinstance(raw, Mapping):
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


# -- the compiled hot path ------------------------------------------------------

# (key, types accepted without a further look, full check, required)
_Entry: TypeAlias = tuple[object, frozenset[type], _Check, bool]
_FAST: Final[dict[str, frozenset[type]]] = {
    "string": frozenset({str}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "object": frozenset((dict, FrozenDict)),
    "array": frozenset((list, FrozenList)),
}
_NONE: Final[frozenset[type]] = frozenset()


def compile_validator(spec: SchemaSpec) -> Validator:
    """Compile ``spec`` once into a :func:`validate_args` twin for hot paths.

    The result is detached from ``spec``: later edits to a mutable spec are
    not seen. An unknown type raises when a value reaches it, as in
    :func:`validate_args`.
    """
    compiled = _compile_spec(spec)
    quick = tuple((key, fast, required) for key, fast, _, required in compiled)
    entries = tuple(
        (key, fast, check, required, str(key), f'missing required property "{key}"')
        for key, fast, check, required in compiled
    )

    def validate(args: object) -> list[str]:
        if type(args) is not dict and not isinstance(args, dict):
            return [_NOT_OBJECT]
        # Valid calls are the common case: one cheap pass, no error list.
        for key, fast, required in quick:
            value = _dict_get(args, key, _MISSING)
            if value is _MISSING:
                if required:
                    break
            elif type(value) not in fast:
                break
        else:
            return []
        errors: list[str] = []
        for key, fast, check, required, path, missing in entries:
            value = _dict_get(args, key, _MISSING)
            if value is _MISSING:
                if required:
                    errors.append(missing)
            elif type(value) not in fast:
                check(value, path, errors)
        return errors

    return validate


def _compile_spec(spec: SchemaSpec) -> list[_Entry]:
    entries: list[_Entry] = []
    for key, raw in spec.items():
        prop = _prop(raw)
        fast, check = _compile_prop(prop)
        entries.append((key, fast, check, prop.required is True))
    return entries


def _compile_prop(prop: SchemaProp) -> tuple[frozenset[type], _Check]:
    kind = prop.type
    is_kind = _IS.get(kind) if isinstance(kind, str) else None
    if is_kind is None:

        def unknown(value: object, path: str, errors: list[str]) -> None:
            _unreachable(kind)

        return _NONE, unknown
    must = " " + _MUST[kind]
    if kind == "object" and prop.properties is not None:
        return _NONE, _object_check(_compile_spec(prop.properties), must)
    if kind == "array" and prop.items is not None:
        return _NONE, _array_check(*_compile_prop(_prop(prop.items)), must)
    if kind in _SCALARS and prop.enum is not None:
        return _NONE, _enum_check(is_kind, prop.enum, must)

    def check(value: object, path: str, errors: list[str]) -> None:
        if not is_kind(value):
            errors.append(f'"{path}"{must}')

    return _FAST[kind], check


def _object_check(entries: list[_Entry], must: str) -> _Check:
    nested = tuple(entries)

    def check(value: object, path: str, errors: list[str]) -> None:
        if not isinstance(value, dict):
            errors.append(f'"{path}"{must}')
            return
        for key, fast, sub, required in nested:
            child = _dict_get(value, key, _MISSING)
            if child is _MISSING:
                if required:
                    errors.append(f'missing required property "{path}.{key}"')
            elif type(child) not in fast:
                sub(child, f"{path}.{key}", errors)

    return check


def _array_check(fast: frozenset[type], item: _Check, must: str) -> _Check:
    def check(value: object, path: str, errors: list[str]) -> None:
        if not isinstance(value, list):
            errors.append(f'"{path}"{must}')
            return
        for i, element in enumerate(list.__iter__(value)):
            if type(element) not in fast:
                item(element, f"{path}[{i}]", errors)

    return check


def _enum_check(
    is_kind: Callable[[object], bool], enum: Iterable[object], must: str
) -> _Check:
    members = tuple(enum)
    one_of = " must be one of " + compact_json(list(members))
    if all(type(m) is str for m in members):
        strings = frozenset(members)

        def is_member(value: object) -> bool:
            return isinstance(value, str) and str.__str__(value) in strings

    else:

        def is_member(value: object) -> bool:
            return _member(members, value)

    def check(value: object, path: str, errors: list[str]) -> None:
        if not is_kind(value):
            errors.append(f'"{path}"{must}')
        elif not is_member(value):
            errors.append(f'"{path}"{one_of}')

    return check


# -- definition-time checks -----------------------------------------------------


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
            f"got {spec!r}"
        )
    out: dict[str, SchemaProp] = {}
    for key, raw in spec.items():
        if not isinstance(key, str):
            raise ToolDefinitionError(f"{where}property name {key!r} is not a string")
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
        fail(f"must be a SchemaProp or a dict of its fields, got {raw!r}")
    prop = _prop(raw)
    kind: object = prop.type
    if not isinstance(kind, str):
        fail(f"has type {kind!r}" + _hint("", SCHEMA_TYPES))
    if kind not in SCHEMA_TYPES:
        fail(f'has unknown type "{kind}"' + _hint(kind, SCHEMA_TYPES))
    required = raw.get("required", False) if isinstance(raw, Mapping) else prop.required
    if type(required) is not bool:
        fail(f"has required={required!r}; use True or False")
    if prop.description is not None and not isinstance(prop.description, str):
        fail(f"has description={prop.description!r}; use a string")
    enum: object = prop.enum
    if enum is not None and not (
        isinstance(enum, (list, tuple)) and all(isinstance(m, str) for m in enum)
    ):
        shown = raw.get("enum") if isinstance(raw, Mapping) else enum
        fail(f"has enum={shown!r}; use a list of strings")
    if prop.default is not ABSENT and not is_json_data(prop.default):
        fail(
            f"has default={prop.default!r}, which is not lossless JSON; use str, "
            "int, float, bool, None, or a list/dict of those"
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


# -- raw JSON Schema parameters -------------------------------------------------

_A_TYPE: Final = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}
_LAST: Final = 1 << 62


def compile_json_schema_validator(
    schema: Mapping[str, Any], *, tool_name: str | None = None
) -> Validator:
    """Compile raw JSON Schema ``parameters`` once into a :data:`Validator`.

    Violations read like the DSL's where the keyword allows (``required``,
    ``type``, ``enum``), ordered by property declaration order.

    Raises
    ------
    ToolDefinitionError
        When ``schema`` is not a valid JSON Schema of a known draft.
    """
    import jsonschema
    from jsonschema import validators

    where = f"defineTool({tool_name}): " if tool_name is not None else ""
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(
            f"{where}parameters must be a JSON Schema object, got {schema!r}"
        )
    plain = _copy_json(schema)
    cls: Any = validators.Draft202012Validator
    if "$schema" in plain:
        try:
            cls = validators.validator_for(plain, default=None)
        except Exception:  # noqa: BLE001 - an unhashable "$schema" is just unknown
            cls = None
        if cls is None:
            raise ToolDefinitionError(
                f'{where}parameters has unknown "$schema" {plain["$schema"]!r}; use '
                'a draft URI like "https://json-schema.org/draft/2020-12/schema" '
                "or leave it out"
            )
    try:
        cls.check_schema(plain)
    except jsonschema.SchemaError as exc:
        at = "/".join(str(p) for p in exc.absolute_path) or "the root"
        raise ToolDefinitionError(
            f"{where}parameters is not a valid JSON Schema: {exc.message} (at {at})"
        ) from None
    validator = cls(plain)

    def validate(args: object) -> list[str]:
        if not isinstance(args, dict):
            return [_NOT_OBJECT]
        try:
            found = list(validator.iter_errors(args))
            keyed = [(_order(plain, e), i, _violation(e)) for i, e in enumerate(found)]
        except Exception as exc:  # noqa: BLE001 - keep the validator total
            return [f'"arguments" could not be validated: {type(exc).__name__}']
        keyed.sort(key=lambda k: k[:2])
        return [text for _, _, text in keyed]

    return validate


def _render_path(parts: Iterable[object]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else str(part)
    return out


def _missing_name(error: Any) -> object:
    """Which name a ``required`` error is about (jsonschema says it in prose)."""
    for name in error.validator_value:
        if name not in error.instance and error.message == (
            f"{name!r} is a required property"
        ):
            return name
    return _MISSING


def _violation(error: Any) -> str:
    path = _render_path(error.absolute_path)
    keyword = error.validator
    if keyword == "required":
        name = _missing_name(error)
        if name is not _MISSING:
            full = f"{path}.{name}" if path else str(name)
            return f'missing required property "{full}"'
    shown = f'"{path or "arguments"}"'
    if keyword == "type":
        wanted = error.validator_value
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        return f"{shown} must be " + " or ".join(_A_TYPE.get(n, n) for n in names)
    if keyword == "enum":
        return f"{shown} must be one of {compact_json(error.validator_value)}"
    return f"{shown} {error.message}"


def _order(schema: object, error: Any) -> tuple[tuple[int, str], ...]:
    """Sort key: declaration index of each property along the error's path."""
    parts = list(error.absolute_path)
    if error.validator == "required":
        name = _missing_name(error)
        if name is not _MISSING:
            parts.append(name)
    node: object = schema
    key: list[tuple[int, str]] = []
    for part in parts:
        if isinstance(part, int) and not isinstance(part, bool):
            key.append((part, ""))
            node = _item_schema(node, part)
            continue
        props = node.get("properties") if isinstance(node, dict) else None
        if isinstance(props, dict) and part in props:
            key.append((list(props).index(part), ""))
            node = props[part]
        else:
            key.append((_LAST, str(part)))
            node = None
    return tuple(key)


def _item_schema(node: object, index: int) -> object:
    if not isinstance(node, dict):
        return None
    prefix = node.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    items = node.get("items")
    if isinstance(items, list):
        return items[index] if index < len(items) else node.get("additionalItems")
    return items
