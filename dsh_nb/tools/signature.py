"""Tool schemas from Python signatures: type hints, defaults and docstrings.

``@tool`` turns a plain function into a tool. :func:`spec_from_signature`
reads its parameters into a :data:`~dsh_nb.tools.schema.SchemaSpec` and
rejects, at definition time, every annotation the DSL cannot describe.
:func:`bind_to_signature` turns validated JSON arguments back into the call
the function expects (dataclass instances, enum members, checked integers,
the injected execution and signal). Descriptions come from ``Annotated``
metadata or Google/NumPy docstrings.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final, NoReturn, TypeAlias

from dsh_nb.tools.errors import ToolArgsError, ToolDefinitionError
from dsh_nb.tools.jsonvalue import ABSENT, compact_json, is_json_data, to_plain
from dsh_nb.tools.schema import SchemaProp

__all__ = ["bind_to_signature", "docstring_summary", "spec_from_signature"]

# Matched by name so this module never imports the pipeline at import time.
_INJECTED: Final = {
    ("dsh_nb.tools.pipeline", "ToolExecution"): "execution",
    ("dsh_nb.tools.execution", "ToolExecution"): "execution",
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
_OMIT: Final = object()
_REQUIRED: Final = object()
_NOTHING: Final[frozenset[type]] = frozenset()
_MISSING: Final = object()
_dict_get: Final = dict.get

Convert: TypeAlias = Callable[[Any, str, list[str]], Any]
"""(value, path, violations) → the value the function should receive."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Shape:
    """What one annotation becomes: its prop fields and its converter."""

    fields: dict[str, Any]
    convert: Convert | None
    optional: bool = False
    description: str | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Param:
    name: str
    source: str  # "args", "execution" or "signal"
    positional: bool
    absent: Any  # _OMIT, _REQUIRED or the value to pass when missing
    convert: Convert | None = None
    prop: SchemaProp | None = None


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


# -- docstrings -----------------------------------------------------------------

