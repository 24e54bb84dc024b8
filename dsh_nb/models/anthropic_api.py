"""The ``"anthropic"`` provider: the Messages API via ``AsyncAnthropic``.

Calls are ``tool_use`` blocks of the assistant message; results go back as
``tool_result`` blocks of one user message, in call order, with the step's
additional context as text blocks after them. Thinking blocks (with their
signatures) go back unchanged, as the API requires when a turn used tools.
Streaming goes through the SDK's ``messages.stream`` helper, which
accumulates the blocks; a tool call is announced at its block's end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dsh_nb.models import wire
from dsh_nb.models.usage import anthropic_usage
from dsh_nb.models.view import ChatView, Completion
from dsh_nb.tools.values.execution import ToolExecutionResult

if TYPE_CHECKING:
    from dsh_nb.models.scripted import ApiError, Turn

__all__ = ["AnthropicAdapter"]

_KEEP = frozenset({"text", "thinking", "redacted_thinking", "tool_use"})


def _block(block: Any) -> dict[str, Any]:
    data: dict[str, Any] = block.model_dump(exclude_none=True, mode="json")
    if data.get("type") == "text":
        # Citations are request-only on the way back when empty.
        if not data.get("citations"):
            data.pop("citations", None)
    return data


class AnthropicAdapter:
    """Messages API requests and replies for one ``AsyncAnthropic`` client."""

    name = "anthropic"

    def __init__(self, client: Any, *, request_options: Mapping[str, Any]) -> None:
        self.client = client
        self.options = {"max_tokens": 4096, **request_options}

    # --- shapes -----------------------------------------------------------

    @staticmethod
    def tools(schemas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return wire.to_anthropic_tools(schemas)

    def user_message(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def new_question(self, messages: list[dict[str, Any]]) -> None:
        """Keep earlier thinking blocks: the API strips what it does not need."""

    def add_notice(self, messages: list[dict[str, Any]], text: str) -> None:
        """Add a notice to the last user message (roles must alternate)."""
        block = {"type": "text", "text": text}
        if messages and messages[-1].get("role") == "user":
            last = messages[-1]
            content = last["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            messages[-1] = {**last, "content": [*content, block]}
        else:
            messages.append({"role": "user", "content": [block]})

    # --- the wire without a client ----------------------------------------

    @staticmethod
    def earlier(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """User and assistant text only: the Messages API has no other
        place for earlier conversation."""
        out = []
        for message in messages:
            content = message.get("content")
            if message.get("role") not in ("user", "assistant") or not isinstance(
                content, str
            ):
                raise ValueError(
                    "only user and assistant text messages can be sent to the "
                    "anthropic provider as earlier conversation"
                )
            out.append({"role": message["role"], "content": content})
        return out

    @staticmethod
    def read_request(
        request: Mapping[str, Any],
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Messages and tools of a Messages request, neutral."""
        messages: list[dict[str, Any]] = []
        system = request.get("system")
        if system:
            messages.append({"role": "system", "content": wire.content_text(system)})
        for m in request.get("messages") or ():
            _neutral(m, messages)
        tools = [
            {
                "name": t.get("name"),
                "description": t.get("description", ""),
                "parameters": t.get("input_schema") or {},
            }
            for t in request.get("tools") or ()
        ]
        return messages, tools

    @staticmethod
    def reply_body(turn: Turn, model: str, seq: int) -> dict[str, Any]:
        from dsh_nb.models.scripted import anthropic_json

        return anthropic_json(turn, model, seq)

    @staticmethod
    def reply_events(
        turn: Turn, model: str, seq: int, request: Mapping[str, Any]
    ) -> list[str]:
        from dsh_nb.models.scripted import anthropic_sse

        return anthropic_sse(turn, model, seq)

    @staticmethod
    def error_body(error: ApiError) -> dict[str, Any]:
        from dsh_nb.models.scripted import anthropic_error

        return anthropic_error(error)

    def results(
        self,
        calls: Sequence[wire.ParsedCall],
        results: Sequence[ToolExecutionResult | str],
    ) -> list[dict[str, Any]]:
        """One user message: ``tool_result`` blocks in call order, then text."""
        answers = wire.anthropic_answers([c.call_id for c in calls], results)
        return [{"role": "user", "content": answers}]

    # --- one request ------------------------------------------------------

    async def complete(
        self,
        *,
        model: str,
        system: str,
        messages: Sequence[Mapping[str, Any]],
        tools: list[dict[str, Any]],
        stream: bool,
        view: ChatView,
    ) -> Completion:
        kwargs: dict[str, Any] = {**self.options, "model": model}
        kwargs["messages"] = list(messages)
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = tools
        if not stream:
            return self._read(await self.client.messages.create(**kwargs))
        announced = 0
        ids: set[str] = set()
        async with self.client.messages.stream(**kwargs) as events:
            async for event in events:
                kind = event.type
                if kind == "text":
                    view.text(event.text)
                elif kind == "thinking":
                    view.reasoning(event.thinking)
                elif kind == "content_block_stop":
                    block = event.content_block
                    if block.type == "tool_use":
                        call = _block(block)
                        ids.add(wire.next_call_id(call, announced, ids, "toolu"))
                        parsed = wire.parse_tool_calls([call])
                        announced += 1
                        view.call_ready(parsed[0])
            message = await events.get_final_message()
        return self._read(message)

    def _read(self, message: Any) -> Completion:
        blocks = [_block(b) for b in message.content if b.type in _KEEP]
        wire.unique_call_ids([b for b in blocks if b["type"] == "tool_use"], "toolu")
        text = "".join(b.get("text", "") for b in blocks if b["type"] == "text")
        reasoning = "".join(
            b.get("thinking", "") for b in blocks if b["type"] == "thinking"
        )
        calls = wire.parse_tool_calls([b for b in blocks if b["type"] == "tool_use"])
        return Completion(
            text=text,
            reasoning=reasoning,
            calls=tuple(calls),
            message={"role": "assistant", "content": blocks},
            usage=anthropic_usage(message.usage),
            finish=str(message.stop_reason or "end_turn"),
        )


def _neutral(m: Mapping[str, Any], out: list[dict[str, Any]]) -> None:
    """One Messages message as neutral messages (a tool result is its own)."""
    role, content = m.get("role"), m.get("content")
    if isinstance(content, str):
        out.append({"role": str(role), "content": content, "calls": []})
        return
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            calls.append(
                {"id": block["id"], "name": block["name"], "arguments": block["input"]}
            )
        elif kind == "tool_result":
            out.append(
                {
                    "role": "tool",
                    "content": wire.content_text(block.get("content")),
                    "is_error": bool(block.get("is_error")),
                }
            )
    if role == "assistant":
        out.append({"role": "assistant", "content": "".join(texts), "calls": calls})
    elif texts:
        out.append({"role": "user", "content": "".join(texts)})
