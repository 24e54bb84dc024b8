"""A tool that raises KeyboardInterrupt or GeneratorExit never ends ``serve``.

Issue 34 §2.2: ``serve --http`` exited 130 on a body's KeyboardInterrupt,
and a GeneratorExit from an async body left it refusing every new session.
Each such call is an error result, as SystemExit gets; then new sessions of
both protocol eras still list and call tools, and the process still runs.
Real ``serve --http`` and ``--stdio`` processes, the SDK's client.
"""

from __future__ import annotations

from pathlib import Path

from interrupting_tools import HOSTILE
from mcpkit import ERAS, client
from servekit import HERE, http_server, serve_argv, stdio

TOOLS = HERE / "interrupting_tools.py"
EXPECTED = {
    "kbi_sync": "Error: KeyboardInterrupt",
    "kbi_async": "Error: KeyboardInterrupt",
    "gen_exit": "Error: GeneratorExit",
    "gen_exit_sync": "Error: GeneratorExit",
    "kbi_str": "Error: KeyboardInterrupt",
    "listened": "Error: the call was interrupted (KeyboardInterrupt)",
}


async def test_http_answers_each_interrupt_as_an_error_and_keeps_serving(
    runtime: Path,
) -> None:
    assert set(EXPECTED) == {*HOSTILE, "listened"}
    with http_server(runtime, target=TOOLS) as server:
        token = server.token()
        for mode in ERAS:
            for name, text in EXPECTED.items():
                # A fresh session for each: none may be refused after one.
                async with client(server.url, token, mode=mode) as c:
                    result = await c.call_tool(name, {})
                    assert (result.is_error, result.content[0].text) == (True, text)
                assert server.proc.poll() is None, (mode, name)
        for mode in ERAS:
            async with client(server.url, token, mode=mode) as c:
                listed = {t.name for t in (await c.list_tools()).tools}
                done = await c.call_tool("add", {"a": 2, "b": 3})
            assert "add" in listed
            assert (done.is_error, done.content[0].text) == (False, "5")
        assert server.proc.poll() is None


async def test_stdio_answers_each_interrupt_as_an_error_and_keeps_serving(
    runtime: Path,
) -> None:
    async with stdio(serve_argv(str(TOOLS), "--stdio"), runtime) as c:
        for name, text in EXPECTED.items():
            result = await c.call_tool(name, {})
            assert (result.is_error, result.content[0].text) == (True, text)
        done = await c.call_tool("add", {"a": 1, "b": 1})
    assert done.content[0].text == "2"
