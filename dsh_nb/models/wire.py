"""Model wire formats: tool lists, tool calls in, tool messages out.

The OpenAI Chat Completions and Anthropic Messages shapes, as plain
functions on plain data, with no IPython: a script that talks to a model can
use them as they are; ``Chat``, the notebook's ``%tools --openai`` and
``dispatch`` are thin wrappers around them. A message is read in either
shape: OpenAI's ``tool_calls`` or Anthropic's ``tool_use`` content blocks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from dsh_nb.tools.jsonvalue import to_plain
from dsh_nb.tools.modeltext import context_texts, result_text
from dsh_nb.tools.schema.wireschema import strict_schema
from dsh_nb.tools.surrogates import escape_surrogates, escape_tree, first_surrogate
from dsh_nb.tools.values.execution import ToolExecutionResult

__all__ = [
    "ParsedCall",
    "context_blocks",
    "context_message",
    "content_text",
    "context_texts",
    "message_format",
    "parse_arguments",
    "parse_tool_calls",
    "result_text",
    "to_anthropic_tools",
    "to_openai_tools",
    "tool_message",
    "tool_result_block",
]

BAD_ARGUMENTS: Final = "Error: tool call arguments are not valid JSON: {}"


def content_text(content: object) -> str:
    """A message's content as text: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping)
        )
    return ""


def to_openai_tools(
    schemas: Iterable[Mapping[str, Any]], *, strict: bool = False
) -> list[dict[str, Any]]:
    """Wrap ``schemas()`` entries as OpenAI Chat Completions ``tools``.

    ``strict=True`` rewrites each schema for OpenAI's strict function calling
    (:func:`~dsh_nb.tools.schema.wireschema.strict_schema`) and marks it
    ``"strict": true``; a schema strict mode cannot express raises
    :class:`~dsh_nb.tools.schema.wireschema.StrictSchemaError` naming the tool.
    """
    out = []
    for s in schemas:
        parameters = to_plain(s["parameters"])
        function: dict[str, Any] = {
            "name": s["name"],
            "description": s["description"],
            "parameters": parameters,
        }
        if strict:
            function["parameters"] = strict_schema(parameters, s["name"])
            function["strict"] = True
        out.append({"type": "function", "function": function})
    return escape_tree(out)


