"""serve_mcp and connect_mcp inside a real kernel, driven by jupyter_client.

The kernel serves with ``%tools serve``; the MCP SDK's client runs in this
test process (a worker thread with its own event loop) while the main
thread pumps the kernel's messages, as a frontend would.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import types
from mcpkit import children, client

sys.path.insert(0, str(Path(__file__).parents[1] / "notebook"))
from kernel_harness import KernelHarness

from dsh_nb.mcp.client import connect_mcp
from dsh_nb.notebook.mcppanel import MAX_CARDS
from dsh_nb.tools import ToolExecutionInput, ToolRegistry

FAULT = str(Path(__file__).with_name("fault_server.py"))
GARBAGE = str(Path(__file__).with_name("garbage_server.py"))
TALKING = str(Path(__file__).with_name("talking_server.py"))
CARD = "application/vnd.dsh.tool-card+json"
WIDGET = "application/vnd.jupyter.widget-view+json"
NOTICES = "dsh_nb.approvals"

SETUP = f"""
%load_ext dsh_nb
import asyncio, json, os, sys
import dsh_nb
from dsh_nb.notebook import extension as ext
state = ext.current_state()
state.config.frontend = "interactive"
reg = dsh_nb.registry()
reg.register(dsh_nb.define_tool(
    name="add", description="Add two numbers.",
    parameters={{"a": {{"type": "number", "required": True}},
                 "b": {{"type": "number", "required": True}}}},
    execute=lambda a: str(a["a"] + a["b"])))
reg.register(dsh_nb.define_tool(
    name="delete", description="Delete a file.",
    parameters={{"path": {{"type": "string", "required": True}}}},
    execute=lambda a: "deleted " + a["path"]))
FAULT = {FAULT!r}
GARBAGE = {GARBAGE!r}
TALKING = {TALKING!r}
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(SETUP, timeout=60)
        harness.run("%tool_policy ask delete")
        yield harness


@pytest.fixture(scope="module")
def served(kernel: KernelHarness) -> dict[str, Any]:
    msg_id = kernel.execute_async("%tools serve")
    kernel.collect(msg_id, timeout=60).check()
    runtime = kernel.tmp / "runtime"
    kernel.wait_for(lambda: list(runtime.glob("dsh-mcp-*.json")), timeout=20)
    entry = json.loads(next(runtime.glob("dsh-mcp-*.json")).read_text())
    return {"url": entry["url"], "token": entry["token"], "cell": msg_id}


_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=4)


def in_client(kernel: KernelHarness, coro_fn: Any, timeout: float = 60) -> Any:
    """Run ``coro_fn()`` on a client loop while the kernel's messages flow."""
    fut = _POOL.submit(lambda: asyncio.run(coro_fn()))
    kernel.wait_for(fut.done, timeout=timeout, what="the MCP client")
    return fut.result()


def start_client(coro_fn: Any) -> concurrent.futures.Future[Any]:
    return _POOL.submit(lambda: asyncio.run(coro_fn()))


def pending(kernel: KernelHarness) -> int:
    return int(kernel.run("print(len(dsh_nb.pending_approvals()))").stdout)


def test_an_sdk_client_calls_a_kernel_tool_and_the_card_shows(kernel, served):
    async def go():
        async with client(served["url"], served["token"], name="probe") as c:
            names = [t.name for t in (await c.list_tools()).tools]
            result = await c.call_tool("add", {"a": 2, "b": 3})
            return names, result.content[0].text

    names, text = in_client(kernel, go)
    assert names == ["add", "delete"]
    assert text == "5"
    kernel.wait_for(
        lambda: any(
            d.get("tool") == "add" and d.get("status") == "done"
            for d in _cards(kernel, served["cell"])
        ),
        timeout=10,
    )
    panel = _texts(kernel, served["cell"])
    assert any("clients: probe" in t for t in panel)
    assert any(served["url"] in t for t in panel)


