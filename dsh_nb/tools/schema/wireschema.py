"""The JSON Schema a model is shown for a signature tool, and its strict form.

pydantic writes a schema for documentation: titles on every field, nested
classes behind ``$defs``/``$ref``, ``uniqueItems`` for sets. A model needs
less, and some servers understand less, so :func:`tidy_schema` keeps what
describes the arguments and inlines every ``$ref`` it can: OpenAI, Anthropic,
MCP clients and small OpenAI-compatible servers all read inline schemas,
while a few local servers' grammar converters do not follow ``$ref``. Only a
recursive type (a tree node listing its children) keeps ``$defs``/``$ref``,
because it cannot be written inline; OpenAI, Anthropic and MCP accept those.

:func:`strict_schema` rewrites a tool's parameters for OpenAI's strict
function calling (``%tools --openai --strict``): ``additionalProperties:
false`` on every object and every property required, its default said in
its description, so the model sends the value it means (the tool refuses a
``null`` its parameter does not accept, as the plain schema says).
Plain functions on plain JSON, no pydantic import.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["StrictSchemaError", "refinements", "strict_schema", "tidy_schema"]

_SCHEMA_LISTS: Final = ("anyOf", "allOf", "oneOf", "prefixItems")
_SCHEMA_ONE: Final = ("items", "additionalProperties", "not")
_STRICT_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6"}
    | {"uuid"}
)
_STRICT_DROPS: Final = (
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "examples",
)


class StrictSchemaError(ValueError):
    """A parameter schema OpenAI's strict mode cannot express; names where."""


def _ref_name(node: Mapping[str, Any]) -> str | None:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return ref[len("#/$defs/") :]
    return None


