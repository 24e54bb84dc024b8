"""connect_mcp against real published servers and a scripted faulty one."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcpkit import add_tool, approval_registry, children

from dsh_nb.mcp.client import McpConnectionError, connect_mcp
from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import AbortController, ToolExecutionInput, ToolRegistry

BIN = Path(sys.executable).parent
FAULT = [sys.executable, str(Path(__file__).with_name("fault_server.py"))]
GARBAGE = [sys.executable, str(Path(__file__).with_name("garbage_server.py"))]


# Each test serves or connects MCP servers with a runtime folder of its own.
pytestmark = pytest.mark.usefixtures("runtime_env")


async def run(registry, name, **args):
    return await registry.execute(
        ToolExecutionInput(call_id="c", name=name, arguments=args)
    )


async def test_mcp_server_time_tools_run_through_the_pipeline():
    registry = ToolRegistry()
    before = children()
    seen = []
    registry.on_pre_execute(lambda ex, next_: (seen.append(ex.name), next_())[1])
    conn = await connect_mcp(
        "time",
        command=[str(BIN / "mcp-server-time"), "--local-timezone", "UTC"],
        registry=registry,
    )
    try:
        assert sorted(conn.tools) == ["time_convert_time", "time_get_current_time"]
        schemas = {s["name"]: s["parameters"] for s in registry.schemas()}
        remote = conn.tools["time_convert_time"].input_schema
        assert schemas["time_convert_time"] == remote  # as given
        result = await run(
            registry,
            "time_convert_time",
            source_timezone="UTC",
            time="12:00",
            target_timezone="Asia/Tokyo",
        )
        assert not result.is_error
        assert result.meta["structuredContent"]["target"]["datetime"].endswith(
            "T21:00:00+09:00"
        )
        assert '"time_difference": "+9.0h"' in result.text
        bad = await run(registry, "time_get_current_time", timezone="Nowhere/Else")
        assert bad.is_error and bad.error.code == "MCP_TOOL_ERROR"
        assert "Invalid timezone" in bad.text
        # Our validation runs first: the server never sees bad arguments.
        missing = await run(registry, "time_get_current_time")
        assert missing.error.code == "INVALID_ARGS"
        assert seen == ["time_convert_time", "time_get_current_time"] * 1 + [
            "time_get_current_time"
        ]
        spawned = children() - before
        assert len(spawned) == 1
    finally:
        await conn.close()
    assert registry.schemas() == []
    assert not (children() & spawned), "the server process outlived close()"


async def test_mcp_server_git_reads_a_repository(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    (repo / "a.txt").write_text("hello\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "first commit"], check=True)
    (repo / "a.txt").write_text("hello\nworld\n")
    registry = ToolRegistry()
    conn = await connect_mcp(
        "git",
        command=[str(BIN / "mcp-server-git"), "--repository", str(repo)],
        registry=registry,
    )
    try:
        assert {"git_git_status", "git_git_log", "git_git_diff_unstaged"} <= set(
            conn.tools
        )
        log = await run(registry, "git_git_log", repo_path=str(repo))
        assert "first commit" in log.text
        diff = await run(registry, "git_git_diff_unstaged", repo_path=str(repo))
        assert "+world" in diff.text
    finally:
        await conn.close()


async def test_content_list_changed_and_cancellation(tmp_path):
    log = tmp_path / "fault.log"
    registry = ToolRegistry()
    conn = await connect_mcp(
        "f", command=FAULT, registry=registry, env={"FAULT_LOG": str(log)}
    )
    try:
        # "files.read" is renamed where it is registered, so a model request
        # carrying the registry's tools is never refused for one name; the
        # call still reaches the server's own name.
        assert "f_files_read" in conn.tools and "f_files.read" not in conn.tools
        assert (await run(registry, "f_files_read")).text == "read it"
        rich = await run(registry, "f_image")
        assert [b["type"] for b in rich.content] == ["text", "image", "resource"]
        assert rich.content[1]["mimeType"] == "image/png"
        assert rich.content[2]["resource"]["text"] == "notes"
        assert rich.meta["structuredContent"] == {"n": 3}
        assert registry.get("f_image").output_schema["properties"]["n"]
        await run(registry, "f_grow")
        await _until(lambda: "f_grown1" in conn.tools)
        assert registry.get("f_grown1") is not None
        controller = AbortController()
        call = asyncio.ensure_future(
            registry.execute(
                ToolExecutionInput(
                    call_id="s",
                    name="f_slow",
                    arguments={"seconds": 60},
                    signal=controller.signal,
                )
            )
        )
        await _until(lambda: log.exists() and "slow started" in log.read_text())
        controller.abort("stop")
        result = await asyncio.wait_for(call, 10)
        assert result.is_error
        await _until(lambda: "slow cancelled" in log.read_text())
        # The connection is still good after a cancelled call.
        assert (await run(registry, "f_echo", text="still here")).text == "still here"
    finally:
        await conn.close()


async def test_a_server_killed_mid_call_gives_a_clear_error_then_closed():
    registry = ToolRegistry()
    conn = await connect_mcp("f", command=FAULT, registry=registry)
    crashed = await asyncio.wait_for(run(registry, "f_crash"), 20)
    assert crashed.is_error and crashed.error.code == "MCP_CONNECTION"
    assert "is closed" in crashed.text
    assert "about to crash: simulated fault" in crashed.text  # the stderr tail
    later = await run(registry, "f_echo", text="x")
    assert later.error.code == "MCP_CONNECTION" and "is closed" in later.text
    assert conn.closed
    again = await connect_mcp("f", command=FAULT, registry=registry)  # reconnect
    try:
        assert (await run(registry, "f_echo", text="back")).text == "back"
    finally:
        await again.close()


async def test_a_server_writing_garbage_mid_call_gives_a_clear_error_then_closed(
    capfd,
):
    registry = ToolRegistry()
    before = children()
    conn = await connect_mcp("g", command=GARBAGE, registry=registry)
    assert (await run(registry, "g_echo", text="fine")).text == "fine"
    broken = await asyncio.wait_for(run(registry, "g_explode"), 20)
    assert broken.is_error and broken.error.code == "MCP_CONNECTION"
    assert "is closed" in broken.text
    assert "wrote a line that is not JSON-RPC: 'this is not JSON-RPC'" in broken.text
    assert "about to write garbage: simulated fault" in broken.text  # stderr tail
    later = await run(registry, "g_echo", text="x")
    assert later.error.code == "MCP_CONNECTION" and "is closed" in later.text
    assert conn.closed
    await _until(lambda: not (children() - before))  # the server was ended
    # The loop is fine, and nothing was printed: the error is the result.
    assert await asyncio.sleep(0, "alive") == "alive"
    assert "Traceback" not in capfd.readouterr().err
    again = await connect_mcp("g", command=GARBAGE, registry=registry)  # reconnect
    try:
        assert (await run(registry, "g_echo", text="back")).text == "back"
    finally:
        await again.close()


async def test_servers_that_do_not_start_fail_fast_with_their_stderr():
    registry = ToolRegistry()
    dies = "import sys; print('no config file: /etc/x', file=sys.stderr); sys.exit(3)"
    with pytest.raises(McpConnectionError, match="did not start") as info:
        await connect_mcp(
            "bad", command=[sys.executable, "-c", dies], registry=registry
        )
    assert "no config file: /etc/x" in str(info.value)
    with pytest.raises(McpConnectionError, match="No such file"):
        await connect_mcp("bad", command=["/nonexistent/server"], registry=registry)
    before = children()
    garbage = "import time\nprint('this is not JSON-RPC', flush=True)\ntime.sleep(60)"
    # The real reason, at once, not a timeout: the line is not JSON-RPC.
    with pytest.raises(McpConnectionError, match="not JSON-RPC: 'this is not"):
        await connect_mcp(
            "bad", command=[sys.executable, "-c", garbage], registry=registry, timeout=2
        )
    await _until(lambda: not (children() - before))
    assert registry.schemas() == []


async def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="exactly one of"):
        await connect_mcp("x", registry=ToolRegistry())
    with pytest.raises(ValueError, match="connection name"):
        await connect_mcp("no spaces", command=["x"], registry=ToolRegistry())
    with pytest.raises(ValueError, match="list of str"):
        await connect_mcp("x", command="mcp-server-time", registry=ToolRegistry())


async def test_round_trip_serve_then_connect_over_http():
    served, gate = approval_registry("add")
    served.register(add_tool())
    server = serve_mcp(registry=served)
    await server.started()
    local = ToolRegistry()
    conn = await connect_mcp(
        "nb",
        url=server.url,
        headers={"Authorization": f"Bearer {server.token}"},
        registry=local,
    )
    try:
        assert list(conn.tools) == ["nb_add"]
        call = asyncio.ensure_future(run(local, "nb_add", a=40, b=2))
        await asyncio.wait_for(gate.asked.wait(), 10)
        gate.waiting[0][1].set_result("allowed-once")
        assert (await asyncio.wait_for(call, 10)).text == "42"
        dispose = served.register(
            add_tool().__class__(**{**_fields(add_tool()), "name": "plus"})
        )
        await _until(lambda: "nb_plus" in conn.tools)
        dispose()
        await _until(lambda: "nb_plus" not in conn.tools)
        assert local.get("nb_plus") is None
    finally:
        await conn.close()
        await server.stop()


def _fields(definition):
    from dataclasses import fields

    return {f.name: getattr(definition, f.name) for f in fields(definition)}


async def _until(predicate, timeout=15.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)


def test_no_environment_leaks_into_the_module():
    assert "FAULT_LOG" not in os.environ


async def test_a_hostile_schema_pattern_never_blocks_the_loop():
    # ^(a+)+$ against 40 a's and a "!" takes Python's re hours; the alarm
    # turns a blocked loop into a failure instead of a hung test.
    import signal

    def blocked(signum, frame):
        raise TimeoutError("the event loop was blocked for 20 s by a pattern")

    registry = ToolRegistry()
    conn = await connect_mcp("f", command=FAULT, registry=registry)
    ticks = 0

    async def tick():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.ensure_future(tick())
    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(20)
    try:
        started = asyncio.get_running_loop().time()
        result = await run(registry, "f_redos", s="a" * 40 + "!")
        took = asyncio.get_running_loop().time() - started
        assert took < 2.0, took  # 0.2 s of budget; unbounded: hours
        assert result.is_error and result.error.code == "INVALID_ARGS"
        assert "'^(a+)+$'" in result.text
        assert (await run(registry, "f_redos", s="a" * 40)).text == "matched"
        await asyncio.sleep(0.05)
        assert ticks >= 3  # the loop kept running
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        ticker.cancel()
        await conn.close()
