"""The strings a signature tool takes where JSON has no type, said once.

pydantic reads a ``datetime`` from more strings than its schema admits (a
Unix time in digits, ``20260301``, no offset, a space for the ``T``) and
refuses the date alone that models often send; its schema says ``format:
date-time``, which requires an offset. Here each such type's strings are
written once, as the JSON Schema a model is shown (pydantic's schema
generator, overridden) and as the check the runtime applies before pydantic
converts (a before-validator put into the core schema, so nested dataclass
and model fields get it too), so the two agree; a test holds them to
jsonschema's own format checker.

- ``datetime``: RFC 3339 (``2026-03-01T09:30:00Z``); the same without an
  offset, seconds optional, ``T`` or a space (naive, as given); or a date
  alone (midnight, naive). The description says so in words.
- ``time``: RFC 3339's full-time, or the same without an offset.
- ``timedelta``: an ISO 8601 duration (``P1DT2H``, ``PT0.5S``).
- ``UUID``: the hyphenated 36-character form.
- ``Decimal``: a number, or a string that spells one.

With ``coerce=True`` a string outside these forms goes on to pydantic's lax
parser instead of being refused (the schema then describes less than the
tool takes, as ``coerce`` documents).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final
from uuid import UUID

__all__ = ["KINDS", "NOTE", "json_schema_generator", "merge_notes", "patch_core"]

NOTE: Final = "x-dsh-note"
_DATE: Final = r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
_CLOCK: Final = r"(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?"
_OFFSET: Final = r"(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)"
_RFC_CLOCK: Final = r"(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?"
LOCAL_DATETIME: Final = f"^{_DATE}[Tt ]{_CLOCK}$"
LOCAL_TIME: Final = f"^{_CLOCK}$"
DECIMAL: Final = r"^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$"
_RFC3339: Final = re.compile(f"{_DATE}[Tt]{_RFC_CLOCK}{_OFFSET}")
_RFC_TIME: Final = re.compile(f"{_RFC_CLOCK}{_OFFSET}")
_DATE_ONLY: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_LOCAL_DT: Final = re.compile(LOCAL_DATETIME[1:-1])
_LOCAL_T: Final = re.compile(LOCAL_TIME[1:-1])
_NUMBER: Final = r"\d+(?:[.,]\d+)?"
_DURATION: Final = re.compile(
    rf"-?P(?:(?:{_NUMBER}Y)?(?:{_NUMBER}M)?(?:{_NUMBER}D)?"
    rf"(?:T(?=\d)(?:{_NUMBER}H)?(?:{_NUMBER}M)?(?:{_NUMBER}S)?)?|{_NUMBER}W)"
)
_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_DECIMAL: Final = re.compile(DECIMAL[1:-1])
DATETIME_NOTE: Final = (
    "ISO 8601, e.g. 2026-03-01T09:30:00Z; without an offset the time is "
    "naive; a date alone, e.g. 2026-03-01, means midnight"
)


def _datetime(text: str) -> str | None:
    if _DATE_ONLY.fullmatch(text):
        return text + "T00:00:00"
    if _RFC3339.fullmatch(text) or _LOCAL_DT.fullmatch(text):
        return text
    return None


def _time(text: str) -> str | None:
    return text if _RFC_TIME.fullmatch(text) or _LOCAL_T.fullmatch(text) else None


def _pass(pattern: re.Pattern[str]) -> Callable[[str], str | None]:
    return lambda text: text if pattern.fullmatch(text) else None


_CHECKS: Final[dict[str, tuple[Callable[[str], str | None], str, str]]] = {
    # core-schema type: (the advertised form, or None; error type, message)
    "datetime": (_datetime, "datetime_parsing", "Input should be a valid datetime"),
    "time": (_time, "time_parsing", "Input should be a valid time"),
    "timedelta": (_pass(_DURATION), "time_delta_parsing", "Input should be a valid"),
    "uuid": (_pass(_UUID), "uuid_parsing", "Input should be a valid UUID"),
    "decimal": (_pass(_DECIMAL), "decimal_parsing", "Input should be a decimal"),
}
_TYPES: Final[dict[str, Any]] = {
    "datetime": dt.datetime,
    "time": dt.time,
    "timedelta": dt.timedelta,
    "uuid": UUID,
    "decimal": Decimal,
}
_LAX: dict[str, Any] = {}
KINDS: Final = frozenset(_CHECKS)


def _lax(kind: str, text: object) -> object:
    """pydantic's own parse of a string already in an advertised form."""
    adapter = _LAX.get(kind)
    if adapter is None:
        from pydantic import TypeAdapter

        adapter = _LAX[kind] = TypeAdapter(_TYPES[kind])
    return adapter.validate_python(text, strict=False)


def _checker(kind: str, coerce: bool) -> Callable[[Any], Any]:
    from pydantic import ValidationError
    from pydantic_core import PydanticCustomError

    read, error, message = _CHECKS[kind]

    def check(value: Any) -> Any:
        if type(value) is not str:
            if kind == "decimal" and type(value) in (int, float):
                return _lax(kind, value)  # a JSON number is a decimal too
            return value
        text = read(value)
        if text is not None:
            try:
                return _lax(kind, text)
            except ValidationError:
                pass  # the right shape, not a real value: 2026-02-30
        if coerce:
            return value
        raise PydanticCustomError(error, message)

    return check


def patch_core(core: Any, *, coerce: bool) -> bool:
    """Put the string check in front of every such type in ``core``.

    Edits ``core`` (a copy of an adapter's core schema) in place; returns
    whether it found any.
    """
    found: list[dict[str, Any]] = []
    stack = [core]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") in _CHECKS:
                found.append(node)
            stack.extend(
                v for k, v in node.items() if k not in ("metadata", "serialization")
            )
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    for node in found:
        inner = dict(node)
        ref = inner.pop("ref", None)
        node.clear()
        node["type"] = "function-before"
        node["function"] = {
            "type": "no-info",
            "function": _checker(inner["type"], coerce),
        }
        node["schema"] = inner
        if ref is not None:
            node["ref"] = ref
    return bool(found)


_GENERATOR: list[type] = []


def json_schema_generator() -> type:
    """pydantic's JSON Schema generator, saying what the checks accept."""
    if _GENERATOR:
        return _GENERATOR[0]
    from pydantic.json_schema import GenerateJsonSchema

    class ToolJsonSchema(GenerateJsonSchema):
        def datetime_schema(self, schema: Any) -> Any:
            return {
                "type": "string",
                "anyOf": [
                    {"format": "date-time"},
                    {"format": "date"},
                    {"pattern": LOCAL_DATETIME},
                ],
                NOTE: DATETIME_NOTE,
            }

        def time_schema(self, schema: Any) -> Any:
            return {
                "type": "string",
                "anyOf": [{"format": "time"}, {"pattern": LOCAL_TIME}],
            }

        def decimal_schema(self, schema: Any) -> Any:
            out = super().decimal_schema(schema)
            for member in out.get("anyOf", ()):
                if member.get("type") == "string":
                    member["pattern"] = DECIMAL
            return out

    _GENERATOR.append(ToolJsonSchema)
    return ToolJsonSchema


def merge_notes(schema: Any, *, keep: bool = True) -> None:
    """Fold each note into its node's description (or drop it), in place."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            note = node.pop(NOTE, None)
            if isinstance(note, str) and keep:
                text = node.get("description")
                node["description"] = f"{text} ({note})" if text else note
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
