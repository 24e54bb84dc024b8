"""Tool schemas from Python signatures: type hints, defaults and docstrings.

``@tool`` turns a plain function into a tool. :func:`spec_from_signature`
reads its parameters into a :data:`~dsh_nb.tools.schema.SchemaSpec` and
rejects, at definition time, every annotation the DSL cannot describe.
:func:`bind_to_signature` turns validated JSON arguments back into the call
the function expects (dataclass instances, enum members, checked integers,
the injected execution and signal). Descriptions come from ``Annotated``
metadata or Google/NumPy docstrings.

This module is the analysis, run once per function; the per-call half lives
in ``_binding.py`` and docstring parsing in ``_docstring.py``. Import
:func:`bind_to_signature` and :func:`docstring_summary` from here.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final, NoReturn

from dsh_nb.tools._binding import (
    OMIT,
    REQUIRED,
    Convert,
    Param,
    bind,
    build,
    dict_of,
    list_of,
    to_int,
)
from dsh_nb.tools._docstring import (
    docstring_of,
    docstring_summary,
    param_docs,
    target_of,
)
from dsh_nb.tools.errors import ToolDefinitionError
from dsh_nb.tools.jsonvalue import ABSENT, compact_json, is_json_data, to_plain
from dsh_nb.tools.schema import SchemaProp

__all__ = ["bind_to_signature", "docstring_summary", "spec_from_signature"]

# Matched by name so this module never imports the pipeline at import time.
_INJECTED: Final = {
    ("dsh_nb.tools.pipeline", "ToolExecution"): "execution",
    ("dsh_nb.tools.execution", "ToolExecution"): "execution",
    ("dsh_nb.tools.abort", "AbortSignal"): "signal",
    ("dsh_nb.tools.timeout", "AbortSignal"): "signal",
}
_USE: Final = (
    "use str, int, float, bool, list, dict, a TypedDict, a dataclass or Literal"
)
_LISTS: Final = frozenset(
    {list, collections.abc.Sequence, collections.abc.MutableSequence}
)
_DICTS: Final = frozenset(
    {dict, collections.abc.Mapping, collections.abc.MutableMapping}
)
_QUALIFIERS: Final = frozenset({"Required", "NotRequired", "ReadOnly"})
_NO_FIELD: Final[Any] = dataclasses.MISSING


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Shape:
    """What one annotation becomes: its prop fields and its converter."""

    fields: dict[str, Any]
    convert: Convert | None
    optional: bool = False
    description: str | None = None


class _Context:
    """Who is being analysed, for messages, and which classes are open."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.open: set[type] = set()

    def fail(self, path: str, problem: str) -> NoReturn:
        raise ToolDefinitionError(f'{self.where}: parameter "{path}" {problem}')

    def unsupported(self, path: str, tp: object, fix: str = _USE) -> NoReturn:
        self.fail(path, f"has unsupported type {_type_name(tp)}; {fix}")


def _type_name(tp: object) -> str:
    if tp is None or tp is type(None):
        return "None"
    if isinstance(tp, type) and not isinstance(tp, types.GenericAlias):
        if tp.__module__ == "builtins":
            return tp.__qualname__
        return f"{tp.__module__}.{tp.__qualname__}"
    return repr(tp)


# -- annotations → shapes -------------------------------------------------------


def _hints(obj: Any, where: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj, include_extras=True)
    except NameError:
        pass
    except Exception as exc:  # noqa: BLE001 - any failure is a definition error
        raise ToolDefinitionError(f"{where}: cannot read type hints ({exc})") from None
    localns: dict[str, Any] = {}
    for module, name in (
        ("dsh_nb.tools.pipeline", "ToolExecution"),
        ("dsh_nb.tools.execution", "ToolExecution"),
        ("dsh_nb.tools.abort", "AbortSignal"),
    ):
        try:
            localns.setdefault(name, getattr(__import__(module, fromlist=[name]), name))
        except (ImportError, AttributeError):
            continue
    try:
        return typing.get_type_hints(obj, localns=localns, include_extras=True)
    except Exception as exc:  # noqa: BLE001 - any failure is a definition error
        raise ToolDefinitionError(
            f"{where}: cannot resolve type hints ({exc}); import the names the "
            "annotations use at module level"
        ) from None


