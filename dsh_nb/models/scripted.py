"""Scripted model replies, rendered in the providers' exact wire shapes.

A :class:`Turn` says what the model "answers" (text, reasoning, tool
calls, usage); the replay server renders it as the provider would, as JSON
or as an SSE stream, so the official SDK clients parse it as real traffic.
The shapes follow, field for field:

- OpenAI Chat Completions (``chat.completion`` and ``chat.completion.chunk``
  objects, ``stream_options.include_usage`` usage chunk with empty
  ``choices``), as the openai 3.x SDK types describe them;
- DeepSeek's extension of it (``reasoning_content`` in messages and deltas,
  ``prompt_cache_hit_tokens`` / ``prompt_cache_miss_tokens`` in usage);
- Anthropic Messages (``message`` objects and the ``message_start`` ...
  ``message_stop`` event stream with ``text_delta``, ``thinking_delta``,
  ``signature_delta`` and ``input_json_delta``), ``anthropic-version``
  2023-06-01 semantics, as the anthropic 2.x SDK types describe them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "CREATED",
    "ApiError",
    "Raw",
    "Reply",
    "ToolCallSpec",
    "Turn",
    "anthropic_error",
    "anthropic_json",
    "anthropic_sse",
    "openai_error",
    "openai_json",
    "openai_sse",
    "split_events",
    "sse_event",
]

CREATED: Final = 1764547200  # 2025-12-01T00:00:00Z: fixed, so output is stable


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallSpec:
    """One tool call a scripted turn makes; ``arguments`` is sent verbatim."""

    name: str
    arguments: str
    call_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """What the scripted model answers to one request.

    ``chunk`` is how many characters of text and tool arguments go in one
    streamed delta (small values split JSON mid-token, as real servers do);
    ``chunk_delay`` is the pause between streamed events, ``delay`` the pause
    before the response; ``cut_after`` closes the stream after that many
    events, without its end.
    """

    text: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCallSpec, ...] = ()
    input_tokens: int = 10
    output_tokens: int = 5
    finish: str | None = None
    chunk: int = 8
    delay: float = 0.0
    chunk_delay: float = 0.0
    cut_after: int | None = None
    reasoning_field: str = "reasoning_content"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiError:
    """An error status with the provider's error body."""

    status: int
    message: str
    type: str = "api_error"
    code: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Raw:
    """A hand-written response sent byte for byte (SSE: one event a pause)."""

    status: int = 200
    body: str = ""
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    chunk_delay: float = 0.0
    cut_after: int | None = None


Reply = Turn | ApiError | Raw


def _pieces(text: str, size: int) -> Iterator[str]:
    size = max(1, size)
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _call_id(spec: ToolCallSpec, index: int, prefix: str) -> str:
    return spec.call_id or f"{prefix}_{index + 1:02d}"


