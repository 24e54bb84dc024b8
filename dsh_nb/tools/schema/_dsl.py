"""The schema DSL's values, which every reader of a spec shares.

:class:`SchemaProp` and :data:`SchemaSpec` are what an author writes; the
helpers below read them for the validator and the converter (``spec.py``),
the raw JSON Schema path (``_rawschema.py``) and the definition-time check
(``_speccheck.py``). They live here so those modules import one base
instead of each other. Import the public names from
:mod:`dsh_nb.tools.schema.spec`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

from dsh_nb.tools.jsonvalue import ABSENT

SCHEMA_TYPES: Final = ("string", "number", "boolean", "object", "array")
"""The five prop types, in the order hints list them."""

_NOT_OBJECT: Final = '"arguments" must be an object'
_MISSING: Final = object()


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


def _copy_json(value: Any) -> Any:
    """Detach nested dicts/lists so the wire schema never aliases the spec."""
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value
