"""A served tool's ``ToolContext`` through the official MCP SDK client.

The standalone adapter (what ``python -m dsh_nb serve`` and, through the
same ``RegistryAdapter``, the kernel's ``%tools serve`` run) is served
in-process to the SDK's ``Client``: each MCP message a tool's context
causes is checked as the client receives it.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from typing import Any, Literal

import pydantic
from mcp import Client, types

from dsh_nb.mcp.standalone import StandaloneAdapter
from dsh_nb.tools import ToolContext, ToolRegistry, tool


class Size(enum.Enum):
    SMALL = "s"
    LARGE = "l"


class Export(pydantic.BaseModel):
    path: str = pydantic.Field(description="where to write")
    rows: int = 100
    size: Size = Size.SMALL


@tool
async def count(n: int, ctx: ToolContext) -> str:
    """Count to n, reporting progress."""
    for i in range(1, n + 1):
        await ctx.progress(i, n, f"at {i}")
        await asyncio.sleep(0.12)  # slower than the throttle: every report
    return "counted"


@tool
def chatty() -> str:
    """Print, log and warn from a sync body on a worker thread."""
    print("printed line")
    logging.getLogger("chatty.tool").error("an error record")
    return "ok"


@tool
async def levels(ctx: ToolContext) -> str:
    """One line per level."""
    for level in ("debug", "info", "warning", "error"):
        ctx.log(f"a {level} line", level=level)
    return "ok"


@tool
async def pick(ctx: ToolContext) -> str:
    """Ask which file, then a small form."""
    file = await ctx.ask("Which file?", type=Literal["a.csv", "b.csv"])
    form = await ctx.ask("Export how?", type=Export)
    if not form.accepted:
        return f"{file.action}:{file.value}; form {form.action}"
    return f"{file.action}:{file.value}; {form.value.path} {form.value.rows} {form.value.size.name}"


@tool
async def summarise(text: str, ctx: ToolContext) -> str:
    """Ask the client's model."""
    return await ctx.sample(f"Summarise: {text}", system="be brief", max_tokens=50)


def _server() -> Any:
    registry = ToolRegistry(sync_tools="thread")
    for t in (count, chatty, levels, pick, summarise):
        registry.register(t)
    adapter = StandaloneAdapter(registry, spec="test", transport="stdio")
    return adapter.build(asyncio.get_running_loop())


def _text(result: types.CallToolResult) -> str:
    return "".join(getattr(b, "text", "") for b in result.content)


async def test_progress_notifications_follow_the_progress_token() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(
        done: float, total: float | None, message: str | None
    ) -> None:
        seen.append((done, total, message))

    async with Client(_server(), mode="legacy") as client:
        result = await client.call_tool(
            "count", {"n": 3}, progress_callback=on_progress
        )
        assert _text(result) == "counted"
        assert seen == [(1, 3, "at 1"), (2, 3, "at 2"), (3, 3, "at 3")]
        seen.clear()
        await client.call_tool("count", {"n": 2})  # no token: no progress
    assert seen == []


async def test_log_lines_and_prints_are_messages_honouring_set_level() -> None:
    messages: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        messages.append(params)

    async with Client(_server(), mode="legacy", logging_callback=on_log) as client:
        assert client.server_capabilities.logging is not None
        assert _text(await client.call_tool("chatty", {})) == "ok"
        got = [(m.level, m.data, m.logger) for m in messages]
        assert ("info", "printed line", "chatty") in got
        assert ("error", "an error record", "chatty.tool") in got
        messages.clear()
        await client.set_logging_level("warning")
        await client.call_tool("levels", {})
    assert [(m.level, m.data) for m in messages] == [
        ("warning", "a warning line"),
        ("error", "a error line"),
    ]


async def test_ask_is_an_elicitation_with_enums_and_defaults() -> None:
    asked: list[types.ElicitRequestFormParams] = []

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        schema = params.requested_schema
        if "value" in schema["properties"]:
            return types.ElicitResult(action="accept", content={"value": "b.csv"})
        defaults = {
            k: v["default"] for k, v in schema["properties"].items() if "default" in v
        }
        return types.ElicitResult(
            action="accept", content={"path": "out.csv", **defaults}
        )

    async with Client(_server(), mode="legacy", elicitation_callback=elicit) as client:
        result = await client.call_tool("pick", {})
    assert _text(result) == "accept:b.csv; out.csv 100 SMALL"
    assert asked[0].message == "Which file?"
    assert asked[0].requested_schema["properties"]["value"]["enum"] == [
        "a.csv",
        "b.csv",
    ]
    form = asked[1].requested_schema["properties"]
    assert form["rows"]["default"] == 100
    assert [c["const"] for c in form["size"]["oneOf"]] == ["s", "l"]
    assert form["size"]["default"] == "s"
    assert asked[1].requested_schema["required"] == ["path"]


async def test_a_client_without_elicitation_gets_a_decline() -> None:
    async with Client(_server(), mode="legacy") as client:
        result = await client.call_tool("pick", {})
    assert _text(result) == "decline:None; form decline"


async def test_ask_in_a_2026_client_is_an_input_required_round() -> None:
    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        if "value" in params.requested_schema["properties"]:
            return types.ElicitResult(action="accept", content={"value": "a.csv"})
        return types.ElicitResult(action="decline")

    async with Client(_server(), mode="auto", elicitation_callback=elicit) as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("pick", {})
    assert _text(result) == "accept:a.csv; form decline"


async def test_sample_is_create_message_where_the_client_declared_sampling() -> None:
    requests: list[types.CreateMessageRequestParams] = []

    async def sample(ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        requests.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="short"),
            model="test-model",
        )

    async with Client(_server(), mode="legacy", sampling_callback=sample) as client:
        result = await client.call_tool("summarise", {"text": "long"})
    assert _text(result) == "short"
    assert requests[0].system_prompt == "be brief" and requests[0].max_tokens == 50
    assert requests[0].messages[0].content.text == "Summarise: long"

    async with Client(_server(), mode="legacy") as client:
        refused = await client.call_tool("summarise", {"text": "long"})
    assert refused.is_error
    assert "declared no sampling capability" in _text(refused)