def tidy_schema(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Return pydantic's parameter schema as a model should see it.

    Drops titles, the top-level description and ``uniqueItems`` (a ``set``
    parameter accepts repeats and drops them); inlines ``$ref`` unless the
    type is recursive.
    """
    schema = copy.deepcopy(dict(raw))
    defs: dict[str, Any] = schema.pop("$defs", {}) or {}
    kept: dict[str, Any] = {}

    def inline(node: dict[str, Any], stack: tuple[str, ...]) -> dict[str, Any]:
        name = _ref_name(node)
        if name is not None and name in defs:
            if name in stack:
                kept[name] = None
                return node
            rest = {k: v for k, v in node.items() if k != "$ref"}
            merged = {**copy.deepcopy(defs[name]), **rest}
            return inline(merged, (*stack, name))
        node.pop("title", None)
        node.pop("uniqueItems", None)
        if node.get("additionalProperties") is True:
            del node["additionalProperties"]
        props = node.get("properties")
        if isinstance(props, dict):
            for key, value in props.items():
                if isinstance(value, dict):
                    props[key] = inline(value, stack)
        for key in _SCHEMA_ONE:
            if isinstance(node.get(key), dict):
                node[key] = inline(node[key], stack)
        for key in _SCHEMA_LISTS:
            if isinstance(node.get(key), list):
                node[key] = [
                    inline(v, stack) if isinstance(v, dict) else v for v in node[key]
                ]
        return _type_array(node)

    schema.pop("description", None)
    out = inline(schema, ())
    done: set[str] = set()
    while set(kept) - done:  # a kept definition may itself refer to others
        for name in sorted(set(kept) - done):
            done.add(name)
            kept[name] = inline(copy.deepcopy(defs[name]), (name,))
    if kept:
        out["$defs"] = kept
    if not out.get("required"):
        out.pop("required", None)
    return out


_SCALARS: Final = frozenset({"string", "integer", "number", "boolean"})
_NULL: Final = {"type": "null"}


def _is_scalar(node: object) -> bool:
    """A node of one scalar type whose keywords all concern that type."""
    return (
        isinstance(node, dict)
        and node.get("type") in _SCALARS
        and not any(k in node for k in ("enum", "const", "$ref"))
        and (refinements(node) is not None or "anyOf" not in node)
    )


def refinements(node: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The members of a typed node's ``anyOf`` that only refine its type.

    A datetime is ``{"type": "string", "anyOf": [{"format": "date-time"},
    {"format": "date"}, {"pattern": ...}]}``: each member narrows the
    string, none names a type. None for any other node.
    """
    members = node.get("anyOf")
    if "type" not in node or not isinstance(members, list) or not members:
        return None
    if all(isinstance(m, dict) and "type" not in m for m in members):
        return members
    return None


def _type_array(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [X, null]`` for a scalar ``X`` as ``type: [X, "null"]``.

    The same set of values; form-filling MCP clients (the Inspector, and
    others that convert input by the top-level ``type``) read only this
    form, so they send ``3`` rather than ``"3"`` for ``int | None``.
    """
    members = node.get("anyOf")
    if not isinstance(members, list) or len(members) != 2 or _NULL not in members:
        return node
    other = members[1 - members.index(_NULL)]
    if not _is_scalar(other):
        return node
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    return {**other, "type": [other["type"], "null"], **rest}


def _with_default_note(node: dict[str, Any], default: Any) -> None:
    import json

    note = f"default: {json.dumps(default, ensure_ascii=False)}"
    text = node.get("description")
    node["description"] = f"{text} ({note})" if text else note


def strict_schema(parameters: Mapping[str, Any], tool: str) -> dict[str, Any]:
    """Return ``parameters`` rewritten for OpenAI strict function calling.

    Every object gets ``additionalProperties: false`` and lists all its
    properties as required; an optional one keeps its own type (nullable
    only when it was) and its default moves into the description. Keywords
    and formats strict mode refuses are dropped; of a datetime's forms the
    first (``format: date-time``) is kept.

    Raises
    ------
    StrictSchemaError
        For what strict mode cannot express: free-form objects
        (``dict[str, X]``, ``**kwargs``), ``Any``, tuples, arrays without
        ``items``.
    """
    schema = copy.deepcopy(dict(parameters))
    problems: list[str] = []

    def fix(node: dict[str, Any], path: str) -> dict[str, Any]:
        narrowed = refinements(node)
        if narrowed is not None:  # strict mode takes one form: the first
            del node["anyOf"]
            node.update(narrowed[0])
        for key in _STRICT_DROPS:
            node.pop(key, None)
        if node.get("format") not in (None, *_STRICT_FORMATS):
            node.pop("format")
        if "default" in node:
            _with_default_note(node, node.pop("default"))
        if "prefixItems" in node:
            problems.append(f'"{path}" is a tuple')
        if not any(k in node for k in ("type", "anyOf", "$ref", "enum", "const")):
            problems.append(f'"{path}" accepts any value')
        kind = node.get("type")
        no_items = not isinstance(node.get("items"), dict)
        if kind == "array" and no_items and "prefixItems" not in node:
            problems.append(f'"{path}" is an array of any values')
        is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
        if is_object:
            extra = node.get("additionalProperties")
            if extra not in (None, False) or "properties" not in node:
                problems.append(f'"{path}" is an object without fixed properties')
            props = node.get("properties") or {}
            for key, value in list(props.items()):
                props[key] = fix(value, f"{path}.{key}" if path else key)
            node["required"] = list(props)
            node["additionalProperties"] = False
        for key in ("items",):
            if isinstance(node.get(key), dict):
                node[key] = fix(node[key], f"{path}[]")
        for key in ("anyOf", "allOf", "oneOf"):
            if isinstance(node.get(key), list):
                node[key] = [fix(m, path) for m in node[key]]
        return node

    defs = schema.get("$defs")
    if isinstance(defs, dict):
        for name, value in defs.items():
            defs[name] = fix(value, name)
    out = fix(schema, "")
    if problems:
        listed = "; ".join(dict.fromkeys(problems))
        raise StrictSchemaError(
            f"tool {tool!r} cannot be exported for OpenAI strict mode: {listed}"
        )
    return out
