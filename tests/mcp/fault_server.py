"""A stdio MCP server (the SDK's low-level Server) that misbehaves on request.

Tools: ``echo``, ``slow`` (waits; records a cancellation in $FAULT_LOG),
``crash`` (the process dies mid-call), ``grow`` (adds a tool and sends
tools/list_changed), ``image`` (image + resource content, structured),
``redos`` (a pattern that backtracks catastrophically in Python's ``re``).
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp import types
from mcp.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server

EXTRA: list[str] = []
LOG = os.environ.get("FAULT_LOG")


def note(text: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")


def schema(**props: str) -> dict:
    return {
        "type": "object",
        "properties": {k: {"type": v} for k, v in props.items()},
        "required": list(props),
    }


async def list_tools(ctx, params) -> types.ListToolsResult:
    tools = [
        types.Tool(
            name="echo", description="Echo.", input_schema=schema(text="string")
        ),
        types.Tool(
            name="slow", description="Slow.", input_schema=schema(seconds="number")
        ),
        types.Tool(name="crash", description="Crash.", input_schema=schema()),
        types.Tool(name="grow", description="Grow.", input_schema=schema()),
        # A name model APIs refuse: registered under a name they accept.
        types.Tool(name="files.read", description="Dotted.", input_schema=schema()),
        types.Tool(
            name="image",
            description="Rich content.",
            input_schema=schema(),
            output_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
        ),
        types.Tool(
            name="redos",
            description="A hostile pattern.",
            input_schema={
                "type": "object",
                "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}},
                "required": ["s"],
            },
        ),
    ]
    tools += [
        types.Tool(name=n, description="Grown.", input_schema=schema()) for n in EXTRA
    ]
    return types.ListToolsResult(tools=tools)


async def call_tool(ctx, params) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "echo":
        return types.CallToolResult(content=[types.TextContent(text=args["text"])])
    if params.name == "slow":
        note("slow started")
        try:
            await anyio.sleep(args["seconds"])
        except anyio.get_cancelled_exc_class():
            note("slow cancelled")
            raise
        return types.CallToolResult(content=[types.TextContent(text="slept")])
    if params.name == "crash":
        print("about to crash: simulated fault", file=sys.stderr, flush=True)
        os._exit(7)
    if params.name == "grow":
        EXTRA.append(f"grown{len(EXTRA) + 1}")
        await ctx.session.send_tool_list_changed()
        return types.CallToolResult(content=[types.TextContent(text="grew")])
    if params.name == "redos":
        return types.CallToolResult(content=[types.TextContent(text="matched")])
    if params.name == "files.read":
        return types.CallToolResult(content=[types.TextContent(text="read it")])
    if params.name == "image":
        return types.CallToolResult(
            content=[
                types.TextContent(text="a picture"),
                types.ImageContent(data="aGVsbG8=", mime_type="image/png"),
                types.EmbeddedResource(
                    resource=types.TextResourceContents(
                        uri="file:///notes.txt", mime_type="text/plain", text="notes"
                    )
                ),
            ],
            structured_content={"n": 3},
        )
    return types.CallToolResult(
        content=[types.TextContent(text=f"no tool {params.name}")], is_error=True
    )


class FaultServer(Server):
    def create_initialization_options(self, notification_options=None, *a, **kw):
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, *a, **kw)


async def main() -> None:
    server = FaultServer("fault", on_list_tools=list_tools, on_call_tool=call_tool)
    print("fault server up", file=sys.stderr, flush=True)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
