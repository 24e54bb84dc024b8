"""Signature tools: a function's parameters as one pydantic validator.

``@tool`` reads a function once, at definition: its parameters become the
fields of one ``TypedDict`` validated by a pydantic ``TypeAdapter``, the
MCP SDK's and openai-agents' approach, so every type pydantic knows works
(``int`` is ``"integer"``, ``X | None`` is nullable, unions, ``Literal``,
enums, ``datetime``, ``Path``, ``set``, ``tuple``, ``dict[str, X]``,
``TypedDict``, dataclasses, ``BaseModel``, ``Annotated[X, Field(...)]``).
A ``TypedDict``, not a ``BaseModel``: parameter names such as ``json`` or
``_private`` stay fields, and an absent optional parameter stays absent, so
Python applies the function's own default.

What the signature says beyond types:

- a description on the parameter (``Field(description=)`` or
  ``Annotated[X, "text"]``) wins over the docstring (Google, NumPy or
  Sphinx, through griffe);
- an unannotated parameter is accepted as ``Any`` with a warning: peers
  accept it, a notebook function is often untyped at first, and the
  warning tells the fix; the model still sees its name and description;
- ``*args: T`` is an array property named after it; ``**kwargs: T`` takes
  the extra keys, each checked as ``T`` (``additionalProperties``);
- ``x: T = None`` is read as ``x: T | None = None``, so the default the
  schema advertises is one the tool accepts; any other default must pass
  the parameter's own validation, or the definition fails;
- parameters typed ``ToolExecution``, ``AbortSignal`` or ``ToolContext``
  are filled by the pipeline, not the model;
- strings for ``datetime``, ``time``, ``timedelta``, ``UUID`` and
  ``Decimal`` are checked in exactly the forms the schema advertises
  (``_formats.py``), so the runtime takes what the schema allows, formats
  included; what the function returns is read in ``returns.py``.

pydantic and griffe are imported here, on the first ``@tool``: importing
this module costs nothing. The per-call half lives in ``_binding.py``.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
import warnings
from collections.abc import Callable
from typing import Any, Final, NoReturn

from dsh_nb.tools.errors import ToolDefinitionError
from dsh_nb.tools.jsonvalue import is_json_data
from dsh_nb.tools.signature import _annotations as ann
from dsh_nb.tools.signature import _formats
from dsh_nb.tools.signature._docstring import (
    docstring_of,
    docstring_summary,
    param_docs,
    target_of,
)
from dsh_nb.tools.signature.returns import ReturnPlan, plan_return

__all__ = [
    "Param",
    "SignaturePlan",
    "docstring_summary",
    "plan_signature",
]

# Core-schema types that read JSON-shaped Python data exactly as they read
# JSON text in strict mode. A dataclass does too once its own node is lax
# (strict Python wants an instance) and everything under it stays strict;
# any other type (datetime, Path, enums, tuples, sets...) reads strings and
# arrays only from JSON text, so those tools are validated from JSON text.
_SAME_IN_PYTHON: Final = frozenset(
    {"int", "float", "str", "bool", "none", "any", "list", "dict", "literal"}
    | {"nullable", "union", "default", "typed-dict", "typed-dict-field"}
    | {"model", "model-fields", "model-field", "definitions", "definition-ref"}
)
_DATACLASS: Final = frozenset({"dataclass", "dataclass-args", "dataclass-field"})
_STRICTABLE: Final = frozenset(
    {"int", "float", "str", "bool", "list", "dict", "typed-dict", "union", "model"}
    | {"model-fields"}
)
_SKIP_KEYS: Final = frozenset({"metadata", "serialization", "ref", "cls", "config"})


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Param:
    """One parameter, and where its value comes from at call time."""

    name: str
    kind: str  # "positional", "keyword", "varargs" or "varkw"
    source: str  # "args", "execution", "signal" or "context"
    default: Any = inspect.Parameter.empty  # passed when absent ("positional")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SignaturePlan:
    """A function read once: its validator, its schema, how to call it."""

    func: Callable[..., Any]
    where: str
    params: tuple[Param, ...]
    adapter: Any  # pydantic.TypeAdapter of the arguments' TypedDict
    extras: Any  # TypeAdapter of dict[str, T] for **kwargs: T, or None
    schema: dict[str, Any]
    validator: Any  # the pydantic-core SchemaValidator calls go through
    strict: bool | None  # passed to it: None when the schema sets strictness
    json_route: bool  # validate from JSON text (see _SAME_IN_PYTHON)
    coerce: bool
    returns: ReturnPlan


def _where(func: object) -> str:
    while isinstance(func, functools.partial):
        func = func.func
    name = getattr(func, "__name__", None) or type(func).__name__
    return f"@tool {name}()"


def _fail(where: str, name: str, problem: str) -> NoReturn:
    raise ToolDefinitionError(f'{where}: parameter "{name}" {problem}')


def _kinds(core: Any) -> set[str]:
    """Every core-schema type in ``core``."""
    out: set[str] = set()
    stack = [core]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kind = node.get("type")
            if isinstance(kind, str):
                out.add(kind)
            stack.extend(v for k, v in node.items() if k not in _SKIP_KEYS)
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return out


def _route(adapter: Any, coerce: bool) -> tuple[Any, bool | None, bool]:
    """Pick ``(validator, strict flag, from JSON text?)`` for a tool, once."""
    kinds = _kinds(adapter.core_schema)
    if coerce:
        return _with_formats(adapter, kinds, coerce=True), False, False
    if kinds <= _SAME_IN_PYTHON:
        return adapter.validator, True, False
    if kinds <= _SAME_IN_PYTHON | _DATACLASS:
        import copy

        from pydantic_core import SchemaError, SchemaValidator

        core = copy.deepcopy(adapter.core_schema)
        stack = [core]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                kind = node.get("type")
                if kind == "dataclass":
                    node["strict"] = False
                elif kind in _STRICTABLE:
                    node["strict"] = True
                elif kind == "literal" and not all(
                    type(v) is str for v in node.get("expected", ())
                ):  # no strict key: lax would take true for 1, "1" for 1
                    return adapter.validator, True, True
                stack.extend(v for k, v in node.items() if k not in _SKIP_KEYS)
            elif isinstance(node, list):
                stack.extend(node)
        try:
            return SchemaValidator(core), None, False
        except SchemaError:  # a pydantic-core that reads these keys otherwise
            pass
    return _with_formats(adapter, kinds, coerce=False), True, True


def _with_formats(adapter: Any, kinds: set[str], *, coerce: bool) -> Any:
    """The adapter's validator, checking strings as the schema says (``_formats``)."""
    if not kinds & _formats.KINDS:
        return adapter.validator
    import copy

    from pydantic_core import SchemaError, SchemaValidator

    core = copy.deepcopy(adapter.core_schema)
    _formats.patch_core(core, coerce=coerce)
    try:
        return SchemaValidator(core)
    except SchemaError:  # a pydantic-core that builds these otherwise
        return adapter.validator


