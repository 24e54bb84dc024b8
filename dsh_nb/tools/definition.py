"""Tool definitions: ``define_tool``, the ``@tool`` decorator, results.

``define_tool`` validates model-generated arguments *before* the typed body
runs, so a model that gets the schema wrong receives an ``INVALID_ARGS``
result it can correct from, and the body never sees bad input.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

from dsh_nb.tools.errors import ToolArgsError, ToolDefinitionError
from dsh_nb.tools.jsonvalue import ABSENT, NotJsonError, snapshot_json, to_plain
from dsh_nb.tools.names import check_tool_name
from dsh_nb.tools.origin import note_origin
from dsh_nb.tools.running.abort import is_positive_finite
from dsh_nb.tools.running.worker import mark_async
from dsh_nb.tools.schema.argcheck import mark_check
from dsh_nb.tools.surrogates import escape_surrogates, has_surrogate

if TYPE_CHECKING:
    from dsh_nb.tools.presentation import ToolCallView, ToolResultView
    from dsh_nb.tools.values.execution import ToolExecution

__all__ = [
    "ToolDefinition",
    "ToolResult",
    "define_tool",
    "text_block",
    "tool",
]

F = TypeVar("F", bound=Callable[..., Any])
Validator = Callable[[object], list[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What ``present_result`` receives: content, error flag, private meta."""

    content: Sequence[Mapping[str, Any]]
    is_error: bool
    meta: Any = ABSENT


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDefinition:
    """A registered tool: the model-facing schema plus its behaviour.

    Only ``name``, ``description`` and ``parameters`` ever reach a model
    (``ToolRegistry.schemas`` projects them by an explicit allowlist).
    ``output_schema`` is the JSON Schema of the structured content a result
    carries in ``meta["structuredContent"]`` (a signature tool's return
    annotation, an MCP server's declaration); ``serve_mcp`` lists it.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    execute: Callable[[Any, ToolExecution], Any]
    timeout_ms: float | None = None
    present_call: Callable[[Any], ToolCallView | None] | None = None
    present_result: Callable[[Any, ToolResult], ToolResultView | None] | None = None
    output_schema: Mapping[str, Any] | None = None


def text_block(text: str) -> dict[str, str]:
    """One text content block."""
    return {"type": "text", "text": text}


def _is_raw_json_schema(parameters: Mapping[str, Any]) -> bool:
    # A SchemaSpec maps names to props; a JSON Schema has a str "type".
    return isinstance(parameters.get("type"), str)


def _check_timeout(name: str, timeout_ms: object) -> None:
    if timeout_ms is not None and not is_positive_finite(timeout_ms):
        raise ToolDefinitionError(
            f"defineTool({name}): timeoutMs must be a positive finite number "
            f"(got {timeout_ms!r})"
        )


def _positional_arity(fn: Callable[..., Any]) -> int:
    """How many positional arguments ``fn`` takes (2 if it takes *args)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    count = 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return 2
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


def define_tool(
    *,
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    execute: Callable[..., Any],
    timeout_ms: float | None = None,
    present_call: Callable[[Any], ToolCallView | None] | None = None,
    present_result: Callable[[Any, ToolResult], ToolResultView | None] | None = None,
    check_name: bool = True,
) -> ToolDefinition:
    """Build a validated tool from a SchemaSpec or a raw JSON Schema.

    Parameters
    ----------
    parameters
        A SchemaSpec (``{"a": SchemaProp(type="number", required=True)}`` or
        plain dicts of that shape), or a JSON Schema object as pasted from an
        OpenAI function definition (validated with jsonschema).
    execute
        ``execute(args, execution)`` or ``execute(args)``, sync or async; it
        returns a list of content blocks, ``{"content": [...], "meta": ...}``
        or a ``str``.
    check_name
        Refuse a name model APIs reject (anything but 1-64 ASCII letters,
        digits, ``_`` and ``-``), suggesting one that works. Pass ``False``
        for a tool that never reaches a model API under this name.
    """
    from dsh_nb.tools.schema import spec as schema

    _check_common(name, description, execute, timeout_ms, check_name, "defineTool")
    if not isinstance(parameters, Mapping):
        raise ToolDefinitionError(
            f"defineTool({name}): parameters must be a SchemaSpec or a JSON Schema "
            f"object, not {type(parameters).__name__}"
        )
    validator: Validator
    if _is_raw_json_schema(parameters):
        try:
            json_schema = to_plain(snapshot_json(parameters))
        except NotJsonError as exc:
            raise ToolDefinitionError(
                f"defineTool({name}): parameters are not lossless JSON: {exc}"
            ) from None
        validator = schema.compile_json_schema_validator(json_schema)
    else:
        spec = schema.check_spec(parameters, tool_name=name)
        json_schema = schema.schema_spec_to_json_schema(spec)
        validator = schema.args_validator(spec)

    body = execute
    if _positional_arity(execute) == 1:
        one = execute

        def body(args: Any, execution: Any) -> Any:
            return one(args)

    def run(args: Any, execution: ToolExecution) -> Any:
        violations = validator(args)
        if violations:
            raise ToolArgsError(violations)
        return body(args, execution)

    run.__qualname__ = f"{getattr(execute, '__qualname__', name)}"
    mark_async(run, execute)
    note_origin(run, execute)
    return _finish(
        name=name,
        description=description,
        parameters=json_schema,
        run=run,
        validator=validator,
        timeout_ms=timeout_ms,
        present_call=present_call,
        present_result=present_result,
    )


