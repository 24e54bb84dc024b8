"""Tool definitions: ``define_tool``, the ``@tool`` decorator, results.

``define_tool`` validates model-generated arguments *before* the typed body
runs, so a model that gets the schema wrong receives an ``INVALID_ARGS``
result it can correct from, and the body never sees bad input.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

from dsh_nb.tools._restriction import check_timeout_ms
from dsh_nb.tools.errors import ToolArgsError, ToolDefinitionError
from dsh_nb.tools.jsonvalue import ABSENT, NotJsonError, snapshot_json, to_plain
from dsh_nb.tools.surrogates import escape_surrogates, has_surrogate

if TYPE_CHECKING:
    from dsh_nb.tools.execution import ToolExecution
    from dsh_nb.tools.presentation import ToolCallView, ToolResultView

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
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    execute: Callable[[Any, ToolExecution], Any]
    timeout_ms: float | None = None
    present_call: Callable[[Any], ToolCallView | None] | None = None
    present_result: Callable[[Any, ToolResult], ToolResultView | None] | None = None


def text_block(text: str) -> dict[str, str]:
    """One text content block."""
    return {"type": "text", "text": text}


def _is_raw_json_schema(parameters: Mapping[str, Any]) -> bool:
    # A SchemaSpec maps names to props; a JSON Schema has a str "type".
    return isinstance(parameters.get("type"), str)


def _check_timeout(name: str, timeout_ms: object) -> None:
    if timeout_ms is not None and not check_timeout_ms(timeout_ms):
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
    """
    return _define(
        name=name,
        description=description,
        parameters=parameters,
        execute=execute,
        timeout_ms=timeout_ms,
        present_call=present_call,
        present_result=present_result,
        conversions=None,
    )


def _define(
    *,
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    execute: Callable[..., Any],
    timeout_ms: float | None,
    present_call: Callable[[Any], ToolCallView | None] | None,
    present_result: Callable[[Any, ToolResult], ToolResultView | None] | None,
    conversions: Callable[[Any], list[str]] | None,
) -> ToolDefinition:
    """:func:`define_tool`; ``conversions`` adds ``@tool``'s dry conversion check."""
    from dsh_nb.tools import schema

    if not isinstance(name, str) or not name:
        raise ToolDefinitionError(
            f"defineTool: name must be a non-empty str, not {name!r}"
        )
    if has_surrogate(name):
        raise ToolDefinitionError(
            f"defineTool: name {escape_surrogates(name)!r} holds a lone surrogate, "
            "which no display, log or model can carry; use whole characters"
        )
    if not isinstance(description, str):
        raise ToolDefinitionError(
            f"defineTool({name}): description must be a str, not {description!r}"
        )
    _check_timeout(name, timeout_ms)
    if not callable(execute):
        raise ToolDefinitionError(f"defineTool({name}): execute must be callable")
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
        validator = schema.compile_validator(spec)

    body = execute
    if _positional_arity(execute) == 1:
        one = execute

        def body(args: Any, execution: Any) -> Any:
            return one(args)

    # Where each parameter is declared: merged violations keep that order.
    rank = {key: i for i, key in enumerate(parameters)}

    def run(args: Any, execution: ToolExecution) -> Any:
        violations = validator(args)
        if violations:
            if conversions is not None:
                violations = _with_conversions(violations, conversions, args, rank)
            raise ToolArgsError(violations)
        return body(args, execution)

    run.__qualname__ = f"{getattr(execute, '__qualname__', name)}"
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
        parameters=json_schema,
        execute=run,
        timeout_ms=timeout_ms,
        present_call=call_presenter,
        present_result=result_presenter,
    )


def _quoted_path(violation: str) -> str | None:
    """The ``"path"`` a violation text names (every contract text has one)."""
    start = violation.find('"')
    end = violation.find('"', start + 1)
    return violation[start + 1 : end] if start >= 0 and end > start else None


def _overlaps(a: str, b: str) -> bool:
    """Whether one path is the other or lies inside it."""
    inside = a.startswith((b + ".", b + "[")) or b.startswith((a + ".", a + "["))
    return a == b or inside


def _with_conversions(
    violations: list[str],
    conversions: Callable[[Any], list[str]],
    args: Any,
    rank: Mapping[str, int],
) -> list[str]:
    """Add what conversion would also refuse, for paths the schema passed.

    The result is ordered by where each path's parameter is declared.
    """
    try:
        more = conversions(args)
    except Exception:  # noqa: BLE001 - a hint must not replace the real error
        return violations
    flagged = [p for p in map(_quoted_path, violations) if p is not None]
    out = list(violations)
    for violation in more:
        path = _quoted_path(violation)
        if path is None or violation in out:
            continue
        if any(_overlaps(path, p) for p in flagged):
            continue
        out.append(violation)
    if len(out) == len(violations):
        return violations

    def declared(violation: str) -> int:
        path = _quoted_path(violation) or ""
        return rank.get(re.split(r"[.\[]", path, maxsplit=1)[0], -1)

    return sorted(out, key=declared)


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
) -> ToolDefinition | Callable[[F], ToolDefinition]:
    """Turn a typed function into a tool; the schema comes from its signature.

    Examples
    --------
    >>> @tool
    ... def add(a: int, b: int) -> str:
    ...     '''Add two integers.'''
    ...     return str(a + b)
    >>> add.parameters["required"]
    ['a', 'b']
    """

    def build(fn: Callable[..., Any]) -> ToolDefinition:
        from dsh_nb.tools import signature

        spec = signature.spec_from_signature(fn)
        body, conversions = signature.bind_with_check(fn)
        return _define(
            name=name or fn.__name__,
            description=(
                description
                if description is not None
                else signature.docstring_summary(fn)
            ),
            parameters=spec,
            execute=body,
            timeout_ms=timeout_ms,
            present_call=present_call,
            present_result=present_result,
            conversions=conversions,
        )

    if func is not None:
        return build(func)
    return build