_USE: Final = (
    "use a JSON type (str, int, float, bool, list, dict), datetime, Path, an Enum, "
    "Literal, a dataclass, a TypedDict or a pydantic BaseModel"
)


def _adapter(tp: Any, where: str, name: str | None) -> Any:
    from pydantic import PydanticUserError, TypeAdapter
    from pydantic.errors import PydanticSchemaGenerationError

    try:
        return TypeAdapter(tp)
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
        if name is None:
            raise
        shown = ann.type_name(ann.bare(tp))
        if isinstance(exc, PydanticUserError) and "typing_extensions" in str(exc):
            _fail(where, name, f"has type {shown}: {str(exc).splitlines()[0]}")
        _fail(where, name, f"has type {shown}, which pydantic cannot validate; {_USE}")


def plan_signature(func: Callable[..., Any], *, coerce: bool = False) -> SignaturePlan:
    """Read ``func`` once into its validator, schema and call plan.

    Raises
    ------
    ToolDefinitionError
        For a parameter that cannot be validated or described, naming the
        function, the parameter and the fix.
    """
    import typing_extensions as te
    from pydantic.errors import PydanticInvalidForJsonSchema
    from pydantic.fields import FieldInfo
    from pydantic_core import PydanticSerializationError, to_jsonable_python

    from dsh_nb.tools.schema.wireschema import tidy_schema

    where = _where(func)
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(
            f"{where}: cannot read its signature ({exc})"
        ) from None
    target = target_of(func)
    hints = ann.hints(target, where)
    docs = param_docs(docstring_of(target))
    has_varargs = any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values())
    fields: dict[str, Any] = {}
    texts: dict[str, str] = {}
    defaults: dict[str, Any] = {}
    params: list[Param] = []
    extras: Any = None
    done: dict[Any, Any] = {}
    classes: dict[str, type] = {}
    for p in sig.parameters.values():
        if p.name in hints:
            hint = hints[p.name]
        else:
            hint = Any
            warnings.warn(
                f'{where}: parameter "{p.name}" has no type annotation, so the '
                f"model is told nothing about it and any value is accepted; "
                f"annotate it (for example {p.name}: str)",
                UserWarning,
                stacklevel=4,
            )
        positional = p.kind is p.POSITIONAL_ONLY or (
            has_varargs and p.kind is p.POSITIONAL_OR_KEYWORD
        )
        kind = "positional" if positional else "keyword"
        source = ann.injected(hint)
        if source is not None and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            params.append(Param(name=p.name, kind=kind, source=source))
            continue
        hint = ann.modern_typeddicts(hint, done)
        ann.classes(hint, classes)
        text = ann.text_description(hint)
        if text:
            texts[p.name] = text
        if p.kind is p.VAR_KEYWORD:
            params.append(Param(name=p.name, kind="varkw", source="args"))
            if ann.strip(hint) is not Any:
                extras = _adapter(dict[str, hint], where, f"**{p.name}")  # type: ignore[valid-type]
            continue
        if p.kind is p.VAR_POSITIONAL:
            params.append(Param(name=p.name, kind="varargs", source="args"))
            fields[p.name] = te.NotRequired[list[hint]]  # type: ignore[valid-type]
            continue
        default = p.default
        if isinstance(default, FieldInfo):
            hint = typing.Annotated[hint, default]
            fields[p.name] = (te.Required if default.is_required() else te.NotRequired)[
                hint
            ]
            params.append(Param(name=p.name, kind=kind, source="args"))
            continue
        if default is p.empty:
            fields[p.name] = te.Required[hint]
        else:
            if default is None and not ann.accepts_none(hint):
                hint = typing.Optional[hint]  # noqa: UP045 - a runtime value
            fields[p.name] = te.NotRequired[hint]
            defaults[p.name] = default
        params.append(Param(name=p.name, kind=kind, source="args", default=default))
    typed_dict: Any = te.TypedDict
    arguments: Any = typed_dict("Arguments", fields)
    try:
        adapter = _adapter(arguments, where, None)
    except Exception:
        for name, hint in fields.items():
            _adapter(typing.get_args(hint)[0], where, name)
        raise
    try:
        raw = adapter.json_schema(schema_generator=_formats.json_schema_generator())
    except PydanticInvalidForJsonSchema:
        bad = next(
            (n for n, h in fields.items() if not _describable(typing.get_args(h)[0])),
            "?",
        )
        shown = ann.type_name(ann.bare(fields[bad])) if bad in fields else "?"
        _fail(
            where, bad, f"has type {shown}, which JSON Schema cannot describe; {_USE}"
        )
    ann.describe_classes(raw, classes)
    schema = tidy_schema(raw)
    props: dict[str, Any] = schema.setdefault("properties", {})
    for name, prop in props.items():
        if isinstance(prop, dict) and "description" not in prop:
            text = texts.get(name) or docs.get(name)
            if text:
                prop["description"] = text
    if extras is not None:
        more = extras.json_schema(schema_generator=_formats.json_schema_generator())
        schema["additionalProperties"] = tidy_schema(more).get(
            "additionalProperties", {}
        )
    for name, prop in list(props.items()):
        props[name] = _ordered(prop)
    schema = _ordered(schema, ("type", "properties", "required"))
    route = _route(adapter, coerce)
    wire: dict[str, Any] = {}
    for name, value in defaults.items():
        try:
            wire[name] = to_jsonable_python(value)
        except PydanticSerializationError:
            wire[name] = _NO_JSON
        if not is_json_data(wire[name]):
            _fail(where, name, f"has default {value!r}, which has no JSON form")
    problems = _check_defaults(route, wire, schema)
    for name, problem in problems.items():
        _fail(where, name, f"has default {defaults[name]!r}, which {problem}")
    for name, value in wire.items():
        props[name]["default"] = value
    _formats.merge_notes(schema)
    return SignaturePlan(
        func=func,
        where=where,
        params=tuple(params),
        adapter=adapter,
        extras=extras,
        schema=schema,
        validator=route[0],
        strict=route[1],
        json_route=route[2],
        coerce=coerce,
        returns=plan_return(hints, where),
    )


