"""The ``"openai"`` provider: any Chat Completions endpoint, via the SDK.

``openai.AsyncOpenAI`` with a ``base_url`` reaches OpenAI, DeepSeek, vLLM,
Ollama, llama.cpp's server and LM Studio alike. Streamed tool-call deltas
are accumulated by ``index`` (the rule the SDK's own
``ChatCompletionStreamState`` follows: ``id`` and ``name`` come in a call's
first fragment, ``arguments`` in pieces), here without rebuilding a
pydantic snapshot per chunk.

Reasoning (DeepSeek's ``reasoning_content``) follows DeepSeek's rule for
thinking mode: it goes back on an assistant message that made tool calls,
while that question's tool loop runs (the API answers 400 without it), and
is dropped from every earlier message when a new user message starts a
new question, and from text-only answers. It is never added where the
server did not send it, so an endpoint that does not know the field never
sees it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dsh_nb.models import wire
from dsh_nb.models.usage import Usage, openai_usage
from dsh_nb.models.view import ChatView, Completion
from dsh_nb.tools.values.execution import ToolExecutionResult

if TYPE_CHECKING:
    from dsh_nb.models.scripted import ApiError, Turn

__all__ = ["OpenAIAdapter"]

_ERROR = re.compile(r"^\s*Error\b")

_REASONING_KEYS = ("reasoning_content", "reasoning")


def _extra(obj: Any, key: str) -> Any:
    extra = getattr(obj, "model_extra", None)
    if extra and key in extra:
        return extra[key]
    return getattr(obj, key, None) if key in type(obj).model_fields else None


def _reasoning(obj: Any) -> tuple[str | None, str]:
    for key in _REASONING_KEYS:
        value = _extra(obj, key)
        if isinstance(value, str):
            return key, value
    return None, ""


class OpenAIAdapter:
    """Chat Completions requests and replies for one ``AsyncOpenAI`` client."""

    name = "openai"

    def __init__(self, client: Any, *, request_options: Mapping[str, Any]) -> None:
        self.client = client
        self.options = dict(request_options)

    # --- shapes -----------------------------------------------------------

    @staticmethod
    def tools(schemas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return wire.to_openai_tools(schemas)

    def user_message(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def new_question(self, messages: list[dict[str, Any]]) -> None:
        """Drop earlier questions' reasoning before a new user message."""
        for index, message in enumerate(messages):
            if message.get("role") == "assistant" and any(
                k in message for k in _REASONING_KEYS
            ):
                messages[index] = {
                    k: v for k, v in message.items() if k not in _REASONING_KEYS
                }

    def add_notice(self, messages: list[dict[str, Any]], text: str) -> None:
        messages.append({"role": "user", "content": text})

    # --- the wire without a client ----------------------------------------

    @staticmethod
    def earlier(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Earlier conversation is already in this wire's form."""
        return [dict(m) for m in messages]

    @staticmethod
    def read_request(
        request: Mapping[str, Any],
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Messages and tools of a Chat Completions request, neutral."""
        messages: list[dict[str, Any]] = []
        for m in request.get("messages") or ():
            role, content = m.get("role"), wire.content_text(m.get("content"))
            if role in ("system", "developer"):
                messages.append({"role": "system", "content": content})
            elif role == "tool":
                error = bool(_ERROR.match(content))
                messages.append({"role": "tool", "content": content, "is_error": error})
            elif role == "assistant":
                calls = [
                    {
                        "id": c["id"],
                        "name": c["function"]["name"],
                        "arguments": _as_sent(c["function"].get("arguments")),
                    }
                    for c in m.get("tool_calls") or ()
                ]
                messages.append({"role": role, "content": content, "calls": calls})
            else:
                messages.append({"role": "user", "content": content})
        tools = []
        for t in request.get("tools") or ():
            f = t.get("function") or {}
            tools.append(
                {
                    "name": f.get("name"),
                    "description": f.get("description", ""),
                    "parameters": f.get("parameters") or {},
                }
            )
        return messages, tools

    @staticmethod
    def reply_body(turn: Turn, model: str, seq: int) -> dict[str, Any]:
        from dsh_nb.models.scripted import openai_json

        return openai_json(turn, model, seq)

    @staticmethod
    def reply_events(
        turn: Turn, model: str, seq: int, request: Mapping[str, Any]
    ) -> list[str]:
        """Chunks, with usage last when the request asked for it."""
        from dsh_nb.models.scripted import openai_sse

        options = request.get("stream_options") or {}
        usage = isinstance(options, dict) and options.get("include_usage") is True
        return openai_sse(turn, model, seq, include_usage=usage)

    @staticmethod
    def error_body(error: ApiError) -> dict[str, Any]:
        from dsh_nb.models.scripted import openai_error

        return openai_error(error)

    def results(
        self,
        calls: Sequence[wire.ParsedCall],
        results: Sequence[ToolExecutionResult | str],
    ) -> list[dict[str, Any]]:
        """One tool message per call, in call order, then the context."""
        return wire.openai_answers([c.call_id for c in calls], results)

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
        sent: list[Mapping[str, Any]] = list(messages)
        if system:
            sent.insert(0, {"role": "system", "content": system})
        kwargs: dict[str, Any] = {**self.options, "model": model, "messages": sent}
        if tools:
            kwargs["tools"] = tools
        create = self.client.chat.completions.create
        if not stream:
            response = await create(**kwargs)
            return self._read(response)
        kwargs["stream"] = True
        kwargs["stream_options"] = {"include_usage": True}
        return await self._stream(await create(**kwargs), view)

    def _read(self, response: Any) -> Completion:
        choice = response.choices[0]
        message = choice.message
        key, reasoning = _reasoning(message)
        calls = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.function.name,
                    "arguments": c.function.arguments,
                },
            }
            for c in message.tool_calls or ()
        ]
        text = message.content or ""
        return self._completion(
            text, key, reasoning, calls, openai_usage(response.usage), choice
        )

    def _completion(
        self,
        text: str,
        key: str | None,
        reasoning: str,
        calls: list[dict[str, Any]],
        usage: Usage,
        choice: Any,
    ) -> Completion:
        wire.unique_call_ids(calls, "call")
        out: dict[str, Any] = {"role": "assistant", "content": text or None}
        if key is not None and calls:
            out[key] = reasoning
        if calls:
            out["tool_calls"] = calls
        finish = getattr(choice, "finish_reason", None) or "stop"
        return Completion(
            text=text,
            reasoning=reasoning,
            calls=tuple(wire.parse_tool_calls(calls)),
            message=out,
            usage=usage,
            finish=str(finish),
        )

    async def _stream(self, stream: Any, view: ChatView) -> Completion:
        text: list[str] = []
        reasoning: list[str] = []
        key: str | None = None
        slots: dict[int, dict[str, Any]] = {}
        order: list[int] = []
        announced: set[int] = set()
        ids: set[str] = set()
        usage: Any = None
        last_choice: Any = None

        def announce(index: int) -> None:
            if index in announced:
                return
            announced.add(index)
            call = _call(slots[index])
            # The id the conversation will carry (calls announce in order).
            slots[index]["id"] = wire.next_call_id(
                call, len(announced) - 1, ids, "call"
            )
            ids.add(call["id"])
            view.call_ready(wire.parse_tool_calls([call])[0])

        async with stream:
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    if choice.index != 0:
                        continue
                    last_choice = choice
                    delta = choice.delta
                    rkey, piece = _reasoning(delta)
                    if piece:
                        key = key or rkey
                        reasoning.append(piece)
                        view.reasoning(piece)
                    if delta.content:
                        text.append(delta.content)
                        view.text(delta.content)
                    for tc in delta.tool_calls or ():
                        slot = slots.get(tc.index)
                        if slot is None:
                            if order:
                                announce(order[-1])
                            slot = slots[tc.index] = {
                                "id": None,
                                "name": "",
                                "args": "",
                            }
                            order.append(tc.index)
                        if tc.id:
                            slot["id"] = tc.id
                        function = tc.function
                        if function is not None:
                            if function.name:
                                slot["name"] += function.name
                            if function.arguments:
                                slot["args"] += function.arguments
                    if choice.finish_reason is not None:
                        for index in order:
                            announce(index)
        if last_choice is None or last_choice.finish_reason is None:
            raise ConnectionError("the stream ended before the model finished")
        if key is None and reasoning:
            key = "reasoning_content"
        calls = [_call(slots[i]) for i in order]
        return self._completion(
            "".join(text),
            key,
            "".join(reasoning),
            calls,
            openai_usage(usage),
            last_choice,
        )


def _call(slot: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": slot["id"],
        "type": "function",
        "function": {"name": slot["name"], "arguments": slot["args"]},
    }


def _as_sent(text: Any) -> Any:
    """Arguments as JSON when they parse, else the text the model sent."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text