def to_anthropic_tools(schemas: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rename ``schemas()`` entries to the Anthropic Messages ``tools`` shape."""
    tools = [
        {
            "name": s["name"],
            "description": s["description"],
            "input_schema": to_plain(s["parameters"]),
        }
        for s in schemas
    ]
    return escape_tree(tools)


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedCall:
    """One model tool call, read from the wire.

    ``error`` is the tool message text when the call cannot run (its
    arguments are not JSON); ``arguments`` is then the raw text.
    """

    call_id: str
    name: str
    arguments: Any
    error: str | None = None


def parse_arguments(text: object) -> tuple[Any, str | None]:
    """Decode a call's ``arguments`` JSON text; return ``(value, error)``.

    Already-decoded values pass through; an empty string is ``{}`` (some
    models send it for tools without parameters). ``NaN`` and ``Infinity``
    are rejected: they are not JSON. So is a string holding a lone
    surrogate (``"\\ud83d"``, half an emoji): no display, log or reply could
    carry it, so the call gets an error message and the tool does not run.
    """
    if not isinstance(text, (str, bytes, bytearray)):
        value = text
    elif not text.strip():
        return {}, None
    else:
        try:
            value = json.loads(text, parse_constant=_reject_constant)
        except json.JSONDecodeError as exc:
            return text, f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
        except (ValueError, RecursionError) as exc:
            return text, str(exc) or type(exc).__name__
    where = first_surrogate(value)
    if where is not None:
        # Half a UTF-16 pair (models do send them): refused, not guessed at,
        # so the tool never runs on text that cannot be written anywhere.
        return text, (
            f"the string at {where} holds a lone surrogate (half of a UTF-16 "
            "pair); send whole characters"
        )
    return value, None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _field(obj: object, key: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


_ANTHROPIC_BLOCKS: Final = frozenset(
    {"tool_use", "text", "thinking", "redacted_thinking", "server_tool_use"}
)


def _block_type(block: object) -> object:
    return _field(block, "type")


def message_format(message_or_calls: object) -> str:
    """Say which wire shape a message is in: ``"anthropic"`` or ``"openai"``.

    An Anthropic assistant message carries its calls as ``tool_use`` blocks
    in ``content`` (a list); everything else is read as OpenAI's.
    """
    if isinstance(message_or_calls, Sequence) and not isinstance(
        message_or_calls, (str, bytes)
    ):
        if any(_block_type(b) in _ANTHROPIC_BLOCKS for b in message_or_calls):
            return "anthropic"
        return "openai"
    if _field(message_or_calls, "tool_calls") is not None:
        return "openai"
    content = _field(message_or_calls, "content")
    if isinstance(content, Sequence) and not isinstance(content, (str, bytes)):
        return "anthropic"
    return "openai"


def _anthropic_calls(message_or_blocks: object) -> list[ParsedCall]:
    blocks = message_or_blocks
    if not isinstance(blocks, Sequence):
        blocks = _field(message_or_blocks, "content")
    out: list[ParsedCall] = []
    for index, block in enumerate(blocks or ()):
        if _block_type(block) != "tool_use":
            continue
        out.append(
            _parsed(
                _field(block, "id"),
                f"toolu_{index}",
                _field(block, "name"),
                _field(block, "input"),
            )
        )
    return out


def _parsed(call_id: object, fallback_id: str, name: object, raw: object) -> ParsedCall:
    """One call in either format; a missing name or bad JSON sets ``error``."""
    if not isinstance(call_id, str) or not call_id:
        call_id = fallback_id
    if not isinstance(name, str) or not name:
        return ParsedCall(
            call_id=call_id,
            name="",
            arguments=None,
            error="Error: tool call has no function name",
        )
    arguments, problem = parse_arguments(raw)
    error = None if problem is None else BAD_ARGUMENTS.format(problem)
    return ParsedCall(call_id=call_id, name=name, arguments=arguments, error=error)


def _tool_calls(message_or_calls: object) -> Sequence[Any]:
    if isinstance(message_or_calls, (str, bytes)):
        raise TypeError(
            "dispatch() takes an assistant message or a list of tool_calls, not a "
            "str; decode the JSON first"
        )
    if isinstance(message_or_calls, Sequence):
        return message_or_calls
    calls = _field(message_or_calls, "tool_calls")
    if calls is None:
        if isinstance(message_or_calls, Mapping) or hasattr(
            message_or_calls, "tool_calls"
        ):
            return []
        raise TypeError(
            "dispatch() takes an assistant message (with .tool_calls) or a list "
            f"of tool_calls; got {type(message_or_calls).__name__}"
        )
    if not isinstance(calls, Sequence) or isinstance(calls, (str, bytes)):
        raise TypeError(f"tool_calls must be a list, not {type(calls).__name__}")
    return calls


def parse_tool_calls(message_or_calls: object) -> list[ParsedCall]:
    """Read tool calls from a message, an SDK object or a list, in order.

    OpenAI calls are ``{"id", "type": "function", "function": {"name",
    "arguments": "<json>"}}``; Anthropic calls are ``{"type": "tool_use",
    "id", "name", "input"}`` blocks of an assistant message's ``content``
    (dicts or objects with those attributes). A call whose arguments are not
    JSON is returned with ``error`` set, so the model gets an error message
    for it instead of the step failing.
    """
    if not isinstance(message_or_calls, (str, bytes)) and (
        message_format(message_or_calls) == "anthropic"
    ):
        return _anthropic_calls(message_or_calls)
    out: list[ParsedCall] = []
    for index, call in enumerate(_tool_calls(message_or_calls)):
        function = _field(call, "function")
        out.append(
            _parsed(
                _field(call, "id"),
                f"call_{index}",
                _field(function, "name") if function is not None else None,
                _field(function, "arguments"),
            )
        )
    return out


def tool_message(call_id: str, content: ToolExecutionResult | str) -> dict[str, Any]:
    """One ``{"role": "tool"}`` message answering ``call_id``."""
    text = content if isinstance(content, str) else result_text(content)
    return {
        "role": "tool",
        "tool_call_id": escape_surrogates(call_id),
        "content": escape_surrogates(text),
    }


def tool_result_block(
    call_id: str, content: ToolExecutionResult | str, *, is_error: bool | None = None
) -> dict[str, Any]:
    """One Anthropic ``tool_result`` block answering ``call_id``.

    ``is_error`` defaults to the result's own flag (True for a plain error
    string, which is only ever passed for a call that could not run).
    """
    if isinstance(content, str):
        text, error = content, True if is_error is None else is_error
    else:
        text = result_text(content)
        error = content.is_error if is_error is None else is_error
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": escape_surrogates(call_id),
        "content": escape_surrogates(text),
    }
    if error:
        block["is_error"] = True
    return block


def context_message(
    results: Iterable[ToolExecutionResult],
) -> dict[str, Any] | None:
    """Merge a step's ``additionalContext`` into one user message, or None.

    The contract (§4.16) buffers context until after every tool result of
    the step, so tool-call/result adjacency is never broken.
    """
    texts = context_texts(results)
    if not texts:
        return None
    return {"role": "user", "content": escape_surrogates("\n\n".join(texts))}


def context_blocks(results: Iterable[ToolExecutionResult]) -> list[dict[str, Any]]:
    """The step's ``additionalContext`` as Anthropic text blocks.

    They go after every ``tool_result`` block of the same user message.
    """
    return [
        {"type": "text", "text": escape_surrogates(t)} for t in context_texts(results)
    ]


def openai_answers(
    wire_ids: Sequence[str], results: Sequence[ToolExecutionResult | str]
) -> list[dict[str, Any]]:
    """A step's answers in OpenAI form: one tool message per call, in call
    order, then one user message with the step's ``additionalContext``."""
    out = [tool_message(i, r) for i, r in zip(wire_ids, results, strict=True)]
    extra = context_message(r for r in results if not isinstance(r, str))
    if extra is not None:
        out.append(extra)
    return out