_NO_JSON: Final = object()


def _ordered(
    node: dict[str, Any], first: tuple[str, ...] = ("type", "anyOf", "description")
) -> dict[str, Any]:
    """The same schema with its most telling keys first, as people read it."""
    out = {k: node[k] for k in first if k in node}
    out.update((k, v) for k, v in node.items() if k not in out)
    return out


def _describable(hint: Any) -> bool:
    try:
        _adapter(hint, "", None).json_schema()
    except Exception:  # noqa: BLE001 - only asking whether it works
        return False
    return True


def _check_defaults(
    route: tuple[Any, bool | None, bool],
    values: dict[str, Any],
    schema: dict[str, Any],
) -> dict[str, str]:
    """Which of ``values`` the tool's own validation refuses, and why."""
    from pydantic import ValidationError
    from pydantic_core import to_json

    from dsh_nb.tools.signature._violations import violations

    if not values:
        return {}
    validator, strict, json_route = route
    try:
        if json_route:
            validator.validate_json(to_json(values), strict=strict)
        else:
            validator.validate_python(values, strict=strict)
    except ValidationError as exc:
        out: dict[str, str] = {}
        for error in exc.errors(include_url=False):
            loc = error.get("loc", ())
            if error.get("type") == "missing" or not loc or loc[0] not in values:
                continue
            clause = violations([error], schema)[0]
            out.setdefault(str(loc[0]), f"its own schema refuses ({clause})")
        return out
    return {}
