"""The compiled twin of :func:`~dsh_nb.tools.schema.spec.validate_args`.

Split out of ``schema.py`` because it is a second, separately tuned
implementation of the same checks: a spec compiles once per tool into
closures, so a valid call costs one path-free pass and no allocations.
Import it through :mod:`dsh_nb.tools.schema.spec`, which re-exports
:func:`compile_validator`; this module imports the DSL values and the shared
predicates from there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final, NoReturn, TypeAlias

from dsh_nb.tools.jsonvalue import FrozenDict, FrozenList, compact_json
from dsh_nb.tools.schema._dsl import (
    _IS,
    _MISSING,
    _MUST,
    _NOT_OBJECT,
    _SCALARS,
    MalformedSpecError,
    SchemaProp,
    SchemaSpec,
    Validator,
    _dict_get,
    _is_dict,
    _is_list,
    _is_str,
    _member,
    _prop,
    _unreachable,
    _unreadable,
)

__all__ = ["compile_validator"]

# Every prop compiles to (types accepted at a glance, ok, check): ``ok`` is a
# path-free yes/no for the common valid call; ``check`` builds the messages
# and runs only once ``ok`` has said no somewhere.

_Check: TypeAlias = Callable[[object, str, list[str]], None]
_Ok: TypeAlias = Callable[[object], bool]
_Entry: TypeAlias = tuple[object, frozenset[type], _Ok, _Check, bool]
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
    quick = tuple((key, fast, ok, required) for key, fast, ok, _, required in compiled)
    entries = tuple(
        (key, fast, check, required, str(key), f'missing required property "{key}"')
        for key, fast, _, check, required in compiled
    )

    def validate(args: object) -> list[str]:
        # Arguments reach a tool as a FrozenDict (a dict subclass).
        if (
            type(args) is not FrozenDict
            and type(args) is not dict
            and not _is_dict(args)
        ):
            return [_NOT_OBJECT]
        try:
            return run(args)
        except MalformedSpecError:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. a key whose __eq__ raises
            return _unreadable(exc)

    def run(args: dict[Any, Any]) -> list[str]:
        # The common valid call: no paths, no messages, no error list.
        for key, fast, ok, required in quick:
            value = _dict_get(args, key, _MISSING)
            if value is _MISSING:
                if required:
                    break
            elif type(value) not in fast and not ok(value):
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


def _compile_spec(spec: SchemaSpec) -> tuple[_Entry, ...]:
    entries: list[_Entry] = []
    for key, raw in spec.items():
        prop = _prop(raw)
        entries.append((key, *_compile_prop(prop), prop.required is True))
    return tuple(entries)


def _compile_prop(prop: SchemaProp) -> tuple[frozenset[type], _Ok, _Check]:
    kind = prop.type
    is_kind = _IS.get(kind) if isinstance(kind, str) else None
    if is_kind is None:

        def unknown(value: object, *_: object) -> NoReturn:
            _unreachable(kind)

        return _NONE, unknown, unknown
    must = " " + _MUST[kind]
    if kind == "object" and prop.properties is not None:
        nested = _compile_spec(prop.properties)
        return _NONE, _object_ok(nested), _object_check(nested, must)
    if kind == "array" and prop.items is not None:
        fast, item_ok, item_check = _compile_prop(_prop(prop.items))
        return _NONE, _array_ok(fast, item_ok), _array_check(fast, item_check, must)
    if kind in _SCALARS and prop.enum is not None:
        return _NONE, *_enum_check(is_kind, prop.enum, must)

    def check(value: object, path: str, errors: list[str]) -> None:
        if not is_kind(value):
            errors.append(f'"{path}"{must}')

    return _FAST[kind], is_kind, check


def _object_ok(nested: tuple[_Entry, ...]) -> _Ok:
    def ok(value: object) -> bool:
        if not _is_dict(value):
            return False
        for key, fast, sub, _, required in nested:
            child = _dict_get(value, key, _MISSING)
            if child is _MISSING:
                if required:
                    return False
            elif type(child) not in fast and not sub(child):
                return False
        return True

    return ok


def _object_check(nested: tuple[_Entry, ...], must: str) -> _Check:
    def check(value: object, path: str, errors: list[str]) -> None:
        if not _is_dict(value):
            errors.append(f'"{path}"{must}')
            return
        for key, fast, _, sub, required in nested:
            child = _dict_get(value, key, _MISSING)
            if child is _MISSING:
                if required:
                    errors.append(f'missing required property "{path}.{key}"')
            elif type(child) not in fast:
                sub(child, f"{path}.{key}", errors)

    return check


def _array_ok(fast: frozenset[type], item: _Ok) -> _Ok:
    def ok(value: object) -> bool:
        if not _is_list(value):
            return False
        for element in list.__iter__(value):
            if type(element) not in fast and not item(element):
                return False
        return True

    return ok


def _array_check(fast: frozenset[type], item: _Check, must: str) -> _Check:
    def check(value: object, path: str, errors: list[str]) -> None:
        if not _is_list(value):
            errors.append(f'"{path}"{must}')
            return
        for i, element in enumerate(list.__iter__(value)):
            if type(element) not in fast:
                item(element, f"{path}[{i}]", errors)

    return check


def _enum_check(is_kind: _Ok, enum: Iterable[object], must: str) -> tuple[_Ok, _Check]:
    members = tuple(enum)
    one_of = " must be one of " + compact_json(list(members))
    strings = frozenset(m for m in members if type(m) is str)
    if len(strings) != len(members):

        def ok(value: object) -> bool:
            return is_kind(value) and _member(members, value)

    elif is_kind is _IS["string"]:

        def ok(value: object) -> bool:
            return _is_str(value) and str.__str__(value) in strings

    else:  # a number or boolean never equals a string member

        def ok(value: object) -> bool:
            return False

    def check(value: object, path: str, errors: list[str]) -> None:
        if not is_kind(value):
            errors.append(f'"{path}"{must}')
        elif not ok(value):
            errors.append(f'"{path}"{one_of}')

    return ok, check
