"""The tools the MCP conformance suite's server scenarios call, as dsh_nb tools.

``python -m dsh_nb serve tests/mcp/conformance/conformance_tools.py --http``
serves them; each does what its scenario's text asks (the names, the
content, the messages), written the way a user writes a tool: signature
tools, and a ``ToolContext`` for progress, log lines, questions and
samples.
"""

from __future__ import annotations

import asyncio
import base64
import enum
import json
from typing import Literal

import pydantic

from dsh_nb import ToolContext, ToolRegistry, define_tool, tool

registry = ToolRegistry(sync_tools="thread")

# A 1x1 red PNG and a silent 8-sample WAV.
_PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
        "53de0000000c4944415408d763f8cfc000000301010018dd8db00000000049"
        "454e44ae426082"
    )
).decode()
_WAV = base64.b64encode(
    b"RIFF"
    + (36 + 8).to_bytes(4, "little")
    + b"WAVEfmt "
    + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little")
    + (1).to_bytes(2, "little")
    + (8000).to_bytes(4, "little")
    + (8000).to_bytes(4, "little")
    + (1).to_bytes(2, "little")
    + (8).to_bytes(2, "little")
    + b"data"
    + (8).to_bytes(4, "little")
    + bytes([128] * 8)
).decode()


def _blocks(name: str, description: str, *blocks: dict[str, object]) -> None:
    content = list(blocks)
    registry.register(
        define_tool(
            name=name,
            description=description,
            parameters={},
            execute=lambda args, execution: content,
        )
    )


_blocks(
    "test_simple_text",
    "Return a simple text.",
    {"type": "text", "text": "This is a simple text response for testing."},
)
_blocks(
    "test_image_content",
    "Return a 1x1 red PNG.",
    {"type": "image", "data": _PNG, "mimeType": "image/png"},
)
_blocks(
    "test_audio_content",
    "Return a short silent WAV.",
    {"type": "audio", "data": _WAV, "mimeType": "audio/wav"},
)
_blocks(
    "test_embedded_resource",
    "Return an embedded text resource.",
    {
        "type": "resource",
        "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        },
    },
)
_blocks(
    "test_multiple_content_types",
    "Return text, an image and a resource.",
    {"type": "text", "text": "Multiple content types test:"},
    {"type": "image", "data": _PNG, "mimeType": "image/png"},
    {
        "type": "resource",
        "resource": {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": json.dumps({"test": "data", "value": 123}),
        },
    },
)

registry.register(
    define_tool(
        name="json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        parameters={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {
                        "street": {"type": "string"},
                        "city": {"type": "string"},
                    },
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
            },
            "additionalProperties": False,
        },
        execute=lambda args, execution: "ok",
    )
)


@tool(name="test_reconnection")
async def reconnection() -> str:
    """Take a moment (the SSE polling scenario may reconnect meanwhile)."""
    await asyncio.sleep(0.1)
    return "Reconnection test completed"


@tool(name="test_error_handling")
def error_handling() -> str:
    """Always fail."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@tool(name="test_tool_with_logging")
async def tool_with_logging(ctx: ToolContext) -> str:
    """Send three info log lines, 50 ms apart."""
    ctx.log("Tool execution started")
    await asyncio.sleep(0.05)
    ctx.log("Tool processing data")
    await asyncio.sleep(0.05)
    ctx.log("Tool execution completed")
    return "Logging test completed"


@tool(name="test_tool_with_progress")
async def tool_with_progress(ctx: ToolContext) -> str:
    """Report 0, 50 and 100 of 100, 50 ms apart."""
    await ctx.progress(0, 100)
    await asyncio.sleep(0.05)
    await ctx.progress(50, 100)
    await asyncio.sleep(0.05)
    await ctx.progress(100, 100)
    return "Progress test completed"


@tool(name="test_sampling")
async def sampling(prompt: str, ctx: ToolContext) -> str:
    """Ask the client's model."""
    text = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {text}"


class UserInfo(pydantic.BaseModel):
    username: str = pydantic.Field(description="User's response")
    email: str = pydantic.Field(description="User's email address")


@tool(name="test_elicitation")
async def elicitation(message: str, ctx: ToolContext) -> str:
    """Ask the user for a name and an email."""
    answer = await ctx.ask(message, type=UserInfo)
    content = answer.value.model_dump() if answer.accepted else None
    return f"User response: action={answer.action}, content={json.dumps(content)}"


class Defaults(pydantic.BaseModel):
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


@tool(name="test_elicitation_sep1034_defaults")
async def elicitation_sep1034_defaults(ctx: ToolContext) -> str:
    """Ask with a default for every primitive type (SEP-1034)."""
    answer = await ctx.ask("Please review and update the form fields", type=Defaults)
    content = answer.value.model_dump() if answer.accepted else None
    return (
        f"Elicitation completed: action={answer.action}, content={json.dumps(content)}"
    )


class Titled(enum.Enum):
    FIRST_OPTION = "value1"
    SECOND_OPTION = "value2"
    THIRD_OPTION = "value3"


class TitledChoice(enum.Enum):
    FIRST_CHOICE = "value1"
    SECOND_CHOICE = "value2"
    THIRD_CHOICE = "value3"


class Enums(pydantic.BaseModel):
    untitledSingle: Literal["option1", "option2", "option3"]
    titledSingle: Titled
    legacyEnum: Literal["opt1", "opt2", "opt3"] = pydantic.Field(
        json_schema_extra={"enumNames": ["Option One", "Option Two", "Option Three"]}
    )
    untitledMulti: list[Literal["option1", "option2", "option3"]]
    titledMulti: list[TitledChoice]


@tool(name="test_elicitation_sep1330_enums")
async def elicitation_sep1330_enums(ctx: ToolContext) -> str:
    """Ask with all five enum forms (SEP-1330)."""
    answer = await ctx.ask("Please select options", type=Enums)
    content = answer.value.model_dump(mode="json") if answer.accepted else None
    return (
        f"Elicitation completed: action={answer.action}, content={json.dumps(content)}"
    )


for _tool in (
    reconnection,
    error_handling,
    tool_with_logging,
    tool_with_progress,
    sampling,
    elicitation,
    elicitation_sep1034_defaults,
    elicitation_sep1330_enums,
):
    registry.register(_tool)
