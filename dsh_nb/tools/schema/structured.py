"""The structured-output schema subset: assert a schema, validate a value.

A caller that demands a machine-readable result (a subagent, a workflow step)
sends the schema verbatim to the model, then checks the produced value here.
Every keyword the subset accepts is one :func:`validate_structured_value`
enforces; :func:`assert_supported_output_schema` rejects everything else
loudly, listing every violation (contract §6).

Port decisions (contract appendix A): a schema object is an exact ``dict`` or
:class:`~dsh_nb.tools.jsonvalue.FrozenDict` with ``str`` keys (no other
mapping, no dict subclass); an array is an exact ``list`` or
:class:`~dsh_nb.tools.jsonvalue.FrozenList` (never a tuple); an ``enum`` or
``const`` scalar is lossless JSON (``str``, ``int``, ``bool``, ``None`` or a
finite ``float`` other than ``-0.0``). Values are judged by JSON type:
``bool`` is never a number, ``3.0`` is an integer, and membership in
``enum``/``const`` is type-strict (``True`` is not ``1``; ``1`` is ``1.0``).
Both walks use an explicit stack, so a deep schema cannot overflow recursion.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple, TypeGuard

from dsh_nb.tools.errors import OutputSchemaError
from dsh_nb.tools.jsonvalue import FrozenDict, FrozenList, compact_json, is_json_data

__all__ = [
    "StructuredOutputSchema",
    "assert_supported_output_schema",
    "validate_structured_value",
]

StructuredOutputSchema = Mapping[str, Any]
"""An object-rooted schema node (see the module docstring for the subset)."""

_SCHEMA_TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_SCALAR_TYPES = ("string", "number", "integer", "boolean", "null")
_CONSTRAINTS = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "const"}
)
_ANNOTATIONS = frozenset({"description", "title", "default", "examples"})
_ALLOWED_ON = (
    ("properties", ("object",)),
    ("required", ("object",)),
    ("additionalProperties", ("object",)),
    ("items", ("array",)),
    ("enum", _SCALAR_TYPES),
    ("const", _SCALAR_TYPES),
)
_UNSUPPORTED_KEYWORD = (
    "is not a supported keyword (subset: type/properties/required/"
    "additionalProperties/items/enum/const + annotations)"
)


def _is_object(value: object) -> TypeGuard[Mapping[str, Any]]:
    """Whether ``value`` is a plain JSON object (exact dict, str keys)."""
    t = type(value)
    if t is not dict and t is not FrozenDict:
        return False
    return all(type(key) is str for key in value)  # type: ignore[attr-defined]


def _is_array(value: object) -> TypeGuard[list[Any]]:
    t = type(value)
    return t is list or t is FrozenList


def _is_scalar(value: object) -> bool:
    """Whether ``value`` may be an ``enum`` member or a ``const``."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return True
    if t is float:
        f: float = value  # type: ignore[assignment]
        return math.isfinite(f) and not (f == 0.0 and math.copysign(1.0, f) < 0)
    return False


class _SchemaTask(NamedTuple):
    kind: Literal["enter", "leave", "object-tail"]
    node: Any
    path: str


def assert_supported_output_schema(schema: object) -> None:
    """Raise unless ``schema`` is an object-rooted node of the subset.

    Raises
    ------
    OutputSchemaError
        Listing every violation in walk order (``.violations``).
    """
    violations: list[str] = []
    _walk_schema(schema, violations)
    if not violations and schema["type"] != "object":  # type: ignore[index]
        violations.append(
            'schema.type must be "object" (structured output is object-rooted)'
        )
    if violations:
        raise OutputSchemaError(violations)


def _walk_schema(root: object, out: list[str]) -> None:
    ancestors: set[int] = set()
    stack = [_SchemaTask("enter", root, "schema")]
    while stack:
        kind, node, path = stack.pop()
        if kind == "leave":
            ancestors.discard(id(node))
        elif kind == "object-tail":
            _check_object_tail(node, path, out)
        elif not _is_object(node):
            out.append(f"{path} must be a schema object")
        elif id(node) in ancestors:
            out.append(f"{path} is circular")
        else:
            ancestors.add(id(node))
            stack.append(_SchemaTask("leave", node, path))
            _enter_node(node, path, out, stack)


def _enter_node(
    node: Mapping[str, Any], path: str, out: list[str], stack: list[_SchemaTask]
) -> None:
    for key in node:
        if key in _CONSTRAINTS:
            continue
        if key in _ANNOTATIONS:
            if not is_json_data(node[key]):
                out.append(f"{path}.{key} annotation must be JSON data")
            continue
        out.append(f"{path}.{key} {_UNSUPPORTED_KEYWORD}")
    for key in ("description", "title"):
        if key in node and type(node[key]) is not str:
            out.append(f"{path}.{key} must be a string")

    schema_type = node.get("type")
    if type(schema_type) is not str or schema_type not in _SCHEMA_TYPES:
        if isinstance(schema_type, list):
            out.append(
                f"{path}.type must be a single type string "
                "(type arrays are not supported)"
            )
        else:
            out.append(f"{path}.type must be one of {'/'.join(_SCHEMA_TYPES)}")
        return
    for key, types in _ALLOWED_ON:
        if key in node and schema_type not in types:
            out.append(f'{path}.{key} is not supported on type "{schema_type}"')

    if schema_type == "object":
        stack.append(_SchemaTask("object-tail", node, path))
        if "properties" in node:
            properties = node["properties"]
            if not _is_object(properties):
                out.append(f"{path}.properties must be an object of schemas")
            else:
                for name, child in reversed(list(properties.items())):
                    stack.append(
                        _SchemaTask("enter", child, f"{path}.properties.{name}")
                    )
    elif schema_type == "array":
        if "items" in node:
            stack.append(_SchemaTask("enter", node["items"], f"{path}.items"))
    else:
        if "enum" in node:
            allowed = node["enum"]
            if not (_is_array(allowed) and allowed and all(map(_is_scalar, allowed))):
                out.append(f"{path}.enum must be a non-empty array of scalars")
        if "const" in node and not _is_scalar(node["const"]):
            out.append(f"{path}.const must be a scalar")