def test_the_token_never_reaches_an_output(kernel, served):
    kernel.pump(0.2)
    everything = json.dumps(
        [list(kernel.messages(m)) for m in list(kernel._iopub)], default=str
    )
    assert served["token"] not in everything


def test_no_token_or_a_wrong_one_is_401(kernel, served):
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert httpx2.post(served["url"], json=body).status_code == 401
    wrong = {"Authorization": "Bearer " + "y" * 43}
    assert httpx2.post(served["url"], json=body, headers=wrong).status_code == 401


@pytest.mark.parametrize("how", ["code", "button"])
def test_an_ask_waits_for_approval_then_answers_the_client(kernel, served, how):
    async def go():
        async with client(served["url"], served["token"]) as c:
            return (await c.call_tool("delete", {"path": "a.txt"})).content[0].text

    fut = start_client(go)
    kernel.wait_for(lambda: pending(kernel) == 1, timeout=30, what="the prompt")
    assert not fut.done()
    if how == "code":
        kernel.run("dsh_nb.pending_approvals()[0].approve()")
    else:
        kernel.click(kernel.find_button("Allow once"))
    kernel.wait_for(fut.done, timeout=20)
    assert fut.result() == "deleted a.txt"


def test_a_served_ask_is_announced_to_the_page_without_the_token(kernel, served):
    comm_id = next(c.comm_id for c in kernel.comms.values() if c.target_name == NOTICES)

    def notices() -> list[dict[str, Any]]:
        kernel.pump()
        return [d for d in kernel.comm_data(comm_id) if isinstance(d, dict)]

    async def go():
        async with client(served["url"], served["token"], name="notice-client") as c:
            return (await c.call_tool("delete", {"path": "n.txt"})).content[0].text

    before = len(notices())
    fut = start_client(go)
    kernel.wait_for(lambda: len(notices()) > before, timeout=30, what="the notice")
    pending_notice = notices()[before]
    assert pending_notice["type"] == "pending"
    assert pending_notice["agent"] == "notice-client"
    assert pending_notice["tool"] == "delete"
    answer = {"type": "answer", "id": pending_notice["id"], "answer": "allow-once"}
    kernel.send_comm(comm_id, answer)
    kernel.wait_for(fut.done, timeout=20)
    assert fut.result() == "deleted n.txt"
    kernel.wait_for(lambda: notices()[-1]["type"] == "settled", timeout=10)
    everything = json.dumps(
        [record.messages for record in kernel.comms.values()], default=str
    )
    assert served["token"] not in everything
    assert "n.txt" not in json.dumps(notices())  # no arguments either


def test_a_served_calls_prompt_sits_under_its_card_and_stays_when_pushed_out(
    kernel, served
):
    async def ask():
        async with client(served["url"], served["token"]) as c:
            return (await c.call_tool("delete", {"path": "c.txt"})).content[0].text

    async def eight_adds():
        async with client(served["url"], served["token"]) as c:
            for i in range(MAX_CARDS):
                await c.call_tool("add", {"a": i, "b": 1})

    fut = start_client(ask)
    kernel.wait_for(lambda: pending(kernel) == 1, timeout=30, what="the prompt")
    order, slots, alone, asking = _panel_displays(kernel, served["cell"])
    assert len(slots) == 1 and alone == [] and asking is not None
    # The display right under the asking card's is where its prompt went.
    assert order.index(slots[0]) == order.index(asking) + 1
    in_client(kernel, eight_adds)
    # Pushed out of the panel by newer calls, the prompt is still in the cell.
    kernel.wait_for(
        lambda: len(_panel_displays(kernel, served["cell"])[2]) == 1,
        timeout=20,
        what="the prompt shown on its own",
    )
    order, slots, alone, asking = _panel_displays(kernel, served["cell"])
    assert asking is None and order[-1] == alone[0]
    assert not fut.done()
    kernel.run("dsh_nb.pending_approvals()[0].approve()")
    kernel.wait_for(fut.done, timeout=20)
    assert fut.result() == "deleted c.txt"


