"""connect_mcp's start-up: the timeout holds, and a dying server fails it.

Real subprocess servers (``garbage_server.py``'s start-up faults) stand for
the servers people meet: one that prints a banner on stdout, one that never
answers, one that answers the handshake but not ``tools/list``, one that
crashes while starting. Each connect must answer within its ``timeout``
(10 % slack), give the real reason, and leave no process behind.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from mcpkit import children

from dsh_nb.mcp.client import McpConnectionError, connect_mcp
from dsh_nb.tools import ToolRegistry

GARBAGE = [sys.executable, str(Path(__file__).with_name("garbage_server.py"))]


# Each test serves or connects MCP servers with a runtime folder of its own.
pytestmark = pytest.mark.usefixtures("runtime_env")


async def _connect(mode: str, timeout: float) -> tuple[float, str, ToolRegistry]:
    registry = ToolRegistry()
    start = time.monotonic()
    with pytest.raises(McpConnectionError) as info:
        conn = await connect_mcp(
            "s", command=[*GARBAGE, mode], registry=registry, timeout=timeout
        )
        await conn.close()  # only reached when the bug is back
    return time.monotonic() - start, str(info.value), registry


async def _no_children(before: set[int], within: float = 3.0) -> None:
    end = time.monotonic() + within
    while children() - before:
        assert time.monotonic() < end, "the server outlived the failed connect"
        await asyncio.sleep(0.02)


async def test_a_banner_line_fails_the_connect_with_the_line():
    before = children()
    took, message, registry = await _connect("banner", timeout=10)
    assert took < 3, took
    assert "MCP server 's' did not start" in message
    assert "not JSON-RPC: 'garbage server listening on stdio'" in message
    assert "garbage server up" in message  # its stderr tail
    assert registry.schemas() == []
    await _no_children(before)


async def test_a_silent_server_times_out_on_time():
    before = children()
    took, message, _ = await _connect("silent", timeout=3)
    assert 3.0 <= took <= 3.3, took
    assert "did not answer within 3 s (waiting for its answer to initialize)" in (
        message
    )
    assert "garbage server up" in message
    await _no_children(before)


async def test_a_server_that_never_lists_its_tools_times_out_on_time():
    before = children()
    took, message, _ = await _connect("no-list", timeout=5)
    assert 5.0 <= took <= 5.5, took
    assert "did not answer within 5 s (waiting for its answer to tools/list)" in (
        message
    )
    await _no_children(before)


async def test_garbage_then_silence_gives_the_real_reason_before_the_timeout():
    before = children()
    garbage = "import time\nprint('hello from stdout', flush=True)\ntime.sleep(60)"
    registry = ToolRegistry()
    start = time.monotonic()
    with pytest.raises(McpConnectionError) as info:
        await connect_mcp(
            "g", command=[sys.executable, "-c", garbage], registry=registry, timeout=5
        )
    took = time.monotonic() - start
    assert took < 5.5, took
    assert "not JSON-RPC: 'hello from stdout'" in str(info.value)
    await _no_children(before)


async def test_a_server_dying_while_starting_fails_the_connect_with_why():
    before = children()
    took, message, registry = await _connect("die-on-list", timeout=10)
    assert took < 5, took
    assert "MCP server 's' did not start" in message
    assert "asked for tools: simulated start-up crash" in message
    assert registry.schemas() == []
    await _no_children(before)


async def test_a_good_start_still_connects():
    registry = ToolRegistry()
    conn = await connect_mcp("g", command=GARBAGE, registry=registry, timeout=10)
    try:
        assert not conn.closed
        assert sorted(conn.tools) == ["g_echo", "g_explode"]
    finally:
        await conn.close()