def anthropic_answers(
    wire_ids: Sequence[str], results: Sequence[ToolExecutionResult | str]
) -> list[dict[str, Any]]:
    """A step's answers as Anthropic blocks: ``tool_result`` per call, in
    call order, then the context as text (one user message's content)."""
    blocks = [tool_result_block(i, r) for i, r in zip(wire_ids, results, strict=True)]
    blocks.extend(context_blocks(r for r in results if not isinstance(r, str)))
    return blocks


def unique_call_ids(calls: Sequence[dict[str, Any]], prefix: str) -> None:
    """Give a reply's calls ids that are present and distinct, in place.

    A model may leave an id out (some OpenAI-compatible streams, some
    ``tool_use`` blocks) or repeat one; the conversation then carries the
    ids written here, so the assistant message and its answers agree.
    """
    seen: set[str] = set()
    for index, call in enumerate(calls):
        seen.add(next_call_id(call, index, seen, prefix))


def next_call_id(call: dict[str, Any], index: int, seen: set[str], prefix: str) -> str:
    """Fix one call's id given the ids before it; returns the id."""
    raw = call.get("id")
    call_id = raw if isinstance(raw, str) and raw else f"{prefix}_{index}"
    while call_id in seen:
        call_id = f"{call_id}_{index}"
    call["id"] = call_id
    return call_id