def test_a_client_killed_mid_call_cancels_it_and_clears_its_prompt(kernel, served):
    script = (
        "import asyncio, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from mcpkit import client\n"
        "async def main():\n"
        "    async with client(sys.argv[1], sys.argv[2]) as c:\n"
        "        await c.call_tool('delete', {'path': 'b.txt'})\n"
        "asyncio.run(main())\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, served["url"], served["token"]]
    )

    def delete_statuses() -> list[str]:
        cards = _cards(kernel, served["cell"])
        return [d["status"] for d in cards if d.get("tool") == "delete"]

    try:
        kernel.wait_for(lambda: pending(kernel) == 1, timeout=30, what="the prompt")
        process.kill()
        process.wait()
        cleared = kernel.wait_for(
            lambda: pending(kernel) == 0, timeout=20, raise_on_timeout=False
        )
        assert cleared, "the killed client's prompt is still pending"
        kernel.wait_for(
            lambda: "cancelled" in delete_statuses(),
            timeout=10,
            raise_on_timeout=False,
        )
        assert delete_statuses()[-1] == "cancelled", delete_statuses()
    finally:
        process.kill()


def test_the_server_survives_interrupts(kernel, served):
    kernel.interrupt()
    time.sleep(0.3)
    msg_id = kernel.execute_async("await asyncio.sleep(10)")
    time.sleep(0.5)
    kernel.interrupt()
    reply = kernel.collect(msg_id, timeout=20)
    assert reply.status == "error"

    async def go():
        async with client(served["url"], served["token"]) as c:
            return (await c.call_tool("add", {"a": 1, "b": 1})).content[0].text

    assert in_client(kernel, go) == "2"


def test_200_concurrent_calls_from_4_clients(kernel, served):
    async def one_client(k: int) -> list[str]:
        async with client(served["url"], served["token"], name=f"load{k}") as c:
            calls = [c.call_tool("add", {"a": k * 1000, "b": i}) for i in range(50)]
            return [r.content[0].text for r in await asyncio.gather(*calls)]

    async def go():
        return await asyncio.gather(*(one_client(k) for k in range(4)))

    kernel.run(
        "seen = []\n"
        "reg.on_result(lambda ex, r: seen.append((ex.agent.name, ex.call_id, r.text)))"
    )
    started = time.perf_counter()
    results = in_client(kernel, go, timeout=180)
    elapsed = time.perf_counter() - started
    assert [sorted(map(int, r)) for r in results] == [
        [k * 1000 + i for i in range(50)] for k in range(4)
    ]
    seen = json.loads(kernel.run("print(json.dumps(seen))").stdout)
    by_client: dict[str, list[str]] = {}
    for agent, _call_id, text in seen:
        if agent.startswith("load"):
            by_client.setdefault(agent, []).append(text)
    assert sorted(by_client) == ["load0", "load1", "load2", "load3"]
    assert all(len(v) == 50 for v in by_client.values())
    ids = [call_id for agent, call_id, _ in seen if agent.startswith("load")]
    assert len(ids) == 200 and len(set(ids)) == 200
    print(f"200 calls from 4 clients in {elapsed:.2f} s")


def test_connect_in_the_kernel_and_a_server_killed_mid_call(kernel):
    kernel.run(
        'conn = await dsh_nb.connect_mcp("f", command=[sys.executable, FAULT])',
        timeout=60,
    )
    pid = int(kernel.run("print(os.getpid())").stdout)
    spawned = children(pid)
    assert spawned
    reply = kernel.run('r = await dsh_nb.call("f_crash"); print(r.text)', timeout=30)
    assert "is closed" in reply.stdout
    assert "about to crash: simulated fault" in reply.stdout
    later = kernel.run('print((await dsh_nb.call("f_echo", text="x")).text)')
    assert "is closed" in later.stdout
    kernel.wait_for(lambda: not (children(pid) & spawned), timeout=10)
    kernel.run("await conn.close()")


