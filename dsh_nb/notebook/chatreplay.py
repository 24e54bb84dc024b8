"""Replay a conversation: ``chat.messages`` plus the session log.

The messages say what was said and in which order (either provider's wire
form); the session log's journal says what each tool call did. Together
they re-show a conversation after a kernel restart: each user message,
each assistant text, and each call's card as it ended, in the order they
happened, without running anything or asking the model.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["conversation_items", "load_messages"]


def load_messages(source: object) -> list[Mapping[str, Any]]:
    """Messages from a list, a ``Chat`` (``.messages``) or a JSON file."""
    messages = getattr(source, "messages", source)
    if isinstance(messages, (str, os.PathLike)):
        with open(messages, encoding="utf-8") as fh:
            messages = json.load(fh)
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise TypeError(
            "messages must be a list of messages, a Chat, or the path of a JSON "
            f"file holding chat.messages; got {type(messages).__name__}"
        )
    out = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message:
            raise ValueError(f"messages[{index}] is not a message (no 'role')")
        out.append(message)
    return out


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text"
        )
    return ""


def conversation_items(
    messages: Sequence[Mapping[str, Any]],
) -> Iterator[tuple[str, Any]]:
    """Yield ``("user", text)``, ``("assistant", text)`` and ``("call", call)``.

    ``call`` is ``(call_id, name, arguments)``; tool results and context
    messages yield nothing (the cards show the results).
    """
    for message in messages:
        role, content = message.get("role"), message.get("content")
        if role == "user":
            if isinstance(content, Sequence) and not isinstance(content, str):
                if any(
                    isinstance(b, Mapping) and b.get("type") == "tool_result"
                    for b in content
                ):
                    continue  # results (and context after them): on the cards
            text = _text(content)
            if text:
                yield "user", text
        elif role == "assistant":
            text = _text(content)
            if text:
                yield "assistant", text
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                yield "call", (call.get("id"), function.get("name"), None)
            if isinstance(content, Sequence) and not isinstance(content, str):
                for block in content:
                    if isinstance(block, Mapping) and block.get("type") == "tool_use":
                        yield "call", (block.get("id"), block.get("name"), None)
