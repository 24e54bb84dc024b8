"""The text a model reads of a result, whichever door it came through.

A chat's tool message, an Anthropic ``tool_result`` and an MCP client's
context block all say the same thing; this is the one place that decides
what that is. Surrogates are escaped by each wire, on the way out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dsh_nb.tools.jsonvalue import compact_json, to_plain
from dsh_nb.tools.values.execution import ToolExecutionResult

__all__ = ["context_texts", "result_text"]


def result_text(result: ToolExecutionResult) -> str:
    """The text a model reads for a result: text blocks, other blocks as JSON."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        else:
            parts.append(compact_json(to_plain(block)))
    return "\n".join(parts)


def _context_text(context: Any) -> str:
    blocks = context.get("content") if isinstance(context, Mapping) else None
    if isinstance(blocks, Sequence) and not isinstance(blocks, (str, bytes)):
        texts = [
            str(b.get("text", ""))
            if isinstance(b, Mapping) and b.get("type") == "text"
            else compact_json(to_plain(b))
            for b in blocks
        ]
        return "\n".join(texts)
    if isinstance(context, str):
        return context
    return compact_json(to_plain(context))


def context_texts(results: Iterable[ToolExecutionResult]) -> list[str]:
    """The step's ``additionalContext`` as texts, in call order."""
    return [
        _context_text(r.additional_context)
        for r in results
        if r.additional_context is not None
    ]