def _openai_usage(turn: Turn) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.input_tokens + turn.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    if turn.reasoning:
        usage["prompt_cache_hit_tokens"] = 0
        usage["prompt_cache_miss_tokens"] = turn.input_tokens
        usage["completion_tokens_details"] = {
            "reasoning_tokens": max(1, len(turn.reasoning) // 4)
        }
    return usage


def _finish(turn: Turn, tool: str, stop: str) -> str:
    if turn.finish is not None:
        return turn.finish
    return tool if turn.tool_calls else stop


def openai_json(turn: Turn, model: str, seq: int) -> dict[str, Any]:
    """A ``chat.completion`` object for ``turn``."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": turn.text or None,
        "refusal": None,
        "annotations": [],
    }
    if turn.reasoning:
        message[turn.reasoning_field] = turn.reasoning
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": _call_id(c, i, "call"),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(turn.tool_calls)
        ]
    return {
        "id": f"chatcmpl-replay-{seq}",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": _finish(turn, "tool_calls", "stop"),
            }
        ],
        "usage": _openai_usage(turn),
        "service_tier": "default",
        "system_fingerprint": "fp_replay",
    }


def sse_event(data: object, event: str | None = None) -> str:
    """One SSE event (``data:`` is compact JSON, or the text ``[DONE]``)."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n"


def openai_sse(turn: Turn, model: str, seq: int, *, include_usage: bool) -> list[str]:
    """The ``chat.completion.chunk`` events for ``turn``, ``[DONE]`` last."""
    base = {
        "id": f"chatcmpl-replay-{seq}",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "system_fingerprint": "fp_replay",
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return sse_event({**base, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    for piece in _pieces(turn.reasoning, turn.chunk):
        events.append(chunk({turn.reasoning_field: piece}))
    for piece in _pieces(turn.text, turn.chunk):
        events.append(chunk({"content": piece}))
    for index, call in enumerate(turn.tool_calls):
        first = {
            "index": index,
            "id": _call_id(call, index, "call"),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(chunk({"tool_calls": [first]}))
        for piece in _pieces(call.arguments, turn.chunk):
            frag = {"index": index, "function": {"arguments": piece}}
            events.append(chunk({"tool_calls": [frag]}))
    events.append(chunk({}, _finish(turn, "tool_calls", "stop")))
    if include_usage:
        events.append(sse_event({**base, "choices": [], "usage": _openai_usage(turn)}))
    events.append(sse_event("[DONE]"))
    return events


def _anthropic_blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.reasoning:
        blocks.append(
            {"type": "thinking", "thinking": turn.reasoning, "signature": "c2lnbmVk"}
        )
    if turn.text:
        blocks.append({"type": "text", "text": turn.text})
    for index, call in enumerate(turn.tool_calls):
        try:
            value = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError:
            value = {"_unparsed": call.arguments}
        blocks.append(
            {
                "type": "tool_use",
                "id": _call_id(call, index, "toolu"),
                "name": call.name,
                "input": value,
            }
        )
    return blocks


def _anthropic_usage(turn: Turn, output: int) -> dict[str, Any]:
    return {
        "input_tokens": turn.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output,
        "service_tier": "standard",
    }


def anthropic_json(turn: Turn, model: str, seq: int) -> dict[str, Any]:
    """A Messages API ``message`` object for ``turn``."""
    return {
        "id": f"msg_replay_{seq}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _anthropic_blocks(turn),
        "stop_reason": _finish(turn, "tool_use", "end_turn"),
        "stop_sequence": None,
        "usage": _anthropic_usage(turn, turn.output_tokens),
    }


def anthropic_sse(turn: Turn, model: str, seq: int) -> list[str]:
    """The Messages streaming events for ``turn``, ``message_stop`` last."""
    start = {**anthropic_json(turn, model, seq), "content": [], "stop_reason": None}
    start["usage"] = _anthropic_usage(turn, 1)
    events = [
        sse_event({"type": "message_start", "message": start}, "message_start"),
        sse_event({"type": "ping"}, "ping"),
    ]

    def delta(index: int, body: dict[str, Any]) -> str:
        data = {"type": "content_block_delta", "index": index, "delta": body}
        return sse_event(data, "content_block_delta")

    for index, block in enumerate(_anthropic_blocks(turn)):
        kind = block["type"]
        if kind == "thinking":
            opening: dict[str, Any] = {
                "type": "thinking",
                "thinking": "",
                "signature": "",
            }
        elif kind == "text":
            opening = {"type": "text", "text": ""}
        else:
            opening = {**block, "input": {}}
        events.append(
            sse_event(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": opening,
                },
                "content_block_start",
            )
        )
        if kind == "thinking":
            for piece in _pieces(block["thinking"], turn.chunk):
                events.append(
                    delta(index, {"type": "thinking_delta", "thinking": piece})
                )
            events.append(
                delta(
                    index, {"type": "signature_delta", "signature": block["signature"]}
                )
            )
        elif kind == "text":
            for piece in _pieces(block["text"], turn.chunk):
                events.append(delta(index, {"type": "text_delta", "text": piece}))
        else:
            arguments = turn.tool_calls[index - _leading(turn)].arguments
            for piece in _pieces(arguments, turn.chunk):
                events.append(
                    delta(index, {"type": "input_json_delta", "partial_json": piece})
                )
        events.append(
            sse_event(
                {"type": "content_block_stop", "index": index}, "content_block_stop"
            )
        )
    events.append(
        sse_event(
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": _finish(turn, "tool_use", "end_turn"),
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": turn.output_tokens},
            },
            "message_delta",
        )
    )
    events.append(sse_event({"type": "message_stop"}, "message_stop"))
    return events


def _leading(turn: Turn) -> int:
    return int(bool(turn.reasoning)) + int(bool(turn.text))


def openai_error(error: ApiError) -> dict[str, Any]:
    """The Chat Completions error body."""
    return {
        "error": {
            "message": error.message,
            "type": error.type,
            "param": None,
            "code": error.code,
        }
    }


def anthropic_error(error: ApiError) -> dict[str, Any]:
    """The Messages API error body."""
    return {"type": "error", "error": {"type": error.type, "message": error.message}}


def split_events(body: str) -> Sequence[str]:
    """Split a hand-written SSE body into its events (blank-line separated)."""
    parts = [p for p in body.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return [p + "\n\n" for p in parts]
