"""Content both ways between our blocks and MCP's content types.

Our blocks are plain dicts (``{"type": "text", "text": ...}``); MCP's are
pydantic models from ``mcp.types``. Serving maps a result to a
``CallToolResult``; connecting maps a ``CallToolResult`` back to blocks plus
``meta`` (structured content, the result's ``_meta``), so a card shows what
the server sent and a model reads the same text it would have read there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dsh_nb.tools.jsonvalue import ABSENT, to_plain
from dsh_nb.tools.modeltext import context_texts
from dsh_nb.tools.surrogates import escape_surrogates, escape_tree

if TYPE_CHECKING:
    from mcp import types

    from dsh_nb.tools.values.execution import ToolExecutionResult

__all__ = ["from_call_result", "structured_of", "to_call_result", "to_mcp_content"]

_MCP_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})


def _block_to_mcp(block: Mapping[str, Any]) -> types.ContentBlock:
    from mcp import types
    from pydantic import TypeAdapter, ValidationError

    kind = block.get("type")
    if kind == "text":
        return types.TextContent(type="text", text=str(block.get("text", "")))
    if kind in _MCP_TYPES:
        try:
            adapter: TypeAdapter[types.ContentBlock] = TypeAdapter(types.ContentBlock)
            return adapter.validate_python(to_plain(block))
        except ValidationError:
            pass
    # A block MCP has no type for still reaches the client, as its JSON.
    return types.TextContent(
        type="text", text=json.dumps(to_plain(block), ensure_ascii=False)
    )


def to_mcp_content(content: Sequence[Mapping[str, Any]]) -> list[types.ContentBlock]:
    """Our content blocks as MCP content blocks."""
    return [_block_to_mcp(b) for b in content if isinstance(b, Mapping)]


def structured_of(result: ToolExecutionResult, output_schema: object) -> Any:
    """The structured value to send, if the tool declares an output schema.

    It is ``meta["structuredContent"]`` when the tool put it there (as
    ``connect_mcp`` tools do), else the text parsed as a JSON object.
    """
    if output_schema is None or result.is_error:
        return None
    meta = result.meta
    if meta is not ABSENT and isinstance(meta, Mapping):
        value = meta.get("structuredContent")
        if isinstance(value, Mapping):
            return to_plain(value)
    try:
        parsed = json.loads(result.text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def to_call_result(
    result: ToolExecutionResult, output_schema: object = None
) -> types.CallToolResult:
    """A pipeline result as the ``CallToolResult`` an MCP client reads."""
    from mcp import types

    structured = structured_of(result, output_schema)
    # What a chat model would read, an MCP client reads: the content (no
    # lone surrogate can cross JSON-RPC), then the call's additionalContext,
    # which a model loop would add after the step's results.
    content = to_mcp_content(escape_tree(result.content))
    content += [
        types.TextContent(type="text", text=escape_surrogates(text))
        for text in context_texts([result])
    ]
    out = types.CallToolResult(
        content=content,
        is_error=result.is_error,
        structured_content=structured,
    )
    if result.error is not None:
        # The structured code rides in _meta, where a client's code finds it.
        out.meta = {"dsh_nb/error": result.error.to_json()}
    return out


def _mcp_to_block(item: Any) -> dict[str, Any]:
    dumped = item.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not isinstance(dumped, dict):
        return {"type": "text", "text": str(dumped)}
    return dumped


def from_call_result(result: types.CallToolResult) -> dict[str, Any]:
    """An MCP result as ``{"content": [...], "meta": {...}}`` for execute().

    Text stays text; images, audio, embedded resources and resource links
    keep MCP's own JSON shape as blocks; structured content and the result's
    ``_meta`` go to ``meta``, where cards and code can read them.
    """
    blocks = [_mcp_to_block(item) for item in result.content]
    meta: dict[str, Any] = {}
    if result.structured_content is not None:
        meta["structuredContent"] = result.structured_content
        if not blocks:
            text = json.dumps(result.structured_content, ensure_ascii=False)
            blocks.append({"type": "text", "text": text})
    if result.meta:
        meta["_meta"] = dict(result.meta)
    out: dict[str, Any] = {"content": blocks}
    if meta:
        out["meta"] = meta
    return out