def _check_common(
    name: object,
    description: object,
    execute: object,
    timeout_ms: object,
    check_name: bool,
    where: str,
) -> None:
    if not isinstance(name, str) or not name:
        raise ToolDefinitionError(
            f"{where}: name must be a non-empty str, not {name!r}"
        )
    if has_surrogate(name):
        raise ToolDefinitionError(
            f"{where}: name {escape_surrogates(name)!r} holds a lone surrogate, "
            "which no display, log or model can carry; use whole characters"
        )
    if check_name:
        problem = check_tool_name(name, f"{where}({name})")
        if problem is not None:
            raise ToolDefinitionError(problem)
    if not isinstance(description, str):
        raise ToolDefinitionError(
            f"{where}({name}): description must be a str, not {description!r}"
        )
    _check_timeout(name, timeout_ms)
    if not callable(execute):
        raise ToolDefinitionError(f"{where}({name}): execute must be callable")


def _finish(
    *,
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    run: Callable[[Any, ToolExecution], Any],
    validator: Validator,
    timeout_ms: float | None,
    present_call: Callable[[Any], ToolCallView | None] | None,
    present_result: Callable[[Any, ToolResult], ToolResultView | None] | None,
    output_schema: Mapping[str, Any] | None = None,
) -> ToolDefinition:
    """The definition, with presenters that skip arguments the tool refuses."""
    mark_check(run, validator)  # a dry run checks arguments without the body
    call_presenter = None
    if present_call is not None:
        author_call = present_call

        def call_presenter(args: Any) -> ToolCallView | None:
            return None if validator(args) else author_call(args)

    result_presenter = None
    if present_result is not None:
        author_result = present_result

        def result_presenter(args: Any, result: ToolResult) -> ToolResultView | None:
            return None if validator(args) else author_result(args, result)

    return ToolDefinition(
        name=name,
        description=description,
        parameters=parameters,
        execute=run,
        timeout_ms=timeout_ms,
        present_call=call_presenter,
        present_result=result_presenter,
        output_schema=output_schema,
    )


@overload
def tool(func: F, /) -> ToolDefinition: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout_ms: float | None = None,
    present_call: Callable[[Any], ToolCallView | None] | None = None,
    present_result: Callable[[Any, ToolResult], ToolResultView | None] | None = None,
    coerce: bool = False,
) -> Callable[[F], ToolDefinition]: ...


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout_ms: float | None = None,
    present_call: Callable[[Any], ToolCallView | None] | None = None,
    present_result: Callable[[Any, ToolResult], ToolResultView | None] | None = None,
    coerce: bool = False,
) -> ToolDefinition | Callable[[F], ToolDefinition]:
    """Turn a typed function into a tool; pydantic reads its signature.

    The parameters' JSON Schema, the validation and the conversion to the
    annotated types come from one pydantic validator built here, once (see
    :mod:`dsh_nb.tools.signature.plan` for what each kind of parameter becomes).
    The name must suit model APIs (1-64 ASCII letters, digits, ``_``, ``-``).

    Parameters
    ----------
    coerce
        ``False`` (the default): strict, an argument must have the JSON type
        the schema names (``"50"`` is refused with ``"n" must be an
        integer``; ``50.0`` is taken as ``50``; ISO 8601 strings for dates
        and times). ``True``: pydantic's lax mode, which also converts
        ``"50"`` to ``50`` and ``"true"`` to ``True``.

    Examples
    --------
    >>> @tool
    ... def add(a: int, b: int) -> str:
    ...     '''Add two integers.'''
    ...     return str(a + b)
    >>> add.parameters["properties"]["a"]
    {'type': 'integer'}
    """

    def build(fn: Callable[..., Any]) -> ToolDefinition:
        from dsh_nb.tools import signature

        tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
        text = description
        if text is None:
            text = signature.docstring_summary(fn)
        _check_common(tool_name, text, fn, timeout_ms, True, "@tool")
        plan = signature.plan_signature(fn, coerce=coerce)
        body, check = signature.bind(plan)
        mark_async(body, fn)
        note_origin(body, fn)
        return _finish(
            name=tool_name,
            description=text,
            parameters=plan.schema,
            run=body,
            validator=check,
            timeout_ms=timeout_ms,
            present_call=present_call,
            present_result=present_result,
            output_schema=plan.returns.output_schema,
        )

    if func is not None:
        return build(func)
    return build