def _check_object_tail(node: Mapping[str, Any], path: str, out: list[str]) -> None:
    """Check ``required`` and ``additionalProperties`` after the children."""
    if "required" in node:
        required = node["required"]
        if not _is_array(required) or any(type(n) is not str for n in required):
            out.append(f"{path}.required must be an array of strings")
        else:
            properties = node.get("properties")
            declared = properties if _is_object(properties) else {}
            for name in required:
                if name not in declared:
                    out.append(
                        f'{path}.required names "{name}" which is not in properties'
                    )
    if (
        "additionalProperties" in node
        and type(node["additionalProperties"]) is not bool
    ):
        out.append(f"{path}.additionalProperties must be a boolean")


class _ValueTask(NamedTuple):
    kind: Literal["check", "extra-keys"]
    node: Mapping[str, Any]
    value: Any
    path: str


def validate_structured_value(
    schema: StructuredOutputSchema, value: object
) -> list[str]:
    """Return every way ``value`` breaks ``schema``; empty means valid.

    Total over values: no value makes it raise, and no user code runs (a
    ``str``/``int``/``float`` subclass is read through its builtin base). A
    schema node whose ``type`` is outside the subset raises ``ValueError``:
    the schema should have passed :func:`assert_supported_output_schema`.
    """
    out: list[str] = []
    stack = [_ValueTask("check", schema, value, "value")]
    while stack:
        kind, node, item, path = stack.pop()
        if kind == "extra-keys":
            declared = node.get("properties") or {}
            for key in item:
                if key not in declared:
                    out.append(
                        f'"{path}.{key}" is not a declared property '
                        "(additionalProperties: false)"
                    )
            continue
        schema_type = node.get("type") if isinstance(node, Mapping) else None
        if schema_type == "object":
            _check_object(node, item, path, out, stack)
        elif schema_type == "array":
            if not _is_array(item):
                out.append(f'"{path}" must be an array')
            elif "items" in node:
                child = node["items"]
                for index in range(len(item) - 1, -1, -1):
                    stack.append(
                        _ValueTask("check", child, item[index], f"{path}[{index}]")
                    )
        elif schema_type in _SCALAR_TYPES:
            message = _check_scalar(node, schema_type, item)
            if message is not None:
                out.append(f'"{path}" {message}')
        else:
            raise ValueError(
                f"schema node for {path!r} has unsupported type {schema_type!r}; "
                "check the schema with assert_supported_output_schema() first"
            )
    return out


def _check_object(
    node: Mapping[str, Any],
    item: Any,
    path: str,
    out: list[str],
    stack: list[_ValueTask],
) -> None:
    if not _is_object(item):
        out.append(f'"{path}" must be an object')
        return
    for name in node.get("required") or ():
        if name not in item:
            out.append(f'missing required property "{path}.{name}"')
    if node.get("additionalProperties") is False:
        stack.append(_ValueTask("extra-keys", node, item, path))
    properties = node.get("properties") or {}
    for name, child in reversed(list(properties.items())):
        if name in item:
            stack.append(_ValueTask("check", child, item[name], f"{path}.{name}"))


_TYPE_MESSAGES = {
    "string": "must be a string",
    "number": "must be a finite number",
    "integer": "must be an integer",
    "boolean": "must be a boolean",
    "null": "must be null",
}


def _check_scalar(
    node: Mapping[str, Any], schema_type: str, item: object
) -> str | None:
    plain = _plain_scalar(item)
    if not _has_type(schema_type, plain):
        return _TYPE_MESSAGES[schema_type]
    allowed = node.get("enum")
    if allowed is not None and not any(_same_scalar(plain, m) for m in allowed):
        return f"must be one of {compact_json(allowed)}"
    if "const" in node and not _same_scalar(plain, node["const"]):
        return f"must be {compact_json(node['const'])}"
    return None


class _NotScalar:
    """Stands for a value that is not a JSON scalar at all."""


_NOT_SCALAR = _NotScalar()


def _plain_scalar(value: object) -> object:
    """Return ``value`` as an exact builtin scalar, or ``_NOT_SCALAR``.

    Subclasses are read through their builtin base so no overridden
    ``__eq__``/``__float__`` runs; ``type()`` and ``issubclass`` never
    consult a spoofed ``__class__``.
    """
    t = type(value)
    if value is None or t is bool:
        return value
    if issubclass(t, str):
        return str.__str__(value)
    if issubclass(t, int):
        return int.__int__(value)  # type: ignore[arg-type]
    if issubclass(t, float):
        return float.__float__(value)  # type: ignore[arg-type]
    return _NOT_SCALAR


def _has_type(schema_type: str, plain: object) -> bool:
    t = type(plain)
    if schema_type == "string":
        return t is str
    if schema_type == "boolean":
        return t is bool
    if schema_type == "null":
        return plain is None
    if t is int:
        return True
    if t is not float or not math.isfinite(plain):  # type: ignore[arg-type]
        return False
    return schema_type == "number" or plain.is_integer()  # type: ignore[attr-defined]


def _same_scalar(plain: object, member: object) -> bool:
    """Type-strict JSON equality: ``True`` is not ``1``, ``1`` is ``1.0``."""
    a, b = type(plain), type(member)
    if a in (int, float) and b in (int, float):
        return plain == member
    return a is b and a in (str, bool, type(None)) and plain == member