def _unwrap(tp: Any, path: str, ctx: _Context) -> tuple[Any, bool, str | None]:
    """Strip Annotated, Optional and TypedDict qualifiers."""
    optional = False
    description: str | None = None
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            if description is None:
                description = next(
                    (m for m in tp.__metadata__ if isinstance(m, str)), None
                )
            tp = tp.__origin__
        elif origin is typing.Union or origin is types.UnionType:
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(members) != 1:
                ctx.unsupported(path, tp, "a union is supported only as X | None")
            optional = True
            tp = members[0]
        elif getattr(origin, "_name", None) in _QUALIFIERS:
            tp = typing.get_args(tp)[0]
        elif hasattr(tp, "__supertype__"):
            tp = tp.__supertype__
        else:
            return tp, optional, description


def _injected(tp: Any) -> str | None:
    if not isinstance(tp, type):
        return None
    return _INJECTED.get((tp.__module__, tp.__qualname__))


def _shape(annotation: Any, path: str, ctx: _Context) -> _Shape:
    tp, optional, description = _unwrap(annotation, path, ctx)
    fields, convert = _describe(tp, path, ctx)
    return _Shape(
        fields=fields, convert=convert, optional=optional, description=description
    )


def _describe(tp: Any, path: str, ctx: _Context) -> tuple[dict[str, Any], Any]:
    if tp is str:
        return {"type": "string"}, None
    if tp is bool:
        return {"type": "boolean"}, None
    if tp is float:
        return {"type": "number"}, None
    if tp is int:
        return {"type": "number"}, to_int
    origin = typing.get_origin(tp) or tp
    args = typing.get_args(tp)
    if origin is typing.Literal:
        if not all(type(v) is str for v in args):
            ctx.unsupported(path, tp, "Literal values must be strings")
        return {"type": "string", "enum": args}, None
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _describe_enum(tp, path, ctx)
    if origin in _LISTS:
        if not args or args[0] is Any:
            return {"type": "array"}, None
        item = _shape(args[0], f"{path}[]", ctx)
        if item.optional:
            ctx.unsupported(path, tp, "list items cannot be None in JSON arguments")
        return {"type": "array", "items": _prop(item, False)}, list_of(item.convert)
    if origin in _DICTS:
        if args and args[0] is not str:
            ctx.unsupported(path, tp, "JSON object keys are strings: use dict[str, X]")
        value = None
        if len(args) == 2 and args[1] is not Any:
            value = _shape(args[1], f"{path}.*", ctx).convert
        return {"type": "object"}, dict_of(value)
    if isinstance(tp, type) and (_is_typeddict(tp) or dataclasses.is_dataclass(tp)):
        if tp in ctx.open:
            ctx.unsupported(path, tp, "recursive types cannot be described")
        ctx.open.add(tp)
        try:
            return _describe_class(tp, path, ctx)
        finally:
            ctx.open.discard(tp)
    ctx.unsupported(path, tp)


def _is_typeddict(tp: type) -> bool:
    if typing.is_typeddict(tp):
        return True
    return issubclass(tp, dict) and hasattr(tp, "__required_keys__")


def _describe_enum(
    tp: type[enum.Enum], path: str, ctx: _Context
) -> tuple[dict[str, Any], Convert]:
    values = [member.value for member in tp]
    if not all(type(v) is str for v in values):
        ctx.unsupported(path, tp, "enum members need str values")
    one_of = " must be one of " + compact_json(values)

    def convert(value: Any, path: str, errors: list[str]) -> Any:
        try:
            return tp(value)
        except ValueError:
            errors.append(f'"{path}"{one_of}')
            return value

    return {"type": "string", "enum": tuple(values)}, convert


def _describe_class(tp: type, path: str, ctx: _Context) -> tuple[dict[str, Any], Any]:
    hints = _hints(tp, ctx.where)
    docs = param_docs(docstring_of(tp))
    defaults: dict[str, Any] = {}
    if dataclasses.is_dataclass(tp):
        fields = [f for f in dataclasses.fields(tp) if f.init]
        names = [f.name for f in fields]
        defaults = {f.name: f.default for f in fields if f.default is not _NO_FIELD}
        optional = {f.name for f in fields if f.default_factory is not _NO_FIELD}
        optional.update(defaults)
    else:
        names = list(hints)
        optional = set(names) - set(getattr(tp, "__required_keys__", names))
        for name in names:  # string annotations hide the qualifier from the class
            qualifier = getattr(typing.get_origin(hints[name]), "_name", None)
            if qualifier == "NotRequired":
                optional.add(name)
            elif qualifier == "Required":
                optional.discard(name)
    props: dict[str, SchemaProp] = {}
    plan: list[tuple[str, Convert | None, bool]] = []
    for name in names:
        shape = _shape(hints[name], f"{path}.{name}", ctx)
        default = _json_default(defaults.get(name, ABSENT))
        if default is not ABSENT and not is_json_data(default):
            default = ABSENT  # the constructor still applies it
        required = name not in optional and not shape.optional
        props[name] = _prop(shape, required, docs.get(name), default=default)
        plan.append((name, shape.convert, shape.optional and name not in optional))
    fields_out = {"type": "object", "properties": props}
    if dataclasses.is_dataclass(tp):
        return fields_out, build(tp, plan)
    if all(convert is None and not fill for _, convert, fill in plan):
        return fields_out, None
    return fields_out, build(dict, plan)


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum) and type(value.value) is str:
        return value.value
    return value


