"""``spec_from_signature``: a signature in the SchemaSpec DSL's words.

The DSL (contract §1) has five types and no unions; ``@tool`` describes a
signature in full JSON Schema through pydantic. This projection keeps the
public ``spec_from_signature`` for code that wants a ``SchemaSpec``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NoReturn

from dsh_nb.tools.errors import ToolDefinitionError
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.schema.spec import SchemaProp

__all__ = ["spec_from_signature"]


def _fail(where: str, name: str, problem: str) -> NoReturn:
    raise ToolDefinitionError(f'{where}: parameter "{name}" {problem}')


_DSL_TYPES: Final = {"string", "number", "integer", "boolean", "object", "array"}


def spec_from_signature(func: Callable[..., Any]) -> dict[str, SchemaProp]:
    """Describe ``func``'s parameters in the SchemaSpec DSL, in order.

    The DSL knows five types and no unions, so this is a projection of the
    JSON Schema ``@tool`` builds: ``integer`` becomes ``number``, ``X |
    None`` becomes ``X``, an object keeps its properties. ``@tool`` itself
    always uses the full schema.

    Raises
    ------
    ToolDefinitionError
        For a parameter the DSL cannot write (a union, a mixed ``Literal``,
        ``Any``), naming it; ``@tool`` accepts it.
    """
    from dsh_nb.tools.signature.plan import plan_signature

    plan = plan_signature(func)
    where = plan.where
    defs = plan.schema.get("$defs") or {}
    required = set(plan.schema.get("required") or ())
    return {
        name: _to_prop(node, name, name in required, defs, where, 0)
        for name, node in plan.schema.get("properties", {}).items()
    }


def _to_prop(
    node: dict[str, Any],
    path: str,
    required: bool,
    defs: dict[str, Any],
    where: str,
    depth: int,
) -> SchemaProp:
    if depth > 16 or "$ref" in node:
        _fail(where, path, "is recursive, which the SchemaSpec DSL cannot write")
    members = [m for m in node.get("anyOf", ()) if m.get("type") != "null"]
    if len(members) == 1:
        node = {**members[0], **{k: v for k, v in node.items() if k != "anyOf"}}
    kind = node.get("type")
    if isinstance(kind, list):  # ["integer", "null"]: X | None is X here
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    enum = node.get("enum")
    if kind is None and enum and all(isinstance(v, str) for v in enum):
        kind = "string"
    if kind not in _DSL_TYPES or (enum is not None and kind != "string"):
        _fail(
            where,
            path,
            "has a type the SchemaSpec DSL cannot write; @tool describes it "
            "in full JSON Schema",
        )
    fields: dict[str, Any] = {
        "type": "number" if kind == "integer" else kind,
        "required": required,
        "description": node.get("description"),
        "default": node.get("default", ABSENT),
    }
    if enum is not None:
        fields["enum"] = tuple(enum)
    if kind == "object" and "properties" in node:
        inner = set(node.get("required") or ())
        fields["properties"] = {
            key: _to_prop(value, f"{path}.{key}", key in inner, defs, where, depth + 1)
            for key, value in node["properties"].items()
        }
    if kind == "array" and isinstance(node.get("items"), dict):
        fields["items"] = _to_prop(
            node["items"], f"{path}[]", False, defs, where, depth + 1
        )
    return SchemaProp(**fields)