def test_connect_in_the_kernel_and_a_server_writing_garbage_mid_call(kernel):
    kernel.run(
        'conn = await dsh_nb.connect_mcp("g", command=[sys.executable, GARBAGE])',
        timeout=60,
    )
    reply = kernel.run('r = await dsh_nb.call("g_explode"); print(r.text)', timeout=30)
    assert "is closed" in reply.stdout and "not JSON-RPC" in reply.stdout
    assert "about to write garbage: simulated fault" in reply.stdout
    assert "Traceback" not in reply.stderr
    later = kernel.run('print((await dsh_nb.call("g_echo", text="x")).text)')
    assert "is closed" in later.stdout
    assert kernel.run("print(1 + 1)").stdout == "2\n"
    kernel.run("await conn.close()")
    assert "Traceback" not in kernel.kernel_log()


def test_two_connected_calls_at_once_each_card_shows_only_its_own_talk(kernel):
    """An SDK ``MCPServer`` over HTTP talks to two calls in flight from one
    cell; each card's bar and log lines are its own call's."""
    kernel.run(
        "import re, subprocess\n"
        "talking = subprocess.Popen([sys.executable, TALKING], "
        "stdout=subprocess.PIPE, text=True)\n"
        'url = re.search(r"serving at (\\S+)", talking.stdout.readline()).group(1)\n'
        'conn = await dsh_nb.connect_mcp("tk", url=url.replace("/mcp", '
        '"/handshake/mcp"))',
        timeout=120,
    ).check()
    try:
        reply = kernel.run(
            "rs = await asyncio.gather(*(dsh_nb.call('tk_work', tag=t, "
            "pair='kernel', ask=False) for t in 'ab'))\n"
            "print([r.text for r in rs])",
            timeout=60,
        ).check()
        assert "a answered by nobody" in reply.stdout
        last: dict[str, dict[str, Any]] = {}  # each call's card as it ended
        for card in reply.data(CARD):
            if card.get("tool") == "tk_work":
                last[card["callId"]] = card
        tags = []
        for card in last.values():
            assert card["status"] == "done"
            talk = card["talk"]
            tag = talk["progress"]["message"].split()[0]
            tags.append(tag)
            assert talk["progress"]["message"] == f"{tag} done"
            texts = [line["text"] for line in talk["lines"]]
            assert texts == [f"{tag} started", f"{tag} met the other call"]
        assert sorted(tags) == ["a", "b"]
    finally:
        kernel.run("await conn.close(); talking.terminate(); talking.wait()")


def test_the_connect_magic_registers_and_closes(kernel):
    msg_id = kernel.execute_async(f"%tools connect fm -- {sys.executable} {FAULT}")
    kernel.collect(msg_id).check()
    kernel.wait_for(
        lambda: any(
            "connected to MCP server 'fm'" in t for t in _texts(kernel, msg_id)
        ),
        timeout=30,
    )
    assert "fm_echo" in " ".join(_texts(kernel, msg_id))
    reply = kernel.run('print((await dsh_nb.call("fm_echo", text="hi")).text)')
    assert reply.stdout.strip() == "hi"
    kernel.run("%tools connect --close fm")
    kernel.wait_for(
        lambda: "False" in kernel.run('print("fm_echo" in dsh_nb.registry())').stdout,
        timeout=10,
    )


def test_another_process_connects_to_the_kernels_tools(kernel, served):
    async def go():
        registry = ToolRegistry()
        conn = await connect_mcp(
            "nb",
            url=served["url"],
            headers={"Authorization": f"Bearer {served['token']}"},
            registry=registry,
        )
        try:
            result = await registry.execute(
                ToolExecutionInput(
                    call_id="x", name="nb_add", arguments={"a": 40, "b": 2}
                )
            )
            return sorted(conn.tools), result.text
        finally:
            await conn.close()

    tools, text = in_client(kernel, go)
    assert tools == ["nb_add", "nb_delete"]
    assert text == "42"


