"""A served file named like a module the server uses is still served.

Issue 34 §2.12: ``email.py``, ``secrets.py``, ``json.py``, ``typing.py``,
``mcp.py`` and ``uvicorn.py`` failed to start, because the file was
registered under its bare stem in ``sys.modules``, in place of the module
the server imports. Each is now loaded under a private name. Real
``serve`` processes and the SDK's client.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcpkit import client
from servekit import http_server, serve_argv, stdio

MODULE = '''
from dataclasses import dataclass

from dsh_nb import tool


@dataclass
class Greeting:
    word: str


@tool
def greet(name: str) -> str:
    """Greet someone, from a file named {stem}.py."""
    return f"{{Greeting('hello').word}} {{name}} from {stem}"
'''
NAMES = ("email", "secrets", "json", "typing", "mcp", "uvicorn")


def _module(tmp_path: Path, stem: str) -> Path:
    folder = tmp_path / stem
    folder.mkdir()
    path = folder / f"{stem}.py"
    path.write_text(MODULE.format(stem=stem))
    return path


@pytest.mark.parametrize("stem", NAMES)
async def test_stdio_serves_a_file_named_like_a_module_it_uses(
    runtime: Path, tmp_path: Path, stem: str
) -> None:
    path = _module(tmp_path, stem)
    async with stdio(serve_argv(str(path), "--stdio"), runtime) as c:
        names = [t.name for t in (await c.list_tools()).tools]
        done = await c.call_tool("greet", {"name": "ada"})
    assert names == ["greet"]
    assert (done.is_error, done.content[0].text) == (False, f"hello ada from {stem}")


@pytest.mark.parametrize("stem", ["uvicorn", "mcp", "email"])
async def test_http_serves_a_file_named_like_a_module_it_uses(
    runtime: Path, tmp_path: Path, stem: str
) -> None:
    path = _module(tmp_path, stem)
    with http_server(runtime, target=path) as server:
        async with client(server.url, server.token(), mode="auto") as c:
            done = await c.call_tool("greet", {"name": "bob"})
    assert done.content[0].text == f"hello bob from {stem}"
