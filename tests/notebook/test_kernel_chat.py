"""``%%chat`` in a real ipykernel against the loopback replay server.

The server runs in the test process, the kernel in its own: the official
openai SDK crosses a real process boundary and a real socket. Approvals
are clicked the way a browser clicks; the stop button is jupyter_client's
interrupt, with a bounded wait.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kernel_harness import KernelHarness

from dsh_nb.cards import CARD_MIME
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn

SETUP = """
%load_ext dsh_nb
import json, os
import ipywidgets
import dsh_nb
from dsh_nb.notebook import extension as ext
from dsh_nb.tools import Ask
state = ext.current_state()
state.config.frontend = "interactive"
ipywidgets.Widget._control_comm = None

@dsh_nb.tool
def delete(path: str) -> str:
    \"\"\"Delete a file.\"\"\"
    return "deleted " + path

@dsh_nb.tool
def add(a: int, b: int) -> str:
    \"\"\"Add two integers.\"\"\"
    return str(a + b)

@dsh_nb.tool
async def slow(seconds: float) -> str:
    \"\"\"Wait, then answer.\"\"\"
    import asyncio
    await asyncio.sleep(seconds)
    return "slept"

@dsh_nb.tool
async def brief(text: str, ctx: dsh_nb.ToolContext) -> str:
    \"\"\"Shorten a text with the model's help.\"\"\"
    return await ctx.sample("Shorten: " + text)

reg = dsh_nb.registry()
reg.register(delete)
reg.register(add)
reg.register(slow)
reg.register(brief)
reg.on_pre_execute(lambda ex, nxt: Ask("irreversible") if ex.name == "delete" else nxt())

def chat():
    return get_ipython().magics_manager.registry["ChatMagics"].conversation

def report():
    c = chat()
    print(json.dumps({"roles": [m["role"] for m in c.messages],
                      "open": state.agent.session.in_open_turn()}))