def _agent_events(kernel: KernelHarness, agent: str, kind: str) -> list[Any]:
    code = (
        "from dsh_nb.notebook import mcpglue\n"
        "_srv = mcpglue.for_state(state).server\n"
        f"print(json.dumps([e['data'] for a in _srv.agents if a.name == {agent!r} "
        f"for e in a.session.of_type({kind!r})]))"
    )
    return list(json.loads(kernel.run(code).stdout))


def test_a_2026_client_answers_a_tools_question_in_an_input_round(kernel, served):
    kernel.run(
        "from typing import Literal\n"
        "@dsh_nb.tool\n"
        "async def pick(ctx: dsh_nb.ToolContext) -> str:\n"
        '    """Ask which file."""\n'
        '    got = await ctx.ask("Which file?", type=Literal["a.csv", "b.csv"])\n'
        '    return f"{got.action}:{got.value}"\n'
        "undo_pick = reg.register(pick)"
    )
    asked: list[str] = []

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"value": "b.csv"})

    async def go():
        async with client(
            served["url"], served["token"], mode="auto", name="asker", elicit=elicit
        ) as c:
            first = await c.session.call_tool("pick", {}, allow_input_required=True)
            answer = {
                "question": types.ElicitResult(
                    action="accept", content={"value": "a.csv"}
                )
            }
            done = await c.session.call_tool(
                "pick",
                {},
                request_state=first.request_state,
                input_responses=answer,
                allow_input_required=True,
            )
            again = await c.session.call_tool(
                "pick",
                {},
                request_state=first.request_state,
                input_responses=answer,
                allow_input_required=True,
            )
            # The SDK's own loop: it answers the round through the callback.
            by_callback = await c.call_tool("pick", {})
            return c.protocol_version, first, done, again, by_callback

    try:
        version, first, done, again, by_callback = in_client(kernel, go)
    finally:
        kernel.run("undo_pick()")
    assert version == "2026-07-28"
    assert isinstance(first, types.InputRequiredResult)
    (key,) = first.input_requests
    assert first.input_requests[key].params.message == "Which file?"
    assert (done.is_error, done.content[0].text) == (False, "accept:a.csv")
    assert again.is_error and "unknown or expired" in again.content[0].text
    assert by_callback.content[0].text == "accept:b.csv"
    assert asked == ["Which file?"]
    answers = _agent_events(kernel, "asker", "tool/answer")
    assert [a.get("action") for a in answers] == ["accept", "accept"]


