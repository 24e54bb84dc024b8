"""What a newcomer meets in a real kernel: restarts of the server, a page
reload, ask rules and arguments the tool refuses, a planted runtime name.

One ipykernel, driven by jupyter_client as a frontend would; the MCP SDK's
client runs in this process on a worker thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcpkit import client

sys.path.insert(0, str(Path(__file__).parents[1] / "notebook"))
from kernel_harness import KernelHarness

SETUP = """
%load_ext dsh_nb
import asyncio, json, os
import dsh_nb
from dsh_nb.notebook import extension as ext
state = ext.current_state()
reg = dsh_nb.registry()
reg.register(dsh_nb.define_tool(
    name="add", description="Add two numbers.",
    parameters={"a": {"type": "number", "required": True},
                "b": {"type": "number", "required": True}},
    execute=lambda a: str(a["a"] + a["b"])))
reg.register(dsh_nb.define_tool(
    name="delete", description="Delete a file.",
    parameters={"path": {"type": "string", "required": True}},
    execute=lambda a: "deleted " + a["path"]))
reg.register(dsh_nb.define_tool(
    name="echo", description="Echo.",
    parameters={"text": {"type": "string", "required": True}},
    execute=lambda a: a["text"]))
"""

MUL = '''%%tool --ask
def mul(a: int, b: int) -> str:
    """Multiply two integers."""
    return str(a * b)
'''

_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2)


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(SETUP, timeout=60)
        harness.run(MUL)
        harness.run("%tool_policy ask add delete")
        yield harness


def in_client(kernel: KernelHarness, coro_fn: Any, timeout: float = 60) -> Any:
    fut = _POOL.submit(lambda: asyncio.run(coro_fn()))
    kernel.wait_for(fut.done, timeout=timeout, what="the MCP client")
    return fut.result()


def runtime_files(kernel: KernelHarness) -> list[Path]:
    return sorted((kernel.tmp / "runtime").glob("dsh-mcp-*.json"))


def entry(kernel: KernelHarness) -> dict[str, Any]:
    files = [p for p in runtime_files(kernel) if p.is_file()]
    assert len(files) == 1, files
    return json.loads(files[0].read_text())


def test_headless_ask_rules_pass_refused_arguments_on_to_invalid_args(kernel):
    reply = kernel.run(
        """
state.config.frontend = "headless"
asked = len(state.agent.session.of_type("approval/asked"))
out = []
for name, args in [("add", {"a": "two", "b": 1}), ("mul", {"a": "x", "b": 2}),
                   ("add", {"a": 1, "b": 2})]:
    r = await dsh_nb.call(name, **args)
    out.append([r.error.code if r.error else None, r.text])
out.append(len(state.agent.session.of_type("approval/asked")) - asked)
print(json.dumps(out))
"""
    )
    bad_add, bad_mul, good_add, asked = json.loads(reply.stdout)
    assert bad_add[0] == "INVALID_ARGS" and "invalid arguments" in bad_add[1]
    assert bad_mul[0] == "INVALID_ARGS" and '"a"' in bad_mul[1]
    # A call the tool accepts is still asked about (and, headless, refused).
    assert good_add[0] is None and "no approval channel" in good_add[1]
    assert asked == 1


def test_a_planted_runtime_name_does_not_stop_tools_serve(kernel):
    pid = int(kernel.run("print(os.getpid())").stdout)
    planted = kernel.tmp / "runtime" / f"dsh-mcp-{pid}.json"
    planted.mkdir()  # what another user could leave in a shared folder
    kernel.run('state.config.frontend = "interactive"')
    reply = kernel.run("%tools serve", timeout=60)
    assert reply.error is None, reply.error
    assert "cannot listen on port" not in reply.text
    kernel.wait_for(lambda: any(p.is_file() for p in runtime_files(kernel)))
    assert planted.is_dir()


def test_an_mcp_client_call_with_refused_arguments_is_not_asked_about(kernel):
    served = entry(kernel)

    async def go():
        async with client(served["url"], served["token"], name="probe") as c:
            start = time.monotonic()
            bad = await asyncio.wait_for(c.call_tool("delete", {}), 20)
            return bad, time.monotonic() - start

    bad, took = in_client(kernel, go)
    assert bad.is_error and "invalid arguments" in bad.content[0].text
    assert took < 5
    assert kernel.run("print(len(dsh_nb.pending_approvals()))").stdout.strip() == "0"


def test_tools_serve_again_shows_the_running_servers_panel(kernel):
    served = entry(kernel)
    reply = kernel.run("%tools serve", timeout=30)
    assert reply.error is None, reply.error
    assert "already serves MCP" in reply.stdout and "shown again" in reply.stdout
    assert any(served["url"] in t for t in _texts(reply))
    msg_id = reply.msg_id

    async def go():
        async with client(served["url"], served["token"], name="after-reload") as c:
            return (await c.call_tool("echo", {"text": "here"})).content[0].text

    assert in_client(kernel, go) == "here"
    # The new call's card lands in the new panel (a display made in this cell).
    shown = {
        m["content"].get("transient", {}).get("display_id")
        for m in kernel.messages(msg_id)
        if m["msg_type"] == "display_data"
    }

    def card_in_new_panel() -> bool:
        kernel.pump(0.05)
        for m in kernel.messages(msg_id) + _all_updates(kernel):
            data = m["content"].get("data", {})
            card = data.get("application/vnd.dsh.tool-card+json")
            display_id = m["content"].get("transient", {}).get("display_id")
            if card and card["tool"] == "echo" and display_id in shown:
                if card["status"] == "done":
                    return True
        return False

    kernel.wait_for(card_in_new_panel, timeout=15, what="the card in the new panel")


def test_stop_then_serve_keeps_the_new_servers_file(kernel):
    old = entry(kernel)
    reply = kernel.run("%tools serve --stop\n%tools serve", timeout=60)
    assert reply.error is None, reply.error
    kernel.pump(3.5)  # the old server's cleanup has run by now
    time.sleep(0.5)
    kernel.pump(0.5)
    new = entry(kernel)
    assert new["url"] != old["url"] or new["token"] != old["token"]

    async def go():
        async with client(new["url"], new["token"]) as c:
            return [t.name for t in (await c.list_tools()).tools]

    assert "echo" in in_client(kernel, go)
    done = kernel.run(
        "import subprocess, sys\n"
        "p = subprocess.run([sys.executable, '-m', 'dsh_nb', 'mcp-config'],"
        " capture_output=True, text=True)\n"
        "print(p.returncode, p.stdout.splitlines()[0] if p.stdout else p.stderr)"
    )
    assert done.stdout.strip() == f"0 URL:    {new['url']}"


def _texts(reply: Any) -> list[str]:
    return [
        str(m["content"].get("data", {}).get("text/plain", ""))
        for m in reply.messages
        if m["msg_type"] in {"display_data", "update_display_data"}
    ]


def _all_updates(kernel: KernelHarness) -> tuple[Any, ...]:
    found: list[Any] = []
    for msg_id in list(kernel._iopub):
        found.extend(
            m for m in kernel.messages(msg_id) if m["msg_type"] == "update_display_data"
        )
    return tuple(found)