"""


@pytest.fixture(scope="module")
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def kernel(server: ReplayServer) -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(SETUP, timeout=60)
        harness.run(
            f"os.environ['REPLAY_KEY'] = {server.token!r}\n"
            f"%config DshChat.base_url = {server.openai_url!r}\n"
            "%config DshChat.api_key_env = 'REPLAY_KEY'\n"
            "%config DshChat.model = 'replay-model'"
        )
        yield harness


def report(kernel: KernelHarness) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(kernel.run("report()").stdout)
    return data


def final_cards(reply: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for m in reply.messages:
        if m["msg_type"] in ("display_data", "update_display_data"):
            data = m["content"]["data"]
            if CARD_MIME in data:
                out[m["content"]["transient"]["display_id"]] = data[CARD_MIME]
    return out


def test_streamed_reply_with_a_tool_card(
    kernel: KernelHarness, server: ReplayServer
) -> None:
    server.add(
        Turn(
            tool_calls=(ToolCallSpec(name="add", arguments='{"a": 2, "b": 3}'),),
            chunk=3,
        ),
        Turn(text="The sum is 5, as the add tool says.", chunk=4, chunk_delay=0.01),
    )
    reply = kernel.execute("%%chat --new\nWhat is 2 + 3?", timeout=30).check()
    kinds = [m["msg_type"] for m in reply.messages]
    assert (
        "update_display_data" in kinds
    )  # the text was updated in place as it streamed
    assert [(c["tool"], c["status"]) for c in final_cards(reply).values()] == [
        ("add", "done")
    ]
    plain = reply.data("text/plain")
    assert plain[-1] == "2 steps · 20 in · 10 out tokens"
    assert report(kernel) == {
        "roles": ["user", "assistant", "tool", "assistant"],
        "open": False,
    }


def test_ask_tool_approved_by_clicking_allow(
    kernel: KernelHarness, server: ReplayServer
) -> None:
    server.add(
        Turn(tool_calls=(ToolCallSpec(name="delete", arguments='{"path": "a.txt"}'),)),
        Turn(text="Deleted."),
    )
    msg_id = kernel.execute_async("%%chat --new\nDelete a.txt")
    kernel.click(kernel.find_button("Allow once", parent=msg_id))
    reply = kernel.collect(msg_id, timeout=20).check()
    [card] = final_cards(reply).values()
    assert (card["tool"], card["status"], card["approval"]) == (
        "delete",
        "done",
        "allowed-once",
    )
    sent = server.requests[-1].body["messages"]
    assert sent[-1] == {
        "role": "tool",
        "tool_call_id": "call_01",
        "content": "deleted a.txt",
    }


def test_a_tools_sample_in_a_chat_is_approved_and_stays_out_of_it(
    kernel: KernelHarness, server: ReplayServer
) -> None:
    server.add(
        Turn(tool_calls=(ToolCallSpec(name="brief", arguments='{"text": "long"}'),)),
        Turn(text="short"),  # the tool's sample
        Turn(text="It is short."),
    )
    msg_id = kernel.execute_async("%%chat --new\nShorten 'long'")
    kernel.click(kernel.find_button("Allow once", parent=msg_id))
    reply = kernel.collect(msg_id, timeout=20).check()
    [card] = final_cards(reply).values()
    assert (card["tool"], card["status"]) == ("brief", "done")
    assert "approval" not in card  # the sample was asked about, not the call
    texts = [line["text"] for line in card["talk"]["lines"]]
    assert texts == [
        "asks the model (replay-model): Shorten: long",
        "the model answered: short",
    ]
    sample = server.requests[-2].body
    assert sample["messages"] == [{"role": "user", "content": "Shorten: long"}]
    assert sample["model"] == "replay-model" and "tools" not in sample
    assert server.requests[-1].body["messages"][-1]["content"] == "short"
    assert report(kernel)["roles"] == ["user", "assistant", "tool", "assistant"]


def test_stop_mid_stream_then_chat_again(
    kernel: KernelHarness, server: ReplayServer
) -> None:
    server.add(Turn(text="word " * 400, chunk=5, chunk_delay=0.02), Turn(text="Back."))
    before = server.disconnects
    msg_id = kernel.execute_async("%%chat --new\nTell me a long story")
    kernel.wait_for(
        lambda: any(
            m["msg_type"] == "update_display_data" for m in kernel.messages(msg_id)
        ),
        timeout=15,
        what="the streamed text",
    )
    stopped_at = time.monotonic()
    kernel.interrupt()
    reply = kernel.collect(msg_id, timeout=10)
    print(f"interrupt -> cell reply: {1000 * (time.monotonic() - stopped_at):.0f} ms")
    # One line (IPython shows a UsageError without a traceback).
    assert reply.status == "error" and reply.content["ename"] == "UsageError"
    assert reply.stderr.strip() == (
        "UsageError: stopped: the model's reply was interrupted; the conversation "
        "is as it was before this cell"
    )
    kernel.wait_for(
        lambda: server.disconnects > before, timeout=5, what="the closed request"
    )
    assert report(kernel) == {"roles": [], "open": False}
    again = kernel.execute("%%chat\nAre you there?", timeout=20).check()
    assert "Back." in again.data("text/plain")


def test_interrupt_while_an_approval_waits_stops_the_loop(
    kernel: KernelHarness, server: ReplayServer
) -> None:
    server.add(
        Turn(tool_calls=(ToolCallSpec(name="delete", arguments='{"path": "b"}'),))
    )
    requests = len(server.requests)
    msg_id = kernel.execute_async("%%chat --new\nDelete b")
    kernel.find_button("Allow once", parent=msg_id)
    kernel.interrupt()
    reply = kernel.collect(msg_id, timeout=10).check()
    [card] = final_cards(reply).values()
    assert card["approval"] == "cancelled"
    assert any(
        "Stopped: an approval for 'delete' was cancelled" in t
        for t in reply.data("text/plain")
    )
    assert len(server.requests) == requests + 1  # the denial was not sent on
    assert report(kernel) == {"roles": ["user", "assistant", "tool"], "open": False}


def test_stop_while_a_tool_runs_answers_it_cancelled(
    kernel: KernelHarness, server: ReplayServer
) -> None:
    server.add(
        Turn(
            tool_calls=(
                ToolCallSpec(name="add", arguments='{"a": 1, "b": 1}'),
                ToolCallSpec(name="slow", arguments='{"seconds": 30}'),
            )
        )
    )
    requests = len(server.requests)
    msg_id = kernel.execute_async("%%chat --new\nAdd, then sleep")
    kernel.wait_for(
        lambda: (
            any(
                m["msg_type"] == "update_display_data"
                and m["content"]["data"].get(CARD_MIME, {}).get("status") == "running"
                and m["content"]["data"][CARD_MIME].get("tool") == "slow"
                for m in kernel.messages(msg_id)
            )
            and any(
                m["msg_type"] == "update_display_data"
                and m["content"]["data"].get(CARD_MIME, {}).get("status") == "done"
                for m in kernel.messages(msg_id)
            )
        ),
        timeout=15,
        what="add done and the slow tool running",
    )
    kernel.interrupt()
    reply = kernel.collect(msg_id, timeout=10)
    assert reply.content["ename"] == "UsageError"
    assert "answered as cancelled" in reply.stderr
    statuses = sorted(c["status"] for c in final_cards(reply).values())
    assert statuses == ["cancelled", "done"]
    assert report(kernel) == {
        "roles": ["user", "assistant", "tool", "tool"],
        "open": False,
    }
    assert len(server.requests) == requests + 1  # nothing more was sent
    log = kernel.run(
        "print(json.dumps([e['type'] for e in state.agent.session.events[-4:]]))"
    ).stdout
    assert json.loads(log)[-1] == "turn/end"


def test_after_a_stopped_chat_an_interrupt_still_reaches_the_kernel(
    kernel: KernelHarness, server: ReplayServer
) -> None:
    server.add(
        Turn(tool_calls=(ToolCallSpec(name="slow", arguments='{"seconds": 30}'),))
    )
    msg_id = kernel.execute_async("%%chat --new\nsleep")
    kernel.wait_for(
        lambda: any(
            m["msg_type"] == "update_display_data"
            and m["content"]["data"].get(CARD_MIME, {}).get("status") == "running"
            for m in kernel.messages(msg_id)
        ),
        timeout=15,
        what="the slow tool running",
    )
    kernel.interrupt()
    kernel.collect(msg_id, timeout=10)
    sleeping = kernel.execute_async("import time; time.sleep(20)")
    kernel.wait_for(
        lambda: any(m["msg_type"] == "execute_input" for m in kernel.messages(sleeping))
    )
    time.sleep(0.3)
    kernel.interrupt()
    stopped = kernel.collect(sleeping, timeout=5)
    assert stopped.error is not None and stopped.error["ename"] == "KeyboardInterrupt"