def test_an_approval_reaches_a_2026_client_in_an_input_round(kernel, served):
    # mount_approvals: the calling client answers its calls' approvals;
    # one that cannot be asked leaves them to the notebook's person.
    kernel.run(
        "from dsh_nb.mcp.elicit import mount_approvals\n"
        "undo_mount = mount_approvals(reg)"
    )

    async def decline(ctx: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async def go():
        async with client(
            served["url"], served["token"], mode="auto", name="approver", elicit=decline
        ) as c:
            first = await c.session.call_tool(
                "delete", {"path": "r.txt"}, allow_input_required=True
            )
            yes = {"approval": types.ElicitResult(action="accept")}
            done = await c.session.call_tool(
                "delete",
                {"path": "r.txt"},
                request_state=first.request_state,
                input_responses=yes,
                allow_input_required=True,
            )
            no = await c.call_tool("delete", {"path": "s.txt"})
            return first, done, no

    async def unasked():
        async with client(served["url"], served["token"], mode="auto") as c:
            assert c.protocol_version == "2026-07-28"
            return (await c.call_tool("delete", {"path": "t.txt"})).content[0].text

    try:
        first, done, no = in_client(kernel, go)
        fut = start_client(unasked)
        kernel.wait_for(lambda: pending(kernel) == 1, timeout=30, what="the prompt")
        kernel.run("dsh_nb.pending_approvals()[0].approve()")
        kernel.wait_for(fut.done, timeout=20)
    finally:
        kernel.run("undo_mount()")
    assert isinstance(first, types.InputRequiredResult)
    message = first.input_requests["approval"].params.message
    assert 'Allow the tool "delete" to run once?' in message
    assert done.content[0].text == "deleted r.txt"
    assert no.content[0].text == 'Error: the user rejected tool "delete"'
    assert fut.result() == "deleted t.txt"
    decided = _agent_events(kernel, "approver", "approval/decided")
    assert [d["outcome"] for d in decided] == ["allowed-once", "rejected"]


def test_stop_frees_the_port_and_a_redefinition_notifies(kernel, served):
    notices: list[str] = []
    ready = threading.Event()

    async def watch():
        async def on_message(message: Any) -> None:
            if getattr(getattr(message, "root", message), "method", "").endswith(
                "list_changed"
            ):
                notices.append("changed")

        async with client(served["url"], served["token"], on_message=on_message) as c:
            await c.list_tools()
            ready.set()
            for _ in range(200):
                if notices:
                    break
                await asyncio.sleep(0.05)
            # bypass: the client's cache eviction may run after our handler
            listed = await c.list_tools(cache_mode="bypass")
            return [t.description for t in listed.tools]

    cell = (
        '%%tool\ndef mul(a: int, b: int) -> str:\n    """{}"""\n    return str(a * b)\n'
    )
    kernel.run(cell.format("Multiply."))
    fut = start_client(watch)
    kernel.wait_for(ready.is_set, timeout=30, what="the watching client")
    kernel.run(cell.format("Multiply, redefined."))
    kernel.wait_for(fut.done, timeout=30)
    assert notices, "no tools/list_changed reached the client"
    assert "Multiply, redefined." in fut.result()
    kernel.run("%tools serve --stop")
    port = int(served["url"].rsplit(":", 1)[1].split("/")[0])
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                pass
        except OSError:
            break
        assert time.monotonic() < deadline, "the port is still open"
        kernel.pump(0.2)
    # The file goes when the server task ends, after open connections close.
    kernel.wait_for(
        lambda: not list((kernel.tmp / "runtime").glob("dsh-mcp-*.json")),
        timeout=10,
        what="the runtime file removed",
    )


def _cards(kernel: KernelHarness, msg_id: str) -> list[dict[str, Any]]:
    kernel.pump(0.05)
    out = []
    for message in kernel.messages(msg_id):
        data = message["content"].get("data", {})
        if CARD in data:
            out.append(data[CARD])
    return out


def _panel_displays(
    kernel: KernelHarness, msg_id: str
) -> tuple[list[str], list[str], list[str], str | None]:
    """Display ids in order; slots a widget was put in; widgets displayed
    on their own; the card (still in the panel) that asks."""
    kernel.pump(0.05)
    order: list[str] = []
    widgets: list[str] = []
    alone: list[str] = []
    latest: dict[str, Any] = {}
    for message in kernel.messages(msg_id):
        if message["msg_type"] not in {"display_data", "update_display_data"}:
            continue
        display_id = message["content"].get("transient", {}).get("display_id")
        if display_id is None:
            continue
        data = message["content"].get("data", {})
        if message["msg_type"] == "display_data":
            order.append(display_id)
            if WIDGET in data:
                alone.append(display_id)
        elif WIDGET in data and display_id not in widgets:
            widgets.append(display_id)
        latest[display_id] = data.get(CARD)
    asking = next(
        (
            d
            for d, card in latest.items()
            if card
            and card["tool"] == "delete"
            and card["status"] == "awaiting-approval"
        ),
        None,
    )
    return order, widgets, alone, asking


def _texts(kernel: KernelHarness, msg_id: str) -> list[str]:
    kernel.pump(0.05)
    return [
        str(m["content"].get("data", {}).get("text/plain", ""))
        for m in kernel.messages(msg_id)
    ]
