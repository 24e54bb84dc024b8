"""Validate arguments against raw JSON Schema ``parameters`` (jsonschema).

Kept apart from :mod:`dsh_nb.tools.schema.spec` because raw schemas are a
second input format with their own engine: jsonschema, imported lazily inside
:func:`compile_json_schema_validator` because that import is slow (the
figure is in ``benchmarks/RESULTS.md``). Its violations are reworded to
read like the DSL's, and its patterns are matched under a time limit
(``_patterns.py``): a schema may come from a hostile MCP server.
Import it through :mod:`dsh_nb.tools.schema.spec`, which re-exports it; this
module imports the shared helpers from ``_dsl.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from dsh_nb.tools._jsonschema import load_jsonschema
from dsh_nb.tools.errors import ToolDefinitionError
from dsh_nb.tools.jsonvalue import compact_json
from dsh_nb.tools.schema._dsl import _MISSING, _NOT_OBJECT, Validator, _copy_json
from dsh_nb.tools.schema._patterns import (
    guarded_validator,
    pattern_budget,
    pattern_problem,
)

__all__ = ["compile_json_schema_validator"]

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
    schema: Mapping[str, Any], *, tool_name: str | None = None, trusted: bool = False
) -> Validator:
    """Compile raw JSON Schema ``parameters`` once into a :data:`Validator`.

    Violations read like the DSL's where the keyword allows (``required``,
    ``type``, ``enum``), ordered by property declaration order. ``trusted``
    skips the meta-schema check (jsonschema's ``check_schema``, about 5 ms
    a schema) for a schema its caller built itself from a known form (the
    BFCL loader's conversion); every other check still runs.

    Raises
    ------
    ToolDefinitionError
        When ``schema`` is not a valid JSON Schema of a known draft.
    """
    jsonschema = load_jsonschema()
    validators = jsonschema.validators

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
        if not trusted:
            cls.check_schema(plain)
    except jsonschema.SchemaError as exc:
        at = "/".join(str(p) for p in exc.absolute_path) or "the root"
        raise ToolDefinitionError(
            f"{where}parameters is not a valid JSON Schema: {exc.message} (at {at})"
        ) from None
    problem = pattern_problem(plain)
    if problem is not None:
        raise ToolDefinitionError(f"{where}parameters: {problem}")
    validator = guarded_validator(cls)(plain)

    def validate(args: object) -> list[str]:
        if not isinstance(args, dict):
            return [_NOT_OBJECT]
        try:
            with pattern_budget():
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
