"""Validate a signature tool's arguments with pydantic, then call it.

The per-call half of ``@tool``: ``signature.py`` reads a function once into
a :class:`~dsh_nb.tools.signature.plan.SignaturePlan`, and :func:`bind` turns
that plan into ``body(args, execution)``. One validation per call, with the
validator built at definition (pydantic's ``validate_call`` does the same).

**Coercion.** By default a tool is strict: an argument must already have
the JSON type its schema names, as JSON Schema defines it. ``"50"`` is not
an integer and ``1`` is not ``true``; ``50.0`` *is* an integer (JSON Schema
says so, and models send it), so it is passed on as ``50``. Strings stand
for what JSON has no type for: ISO 8601 for ``datetime``/``date``/
``time``/``timedelta``, a path for ``Path``, the value for an enum member.
So the schema the model saw is exactly what the tool accepts, and a refusal
tells the model what to send. ``@tool(coerce=True)`` opts into pydantic's
lax mode instead (``"50"`` → ``50``, ``"true"`` → ``True``, a Unix time for
a ``datetime``) for tools that would rather guess than refuse.

``null`` is a value like any other: ``nrows: int = 100`` refuses it
(``"nrows" must be an integer``), as its schema (``{"type": "integer",
"default": 100}``) says; leave an argument out for its default, or write
``nrows: int | None = 100`` to take ``null`` as ``None``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from dsh_nb.tools.context.binding import current_tool_context
from dsh_nb.tools.errors import ToolArgsError
from dsh_nb.tools.signature._violations import locate, violations
from dsh_nb.tools.signature.plan import SignaturePlan, plan_signature
from dsh_nb.tools.signature.returns import ReturnPlan, convert_return

__all__ = ["bind", "bind_to_signature"]

_MISSING: Final = object()
_WHOLE_FLOAT_ERRORS: Final = frozenset(
    {"int_type", "int_from_float", "literal_error", "enum"}
)


def _patched(args: Any, keys: list[int | str], value: int) -> Any:
    """A copy of ``args`` with ``value`` at ``keys`` (only that path copied)."""
    if not keys:
        return value
    head, rest = keys[0], keys[1:]
    if isinstance(args, dict) and head in args:
        out = dict(args)
        out[head] = _patched(args[head], rest, value)
        return out
    if isinstance(args, list) and isinstance(head, int) and 0 <= head < len(args):
        items = list(args)
        items[head] = _patched(args[head], rest, value)
        return items
    return args


def _at(args: Any, keys: list[int | str]) -> Any:
    for key in keys:
        if isinstance(args, dict):
            args = args.get(key, _MISSING)
        elif isinstance(args, list) and isinstance(key, int) and 0 <= key < len(args):
            args = args[key]
        else:
            return _MISSING
    return args


def make_validate(
    validator: Any,
    schema: Mapping[str, Any],
    *,
    strict: bool | None,
    json_route: bool,
    names: frozenset[str] | None = None,
) -> Callable[[Any], Any]:
    """Return ``validate(args)``: the arguments as the function wants them.

    Raises :class:`ToolArgsError` listing every violation in house style.
    """
    from pydantic import ValidationError
    from pydantic_core import PydanticSerializationError, to_json

    by_python = validator.validate_python
    by_json = validator.validate_json

    def once(args: Any) -> Any:
        if json_route:
            if names is not None and isinstance(args, Mapping):
                # Undeclared keys are ignored anyway; unsent, they cannot
                # trip the JSON parser (depth, size) on the tool's behalf.
                args = {k: v for k, v in args.items() if k in names}
            try:
                text = to_json(args)
            except PydanticSerializationError:
                return by_python(args, strict=strict)
            return by_json(text, strict=strict)
        return by_python(args, strict=strict)

    def validate(args: Any) -> Any:
        try:
            return once(args)
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
        if strict is not False:  # lax mode converts whole floats itself
            fixed = args
            for error in errors:
                value = error.get("input")
                if (
                    error.get("type") in _WHOLE_FLOAT_ERRORS
                    and type(value) is float
                    and value.is_integer()
                ):
                    keys = locate(error.get("loc", ()), schema)[1]
                    now = _at(fixed, keys)
                    if type(now) is float and now == value:
                        fixed = _patched(fixed, keys, int(value))
            if fixed is not args:
                try:
                    return once(fixed)
                except ValidationError as exc:
                    errors = exc.errors(include_url=False)
        raise ToolArgsError(violations(errors, schema))

    return validate


def bind(
    plan: SignaturePlan, *, convert: bool = True
) -> tuple[Callable[[Any, Any], Any], Callable[[Any], list[str]]]:
    """Return ``body(args, execution)`` and ``check(args) -> violations``.

    ``body`` validates, converts and calls the function, and turns what it
    returns into a result's form (:mod:`dsh_nb.tools.signature.returns`; with
    ``convert=False`` it hands back the function's own value); ``check``
    only validates (presenters use it to skip arguments a tool would refuse).
    """
    func = plan.func
    strict = not plan.coerce
    validate = make_validate(
        plan.validator,
        plan.schema,
        strict=plan.strict,
        json_route=plan.json_route,
        names=frozenset(plan.schema.get("properties", {})),
    )
    params = plan.params
    names = frozenset(p.name for p in params if p.kind != "varkw")
    takes_kwargs = any(p.kind == "varkw" for p in params)
    direct = all(p.kind == "keyword" and p.source == "args" for p in params)
    extras = None
    if plan.extras is not None:
        extras = make_validate(
            plan.extras.validator, plan.schema, strict=strict, json_route=True
        )

    returns = plan.returns

    def body(args: Any, execution: Any) -> Any:
        values = validate(args)
        out = func(**values) if direct else general(args, values, execution)
        if not convert:
            return out
        if inspect.isawaitable(out):
            return _converted(returns, out)
        return convert_return(returns, out)

    def general(args: Any, values: dict[str, Any], execution: Any) -> Any:
        positional: list[Any] = []
        for p in params:
            if p.source != "args":
                value = execution
                if p.source == "signal":
                    value = getattr(execution, "signal", None)
                elif p.source == "context":
                    value = current_tool_context()
                if p.kind == "positional":
                    positional.append(value)
                else:
                    values[p.name] = value
            elif p.kind == "positional":
                value = values.pop(p.name, _MISSING)
                if value is _MISSING:
                    value = p.default
                positional.append(value)
            elif p.kind == "varargs":
                positional.extend(values.pop(p.name, ()))
        if takes_kwargs and isinstance(args, Mapping):
            more = {k: v for k, v in args.items() if type(k) is str and k not in names}
            if more and extras is not None:
                more = extras(more)
            values.update(more)
        return func(*positional, **values)

    def check(args: Any) -> list[str]:
        try:
            validate(args)
        except ToolArgsError as exc:
            return list(exc.violations)
        return []

    return body, check


async def _converted(returns: ReturnPlan, pending: Awaitable[Any]) -> Any:
    return convert_return(returns, await pending)


def bind_to_signature(
    func: Callable[..., Any], *, coerce: bool = False
) -> Callable[[Any, Any], Any]:
    """Return ``body(args, execution)``: validate with pydantic, then call.

    Raises :class:`~dsh_nb.tools.errors.ToolArgsError` for arguments the
    function's signature refuses; extra keys go to ``**kwargs`` or away.
    ``body`` returns what the function returns (``@tool`` converts it).
    """
    return bind(plan_signature(func, coerce=coerce), convert=False)[0]