_GOOGLE: Final = frozenset(
    {"args", "arguments", "parameters", "params", "attributes", "keyword args"}
)
_SECTIONS: Final = _GOOGLE | {"returns", "raises", "yields", "examples", "notes"}
_NUMPY: Final = frozenset({"parameters", "other parameters", "attributes"})
_RULE: Final = re.compile(r"-{3,}")
_GOOGLE_ENTRY: Final = re.compile(r"\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:(.*)")
_NUMPY_ENTRY: Final = re.compile(r"(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_header(lines: list[str], i: int) -> bool:
    """Whether line ``i`` opens a Google or NumPy section."""
    text = lines[i].strip()
    if i + 1 < len(lines) and _RULE.fullmatch(lines[i + 1].strip()) and text:
        return True
    return text.endswith(":") and text[:-1].strip().lower() in _SECTIONS


def _docstring(obj: object) -> str:
    return inspect.cleandoc(getattr(obj, "__doc__", None) or "")


def docstring_summary(func: object) -> str:
    """Return the docstring's first paragraph on one line ('' when none)."""
    lines = _docstring(_target(func)).splitlines()
    para: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip() or _is_header(lines, i):
            if para or _is_header(lines, i):
                break
            continue
        para.append(line)
    return " ".join(" ".join(para).split())


def _param_docs(doc: str) -> dict[str, str]:
    """Map parameter name → description from Google or NumPy sections."""
    lines = doc.splitlines()
    out: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        text = lines[i].strip()
        numpy = i + 1 < len(lines) and _RULE.fullmatch(lines[i + 1].strip())
        if numpy and text.lower() in _NUMPY:
            i = _numpy_section(lines, i + 2, _indent(lines[i]), out)
        elif text.endswith(":") and text[:-1].strip().lower() in _GOOGLE:
            i = _google_section(lines, i + 1, _indent(lines[i]), out)
        else:
            i += 1
    return {name: " ".join(" ".join(parts).split()) for name, parts in out.items()}


def _google_section(
    lines: list[str], i: int, header: int, out: dict[str, list[str]]
) -> int:
    entry_indent: int | None = None
    current: list[str] | None = None
    while i < len(lines):
        line = lines[i]
        if line.strip():
            indent = _indent(line)
            if indent <= header:
                break
            if entry_indent is None:
                entry_indent = indent
            match = _GOOGLE_ENTRY.fullmatch(line.strip())
            if indent <= entry_indent and match:
                current = out.setdefault(match.group(1), [])
                current.append(match.group(2))
            elif current is not None:
                current.append(line)
        i += 1
    return i


def _numpy_section(
    lines: list[str], i: int, header: int, out: dict[str, list[str]]
) -> int:
    current: list[list[str]] = []
    while i < len(lines):
        line = lines[i]
        if line.strip():
            if _is_header(lines, i) and _indent(line) <= header:
                break
            match = _NUMPY_ENTRY.fullmatch(line.strip())
            if _indent(line) <= header and match:
                names = [n.strip().lstrip("*") for n in match.group(1).split(",")]
                current = [out.setdefault(n, []) for n in names]
            else:
                for parts in current:
                    parts.append(line)
        i += 1
    return i


# -- annotations → shapes -------------------------------------------------------


def _target(func: object) -> Any:
    """The function whose hints and docstring describe ``func``."""
    while isinstance(func, functools.partial):
        func = func.func
    if inspect.isroutine(func) or inspect.isclass(func) or not callable(func):
        return func
    return type(func).__call__


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
        ("dsh_nb.tools.timeout", "AbortSignal"),
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
        return {"type": "number"}, _to_int
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
        return {"type": "array", "items": _prop(item, False)}, _list_of(item.convert)
    if origin in _DICTS:
        if args and args[0] is not str:
            ctx.unsupported(path, tp, "JSON object keys are strings: use dict[str, X]")
        value = None
        if len(args) == 2 and args[1] is not Any:
            value = _shape(args[1], f"{path}.*", ctx).convert
        return {"type": "object"}, _dict_of(value)
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
    docs = _param_docs(_docstring(tp))
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
        return fields_out, _build(tp, plan)
    if all(convert is None and not fill for _, convert, fill in plan):
        return fields_out, None
    return fields_out, _build(dict, plan)


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


# -- converters -----------------------------------------------------------------


def _to_int(value: Any, path: str, errors: list[str]) -> Any:
    if type(value) is int:
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    errors.append(f'"{path}" must be an integer')
    return value


_SKIP: Final[dict[Any, frozenset[type]]] = {_to_int: frozenset({int})}


def _list_of(item: Convert | None) -> Convert | None:
    if item is None:
        return None

    def convert(value: Any, path: str, errors: list[str]) -> Any:
        if not isinstance(value, list):
            return value
        return [item(x, f"{path}[{i}]", errors) for i, x in enumerate(value)]

    return convert


def _dict_of(item: Convert | None) -> Convert | None:
    if item is None:
        return None

    def convert(value: Any, path: str, errors: list[str]) -> Any:
        if not isinstance(value, dict):
            return value
        return {k: item(x, f"{path}.{k}", errors) for k, x in value.items()}

    return convert


def _build(
    cls: Callable[..., Any], plan: list[tuple[str, Convert | None, bool]]
) -> Convert:
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
        return cls(**out) if len(errors) == before else value

    return convert


# -- public entry points --------------------------------------------------------


def _where(func: object) -> str:
    while isinstance(func, functools.partial):
        func = func.func
    name = getattr(func, "__name__", None) or type(func).__name__
    return f"@tool {name}()"


def _plan(func: Callable[..., Any]) -> tuple[list[_Param], bool]:
    """Analyse ``func`` once: its parameters and whether it takes **kwargs."""
    where = _where(func)
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(
            f"{where}: cannot read its signature ({exc})"
        ) from None
    target = _target(func)
    hints = _hints(target, where)
    docs = _param_docs(_docstring(target))
    ctx = _Context(where)
    params: list[_Param] = []
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


def _param(p: inspect.Parameter, hint: Any, doc: str | None, ctx: _Context) -> _Param:
    positional = p.kind is p.POSITIONAL_ONLY
    has_default = p.default is not p.empty
    source = _injected(_unwrap(hint, p.name, ctx)[0])
    if source is not None:
        return _Param(name=p.name, source=source, positional=positional, absent=None)
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
        absent: Any = p.default if positional else _OMIT
    else:
        absent = None if shape.optional else _REQUIRED
    return _Param(
        name=p.name,
        source="args",
        positional=positional,
        absent=absent,
        convert=shape.convert,
        prop=_prop(shape, absent is _REQUIRED, doc, default=default),
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
    params, var_kw = _plan(func)
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
    needed = frozenset(p.name for p in params if p.absent is not _OMIT)
    ints = tuple(p.name for p in params if p.convert is _to_int)
    direct = not (leading or injected) and all(
        p.convert is None or p.convert is _to_int for p in params
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

    def general(args: Mapping[str, Any], execution: Any) -> Any:
        if type(args) is not dict and not isinstance(args, dict):
            args = dict(args)
        errors: list[str] = []
        kwargs: dict[str, Any] = {}
        for name, convert, skip, absent in steps:
            value = _dict_get(args, name, _MISSING)
            if value is _MISSING:
                if absent is _OMIT:
                    continue
                if absent is _REQUIRED:
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
        if errors:
            raise ToolArgsError(errors)
        if var_kw:
            for key, value in dict.items(args):
                if type(key) is str and key not in names:
                    kwargs[key] = value
        return func(*positional, **kwargs)

    return body


def _lead(p: _Param, args: dict[str, Any], execution: Any, errors: list[str]) -> Any:
    """The value of a positional-only parameter (rare, so not inlined)."""
    if p.source != "args":
        return (
            execution if p.source == "execution" else getattr(execution, "signal", None)
        )
    value = _dict_get(args, p.name, _MISSING)
    if value is _MISSING:
        if p.absent is _REQUIRED:
            errors.append(f'missing required property "{p.name}"')
        return p.absent
    return value if p.convert is None else p.convert(value, p.name, errors)
