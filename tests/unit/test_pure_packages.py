"""Everything under the notebook layer runs with no Jupyter package at all.

The subprocess below refuses to import IPython, ipykernel, ipywidgets,
traitlets and comm, then imports every module of ``dsh_nb.tools``,
``dsh_nb.export``, ``dsh_nb.cards``, ``dsh_nb.models``, ``dsh_nb.mcp`` (and ``dsh_nb.evals``
when present) and runs each package's door, its ``registry=None`` defaults
included: a lazy import of the notebook hidden in a function would fail here.
"""

from __future__ import annotations

import subprocess
import sys

JUPYTER = ("IPython", "ipykernel", "ipywidgets", "traitlets", "comm")

CODE = f"""
import asyncio, importlib, importlib.abc, pkgutil, sys

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {JUPYTER!r} or name.startswith("dsh_nb.notebook"):
            raise ImportError(f"no Jupyter here: {{name}}")
        return None

sys.meta_path.insert(0, Refuse())

import dsh_nb
names = ["dsh_nb.tools", "dsh_nb.export", "dsh_nb.cards", "dsh_nb.models", "dsh_nb.mcp", "dsh_nb.evals"]
for name in names:
    try:
        package = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        assert exc.name == "dsh_nb.evals", exc
        continue
    for info in pkgutil.walk_packages(package.__path__, name + "."):
        importlib.import_module(info.name)

from dsh_nb.tools import Agent, ToolExecutionInput, ToolRegistry, tool

@tool
def add(a: int, b: int) -> str:
    return str(a + b)

async def tools_door():
    for mode in ("inline", "thread"):
        registry = ToolRegistry(sync_tools=mode)
        registry.register(add)
        registry.on_trace(lambda ex, result, records: list(records))
        agent = Agent("script")
        run = await registry.run(ToolExecutionInput(
            call_id="c1", name="add", arguments={{"a": 1, "b": 2}}, agent=agent))
        assert run.result.text == "3" and run.outcome.status == "done"
        assert agent.session.to_jsonl()

async def model_door():
    import openai
    from dsh_nb.models import Chat
    from dsh_nb.models.replay_server import ReplayServer
    from dsh_nb.models.scripted import ToolCallSpec, Turn

    script = [Turn(tool_calls=(ToolCallSpec(name="add", arguments='{{"a": 2, "b": 3}}'),)),
              Turn(text="5")]
    with ReplayServer(script) as server:
        client = openai.AsyncOpenAI(base_url=server.openai_url, api_key=server.token)
        chat = Chat("m", client=client)  # registry=None: an empty one of its own
        chat.registry.register(add)
        reply = await chat.send("2 + 3?")
        await client.close()
    assert reply.text == "5", reply
    assert [m["role"] for m in chat.messages] == ["user", "assistant", "tool", "assistant"]

async def mcp_door():
    from dsh_nb.mcp.client import connect_mcp
    from dsh_nb.mcp.server import serve_mcp

    for call in (lambda: serve_mcp(), lambda: connect_mcp("x", command=["true"])):
        try:
            result = call()
            if asyncio.iscoroutine(result):
                await result
        except TypeError as exc:
            assert "registry" in str(exc), exc
        else:
            raise AssertionError("registry=None must not reach for a notebook")
    registry = ToolRegistry()
    registry.register(add)
    server = serve_mcp(registry=registry)
    await server.started()
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    http = httpx2.AsyncClient(headers={{"Authorization": f"Bearer {{server.token}}"}})
    try:
        async with Client(streamable_http_client(server.url, http_client=http)) as c:
            result = await c.call_tool("add", {{"a": 4, "b": 5}})
    finally:
        await server.stop()
    assert result.content[0].text == "9", result

async def main():
    await tools_door()
    await model_door()
    await mcp_door()

asyncio.run(main())
print([m for m in {JUPYTER!r} if m in sys.modules])
"""


def test_every_layer_below_the_notebook_runs_without_jupyter() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
