"""Schema patterns matched with a time limit, never unbounded.

A raw JSON Schema may come from a connected MCP server, and a hostile
``pattern`` such as ``^(a|aa)+$`` makes Python's ``re`` backtrack for
hours on 40 characters, on the kernel's event loop. jsonschema runs
``re.search`` wherever a schema's pattern meets instance data; this module
gives a validator class keywords that match with the ``regex`` module
instead, each search within a timeout and all of one validation's
searches within one budget. A search that runs out of time is a
violation the model can read, not a frozen kernel. ``unevaluatedProperties``
beside ``patternProperties`` is refused when the schema is compiled,
because jsonschema matches those patterns in a helper of its own.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

from dsh_nb.tools._jsonschema import load_jsonschema

__all__ = [
    "EACH_S",
    "PatternTimeout",
    "guarded_validator",
    "pattern_budget",
    "pattern_problem",
]

EACH_S: Final = 0.05
"""Seconds one search may take."""
_BUDGET_S: Final = 0.2
_DEADLINE: ContextVar[float | None] = ContextVar("dsh_pattern_deadline", default=None)
_SUBSCHEMAS: Final = (
    "items", "additionalItems", "unevaluatedItems", "contains",
    "additionalProperties", "unevaluatedProperties", "propertyNames",
    "not", "if", "then", "else",
)  # fmt: skip
_SCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SCHEMA_MAPS: Final = (
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas"
)  # fmt: skip


class PatternTimeout(Exception):
    """A pattern did not finish matching within its time."""


@contextmanager
def pattern_budget() -> Iterator[None]:
    """Bound the time of every pattern search inside, together."""
    token = _DEADLINE.set(time.monotonic() + _BUDGET_S)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _search(pattern: str, text: str) -> bool:
    import regex

    deadline = _DEADLINE.get()
    limit = EACH_S
    if deadline is not None:
        limit = min(limit, deadline - time.monotonic())
    if limit <= 0:
        raise PatternTimeout(pattern)
    try:
        return regex.search(pattern, text, timeout=limit) is not None
    except (TimeoutError, regex.error):
        # regex.error: a pattern re accepts and regex does not (none known).
        raise PatternTimeout(pattern) from None


def _late(pattern: str) -> str:
    return f"could not be checked against the pattern {pattern!r} in time"


@functools.cache
def guarded_validator(cls: Any) -> Any:
    """``cls`` with every schema pattern matched under a time limit.

    Made once per draft: ``validators.extend`` builds a new class (several
    ms), and nothing in it depends on the schema it will check.
    """
    jsonschema = load_jsonschema()
    ValidationError, validators = jsonschema.ValidationError, jsonschema.validators

    base_additional = cls.VALIDATORS.get("additionalProperties")

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "string"):
            return
        try:
            matched = _search(patrn, instance)
        except PatternTimeout:
            yield ValidationError(_late(patrn))
            return
        if not matched:
            yield ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(
        validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
    ) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in patterns.items():
            for key, value in instance.items():
                try:
                    matched = _search(patrn, key)
                except PatternTimeout:
                    yield ValidationError(f"property {key!r} {_late(patrn)}")
                    continue
                if matched:
                    yield from validator.descend(
                        value, subschema, path=key, schema_path=patrn
                    )

    def additional_properties(
        validator: Any, allowed: Any, instance: Any, schema: Any
    ) -> Any:
        patterns = schema.get("patternProperties")
        if not patterns or not validator.is_type(instance, "object"):
            yield from base_additional(validator, allowed, instance, schema)
            return
        properties = schema.get("properties", {})
        extras = []
        for key in instance:
            if key in properties:
                continue
            try:
                if any(_search(p, key) for p in patterns):
                    continue
            except PatternTimeout:
                yield ValidationError(f"property {key!r} could not be checked in time")
                continue
            extras.append(key)
        if validator.is_type(allowed, "object"):
            for key in extras:
                yield from validator.descend(instance[key], allowed, path=key)
        elif allowed is False and extras:
            names = ", ".join(repr(k) for k in sorted(extras))
            yield ValidationError(f"{names} do not match any of the patterns")

    keywords = {"pattern": pattern, "patternProperties": pattern_properties}
    if base_additional is not None:
        keywords["additionalProperties"] = additional_properties
    return validators.extend(cls, keywords)


def pattern_problem(schema: object) -> str | None:
    """Why ``schema``'s patterns cannot be matched under a limit, or None.

    ``patternProperties`` may not sit beside ``unevaluatedProperties``:
    jsonschema would match those patterns itself, with ``re``, unbounded.
    (Whether each pattern compiles, jsonschema's own schema check says.)
    """
    keywords: set[str] = set()
    _walk(schema, keywords)
    if "patternProperties" in keywords and "unevaluatedProperties" in keywords:
        return (
            "patternProperties beside unevaluatedProperties cannot be checked "
            "with a time limit; use additionalProperties"
        )
    return None


def _walk(node: object, keywords: set[str]) -> None:
    """Collect the keywords used anywhere in a schema."""
    if not isinstance(node, dict):
        return
    keywords.update(k for k in node if isinstance(k, str))
    for key in _SUBSCHEMAS:
        _walk(node.get(key), keywords)
    for key in _SCHEMA_LISTS:
        subs = node.get(key)
        if isinstance(subs, list):
            for sub in subs:
                _walk(sub, keywords)
    for key in _SCHEMA_MAPS:
        subs = node.get(key)
        if isinstance(subs, dict):
            for sub in subs.values():
                _walk(sub, keywords)
