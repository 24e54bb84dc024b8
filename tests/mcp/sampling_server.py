"""An MCP server written with the official SDK whose tools ask its client's
model (``sampling/createMessage``) and its person (``elicitation/create``),
for ``connect_mcp``'s tests.

Run as a stdio server: ``python sampling_server.py``. ``summarise`` sends
one user message (and a system prompt) and returns what the model said;
a refusal comes back as the SDK raised it, so the test reads the client's
error as the server saw it.
"""

from __future__ import annotations

import warnings

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

warnings.simplefilter("ignore")  # sampling's 2026 deprecation, per call

server = MCPServer("sampler")


@server.tool()
async def summarise(text: str, ctx: Context) -> str:
    """Ask the client's model for a one-line summary of ``text``."""
    try:
        result = await ctx.session.create_message(
            [
                types.SamplingMessage(
                    role="user",
                    content=types.TextContent(type="text", text=f"Summarise: {text}"),
                )
            ],
            max_tokens=50,
            system_prompt="Answer in one line.",
        )
    except Exception as exc:  # noqa: BLE001 - the client's error, as the server saw it
        return f"refused: {exc}"
    content = result.content
    return f"{result.model} said: {getattr(content, 'text', content)}"


class Name(BaseModel):
    name: str = "ada"


@server.tool()
async def who(ctx: Context) -> str:
    """Ask the client's person for a name."""
    answer = await ctx.elicit("Who is asking?", Name)
    return f"{answer.action}: {getattr(getattr(answer, 'data', None), 'name', None)}"


if __name__ == "__main__":
    server.run("stdio")