def _prop(
    shape: _Shape,
    required: bool,
    doc: str | None = None,
    *,
    default: Any = ABSENT,
) -> SchemaProp:
    return SchemaProp(
        required=required,
        description=shape.description or doc or None,
        default=to_plain(default) if default is not ABSENT else ABSENT,
        **shape.fields,
    )


# -- public entry points --------------------------------------------------------


def _where(func: object) -> str:
    while isinstance(func, functools.partial):
        func = func.func
    name = getattr(func, "__name__", None) or type(func).__name__
    return f"@tool {name}()"


def _plan(func: Callable[..., Any]) -> tuple[list[Param], bool]:
    """Analyse ``func`` once: its parameters and whether it takes **kwargs."""
    where = _where(func)
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(
            f"{where}: cannot read its signature ({exc})"
        ) from None
    target = target_of(func)
    hints = _hints(target, where)
    docs = param_docs(docstring_of(target))
    ctx = _Context(where)
    params: list[Param] = []
    var_kw = False
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            var_kw = True
            continue
        if p.kind is p.VAR_POSITIONAL:
            ctx.fail(f"*{p.name}", "is not supported; declare named parameters")
        if p.name not in hints:
            ctx.fail(p.name, f"has no type annotation; {_USE}")
        params.append(_param(p, hints[p.name], docs.get(p.name), ctx))
    return params, var_kw


def _param(p: inspect.Parameter, hint: Any, doc: str | None, ctx: _Context) -> Param:
    positional = p.kind is p.POSITIONAL_ONLY
    has_default = p.default is not p.empty
    source = _injected(_unwrap(hint, p.name, ctx)[0])
    if source is not None:
        return Param(name=p.name, source=source, positional=positional, absent=None)
    shape = _shape(hint, p.name, ctx)
    default = ABSENT
    if has_default:
        default = _json_default(p.default)
        if not is_json_data(default):
            ctx.fail(
                p.name,
                f"has default {p.default!r}, which is not lossless JSON; use None, "
                "a str, int, float, bool, or a list/dict of those",
            )
    if has_default:
        absent: Any = p.default if positional else OMIT
    else:
        absent = None if shape.optional else REQUIRED
    return Param(
        name=p.name,
        source="args",
        positional=positional,
        absent=absent,
        convert=shape.convert,
        prop=_prop(shape, absent is REQUIRED, doc, default=default),
    )


def spec_from_signature(func: Callable[..., Any]) -> dict[str, SchemaProp]:
    """Describe ``func``'s parameters as a SchemaSpec, in signature order.

    Raises
    ------
    ToolDefinitionError
        For a parameter the DSL cannot describe, naming it and the fix.
    """
    params, _ = _plan(func)
    return {p.name: p.prop for p in params if p.prop is not None}


def bind_to_signature(
    func: Callable[..., Any],
) -> Callable[[Mapping[str, Any], Any], Any]:
    """Return ``body(args, execution)`` calling ``func`` with validated args.

    Extra keys are dropped unless ``func`` takes ``**kwargs``. An ``int``
    parameter given a fractional number raises :class:`ToolArgsError`.
    """
    return bind_with_check(func)[0]


def bind_with_check(
    func: Callable[..., Any],
) -> tuple[Callable[[Mapping[str, Any], Any], Any], Callable[[Any], list[str]]]:
    """:func:`bind_to_signature`, plus the dry conversion check ``@tool`` uses.

    The check lists what conversion would refuse (a fractional ``int``, an
    unknown enum value) so schema and conversion violations come back in one
    error; see :func:`~dsh_nb.tools._binding.bind`.
    """
    params, var_kw = _plan(func)
    return bind(func, params, var_kw)
