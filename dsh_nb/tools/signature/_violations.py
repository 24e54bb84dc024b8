"""pydantic's validation errors, as the violations a model can correct from.

pydantic reports ``Input should be a valid integer [type=int_type,
input_value='50', input_type=str]`` with a location tuple that mixes field
names, list indexes and union-member tags. The model does better with the
house style of ``validate_args`` (contract §1.3): one clause per argument,
in declared order, naming the path the way the model wrote it:
``"nrows" must be an integer; "since" must be an ISO 8601 datetime; "k"
must be >= 1``. The location is read against the tool's own JSON Schema, so
a union tag never shows up as a path and a union reports one clause.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from dsh_nb.tools.jsonvalue import compact_json

__all__ = ["describe", "locate", "violations"]

_KINDS: Final = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
_FORMATS: Final = {
    "date-time": "an ISO 8601 datetime",
    "date": "an ISO 8601 date",
    "time": "an ISO 8601 time",
    "duration": "an ISO 8601 duration",
    "uuid": "a UUID",
    "path": "a path string",
}
_SIMPLE: Final = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "int_parsing_size": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "string_type": "a string",
    "string_unicode": "a string",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "list_type": "an array",
    "tuple_type": "an array",
    "set_type": "an array",
    "frozen_set_type": "an array",
    "iterable_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dataclass_type": "an object",
    "dataclass_exact_type": "an object",
    "typed_dict_type": "an object",
    "none_required": "null",
    "uuid_type": "a UUID",
    "uuid_parsing": "a UUID",
    "decimal_type": "a decimal number",
    "decimal_parsing": "a decimal number",
    "url_type": "a URL",
    "url_parsing": "a URL",
    "bytes_type": "a string",
}
_TIMES: Final = (
    ("datetime", "an ISO 8601 datetime"),
    ("date", "an ISO 8601 date"),
    ("time_delta", "an ISO 8601 duration"),
    ("time", "an ISO 8601 time"),
)
_BOUNDS: Final = {
    "greater_than_equal": (">=", "ge"),
    "greater_than": (">", "gt"),
    "less_than_equal": ("<=", "le"),
    "less_than": ("<", "lt"),
}


def _resolve(node: Any, defs: Mapping[str, Any]) -> dict[str, Any]:
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 64:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = {**defs.get(name, {}), **{k: v for k, v in node.items() if k != "$ref"}}
        seen += 1
    return node if isinstance(node, dict) else {}


def _branches(node: dict[str, Any]) -> list[dict[str, Any]] | None:
    members = node.get("anyOf") or node.get("oneOf")
    if not isinstance(members, list):
        return None
    return [m for m in members if isinstance(m, dict)]


def locate(
    loc: Iterable[int | str], schema: Mapping[str, Any]
) -> tuple[str, list[int | str], dict[str, Any], bool]:
    """Read a pydantic location against the schema.

    Returns the path text, the path's keys into the arguments, the schema
    node there, and whether that node is a union whose members all failed
    (pydantic then reports one error per member, tagged).
    """
    defs: Mapping[str, Any] = schema.get("$defs") or {}
    node = _resolve(dict(schema), defs)
    text = ""
    keys: list[int | str] = []
    for part in loc:
        branches = _branches(node)
        if branches is not None:
            real = [b for b in branches if b.get("type") != "null"]
            if len(real) != 1:
                return text, keys, node, True
            node = _resolve(real[0], defs)
        if isinstance(part, int) and not isinstance(part, bool):
            text += f"[{part}]"
            prefix = node.get("prefixItems")
            if isinstance(prefix, list) and part < len(prefix):
                node = _resolve(prefix[part], defs)
            else:
                node = _resolve(node.get("items", {}), defs)
        else:
            key = str(part)
            text = key if not text else f"{text}.{key}"
            props = node.get("properties") or {}
            extra = node.get("additionalProperties")
            node = _resolve(
                props.get(key, extra if isinstance(extra, dict) else {}), defs
            )
        keys.append(part)
    return text, keys, node, False


def describe(node: Mapping[str, Any], defs: Mapping[str, Any]) -> str:
    """What a schema node accepts, as the end of ``must be ...``."""
    node = _resolve(dict(node), defs)
    if "enum" in node:
        return "one of " + compact_json(list(node["enum"]))
    if "const" in node:
        return "equal to " + compact_json(node["const"])
    branches = _branches(node)
    if (
        branches is not None
        and "type" in node
        and all("type" not in b for b in branches)
    ):
        # members that only refine the type (a datetime's forms): the first
        return describe({**branches[0], "type": node["type"]}, defs)
    if branches is not None:
        parts = list(dict.fromkeys(describe(b, defs) for b in branches))
        return (
            parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]
        )
    kind = node.get("type")
    if isinstance(kind, list):
        return describe({"anyOf": [{**node, "type": k} for k in kind]}, defs)
    if kind == "string" and node.get("format") in _FORMATS:
        return _FORMATS[node["format"]]
    return _KINDS.get(str(kind), "a valid value")


def _number(value: object) -> str:
    return compact_json(value) if isinstance(value, (int, float)) else str(value)


def _clause(error: Mapping[str, Any], path: str, node: dict[str, Any]) -> str:
    kind = str(error.get("type", ""))
    ctx: Mapping[str, Any] = error.get("ctx") or {}
    quoted = f'"{path}"'
    if kind == "missing":
        return f"missing required property {quoted}"
    if kind in ("literal_error", "enum"):
        if "enum" in node or "const" in node:
            return f"{quoted} must be {describe(node, {})}"
        return f"{quoted} must be {ctx.get('expected', 'one of the allowed values')}"
    if kind in _SIMPLE:
        return f"{quoted} must be {_SIMPLE[kind]}"
    for prefix, wanted in _TIMES:
        if kind.startswith(prefix):
            return f"{quoted} must be {wanted}"
    if kind in _BOUNDS:
        sign, key = _BOUNDS[kind]
        return f"{quoted} must be {sign} {_number(ctx.get(key))}"
    if kind == "multiple_of":
        return f"{quoted} must be a multiple of {_number(ctx.get('multiple_of'))}"
    if kind == "string_too_short":
        return f"{quoted} must have at least {ctx.get('min_length')} characters"
    if kind == "string_too_long":
        return f"{quoted} must have at most {ctx.get('max_length')} characters"
    if kind == "string_pattern_mismatch":
        return f"{quoted} must match the pattern {compact_json(ctx.get('pattern'))}"
    if kind == "too_short":
        return f"{quoted} must have at least {ctx.get('min_length')} items"
    if kind == "too_long":
        return f"{quoted} must have at most {ctx.get('max_length')} items"
    if kind == "extra_forbidden":
        return f"unexpected property {quoted}"
    message = str(error.get("msg", "is invalid"))
    if kind in ("value_error", "assertion_error"):
        detail = message.split(", ", 1)[-1] if ", " in message else message
        return f"{quoted} is invalid: {detail}"
    return f"{quoted} {message[:1].lower()}{message[1:]}"


def violations(
    errors: Iterable[Mapping[str, Any]], schema: Mapping[str, Any]
) -> list[str]:
    """One clause per failing argument path, in pydantic's (declared) order."""
    defs: Mapping[str, Any] = schema.get("$defs") or {}
    out: dict[str, str] = {}
    for error in errors:
        loc = tuple(error.get("loc", ()))
        path, _, node, union = locate(loc, schema)
        if not path:
            if error.get("type") in _SIMPLE or error.get("type") == "missing":
                out.setdefault("", '"arguments" must be an object')
            else:
                out.setdefault("", _clause(error, "arguments", {}))
            continue
        if path in out:
            continue
        if union:
            out[path] = f'"{path}" must be {describe(node, defs)}'
        elif error.get("type") == "missing" and loc and isinstance(loc[-1], int):
            parent, _, outer, _ = locate(loc[:-1], schema)
            count = len(outer.get("prefixItems") or ()) or "more"
            out[path] = f'"{parent}" must have {count} items'
        else:
            out[path] = _clause(error, path, node)
    return list(out.values())
