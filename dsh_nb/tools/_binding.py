"""Turn validated JSON arguments into the call a ``@tool`` function expects.

Split out of ``signature.py`` because it is the per-call half of ``@tool``:
``signature.py`` analyses a function once into a list of :class:`Param`, and
this module runs that plan on every call (conversion to dataclasses, enum
members and checked integers, the injected execution and signal). The
converters live here because the analysis builds them and the call runs them.
The public entry point, :func:`~dsh_nb.tools.signature.bind_to_signature`,
stays in ``signature.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Final, TypeAlias

from dsh_nb.tools.errors import ToolArgsError
from dsh_nb.tools.schema import SchemaProp

__all__ = [
    "OMIT",
    "REQUIRED",
    "Convert",
    "Param",
    "bind",
    "build",
    "dict_of",
    "list_of",
    "to_int",
]

OMIT: Final = object()
"""``Param.absent`` for an optional keyword: leave it out, the default applies."""
REQUIRED: Final = object()
"""``Param.absent`` for a required parameter: its absence is a violation."""
_NOTHING: Final[frozenset[type]] = frozenset()
_MISSING: Final = object()
_dict_get: Final = dict.get

Convert: TypeAlias = Callable[[Any, str, list[str]], Any]
"""(value, path, violations) → the value the function should receive."""

_DRY: ContextVar[bool] = ContextVar("dsh_nb_dry_conversion", default=False)
"""Set while a ``check`` from :func:`bind` runs: converters report, build nothing."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """One parameter of the analysed function, and how to fill it."""

    name: str
    source: str  # "args", "execution" or "signal"
    positional: bool
    absent: Any  # OMIT, REQUIRED or the value to pass when missing
    convert: Convert | None = None
    prop: SchemaProp | None = None


# -- converters -----------------------------------------------------------------


def to_int(value: Any, path: str, errors: list[str]) -> Any:
    """Pass a whole number on as ``int``; anything else is a violation."""
    if type(value) is int:
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    errors.append(f'"{path}" must be an integer')
    return value


_SKIP: Final[dict[Any, frozenset[type]]] = {to_int: frozenset({int})}


def list_of(item: Convert | None) -> Convert | None:
    """Apply ``item`` to each element (``None``: nothing to convert)."""
    if item is None:
        return None

    def convert(value: Any, path: str, errors: list[str]) -> Any:
        if not isinstance(value, list):
            return value
        return [item(x, f"{path}[{i}]", errors) for i, x in enumerate(value)]

    return convert


def dict_of(item: Convert | None) -> Convert | None:
    """Apply ``item`` to each value (``None``: nothing to convert)."""
    if item is None:
        return None

    def convert(value: Any, path: str, errors: list[str]) -> Any:
        if not isinstance(value, dict):
            return value
        return {k: item(x, f"{path}.{k}", errors) for k, x in value.items()}

    return convert


def build(
    cls: Callable[..., Any], plan: list[tuple[str, Convert | None, bool]]
) -> Convert:
    """Build ``cls(**fields)`` from an object along ``(name, convert, fill)``.

    ``fill`` passes ``None`` for a missing ``X | None`` field. With any
    violation the object is passed on unbuilt.
    """
    steps = tuple(plan)
    keep_extras = cls is dict

    def convert(value: Any, path: str, errors: list[str]) -> Any:
        if not isinstance(value, dict):
            return value
        before = len(errors)
        out: dict[str, Any] = dict(value) if keep_extras else {}
        for name, sub, fill_none in steps:
            x = _dict_get(value, name, _MISSING)
            if x is _MISSING:
                if fill_none:
                    out[name] = None
            else:
                out[name] = x if sub is None else sub(x, f"{path}.{name}", errors)
        if len(errors) != before or _DRY.get():
            return value
        return cls(**out)

    return convert


# -- the call -------------------------------------------------------------------


def bind(
    func: Callable[..., Any], params: Sequence[Param], takes_kwargs: bool
) -> tuple[Callable[[Mapping[str, Any], Any], Any], Callable[[Any], list[str]]]:
    """Return ``body(args, execution)`` calling ``func`` as ``params`` plan.

    Extra keys are dropped unless ``takes_kwargs``. An ``int`` parameter
    given a fractional number raises :class:`ToolArgsError`.

    Also returns ``check(args)``: the same conversion run dry (nothing is
    built or called), listing what it would refuse. Schema validation stops a
    call before conversion, so ``@tool`` adds these to the schema's
    violations and the model can fix every argument in one round.
    """
    names = frozenset(p.name for p in params)
    steps = tuple(
        (p.name, p.convert, _SKIP.get(p.convert, _NOTHING), p.absent)
        for p in params
        if p.source == "args" and not p.positional
    )
    injected = tuple(
        (p.name, p.source == "signal")
        for p in params
        if p.source != "args" and not p.positional
    )
    leading = tuple(p for p in params if p.positional)
    needed = frozenset(p.name for p in params if p.absent is not OMIT)
    ints = tuple(p.name for p in params if p.convert is to_int)
    direct = not (leading or injected) and all(
        p.convert is None or p.convert is to_int for p in params
    )

    def body(args: Mapping[str, Any], execution: Any) -> Any:
        # The common call needs no conversion at all: pass the args through.
        if direct and isinstance(args, dict):
            keys = args.keys()
            if keys <= names and needed <= keys:
                for name in ints:
                    if type(_dict_get(args, name, 0)) is not int:
                        break
                else:
                    return func(**args)
        return general(args, execution)

    def general(given: Mapping[str, Any], execution: Any) -> Any:
        args = given if isinstance(given, dict) else dict(given)
        errors: list[str] = []
        positional, kwargs = convert_all(args, execution, errors)
        if errors:
            raise ToolArgsError(errors)
        if takes_kwargs:
            for key, value in dict.items(args):
                if type(key) is str and key not in names:
                    kwargs[key] = value
        return func(*positional, **kwargs)

    def convert_all(
        args: dict[str, Any], execution: Any, errors: list[str]
    ) -> tuple[Sequence[Any], dict[str, Any]]:
        kwargs: dict[str, Any] = {}
        for name, convert, skip, absent in steps:
            value = _dict_get(args, name, _MISSING)
            if value is _MISSING:
                if absent is OMIT:
                    continue
                if absent is REQUIRED:
                    errors.append(f'missing required property "{name}"')
                value = absent
            elif convert is not None and type(value) not in skip:
                value = convert(value, name, errors)
            kwargs[name] = value
        for name, wants_signal in injected:
            kwargs[name] = (
                getattr(execution, "signal", None) if wants_signal else execution
            )
        positional = (
            [_lead(p, args, execution, errors) for p in leading] if leading else ()
        )
        return positional, kwargs

    def check(args: Any) -> list[str]:
        if not isinstance(args, dict):
            return []
        errors: list[str] = []
        token = _DRY.set(True)
        try:
            convert_all(args, None, errors)
        finally:
            _DRY.reset(token)
        return errors

    return body, check


def _lead(p: Param, args: dict[str, Any], execution: Any, errors: list[str]) -> Any:
    """The value of a positional-only parameter (rare, so not inlined)."""
    if p.source != "args":
        return (
            execution if p.source == "execution" else getattr(execution, "signal", None)
        )
    value = _dict_get(args, p.name, _MISSING)
    if value is _MISSING:
        if p.absent is REQUIRED:
            errors.append(f'missing required property "{p.name}"')
        return p.absent
    return value if p.convert is None else p.convert(value, p.name, errors)
