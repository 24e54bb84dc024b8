"""The schema DSL's values, and the predicates every check of it shares.

:class:`SchemaProp` and :data:`SchemaSpec` are what an author writes; the
predicates and message texts below are shared by the reference validator
(``schema.py``), its compiled twin (``_compiled.py``), the raw JSON Schema
path (``_rawschema.py``) and the definition-time check (``_speccheck.py``).
They live here so those modules import one base instead of each other.
Import the public names from :mod:`dsh_nb.tools.schema.spec`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NoReturn, TypeAlias, TypeGuard

from dsh_nb.tools.errors import error_message
from dsh_nb.tools.jsonvalue import ABSENT, compact_json

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


def _copy_json(value: Any) -> Any:
    """Detach nested dicts/lists so the wire schema never aliases the spec."""
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value


# -- the predicates every check shares (validation, contract §1.3) ---------------


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
