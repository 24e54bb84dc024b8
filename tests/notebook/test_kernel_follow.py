"""``%tool_log --follow FILE`` in a real kernel while another process writes FILE.

The writer is a separate Python process that runs real calls through the
pipeline for two clients and appends their journal lines (tagged with the
client's agent name, as a server journals) on command: a line in two
pieces, a truncation, a rotation. The kernel must show each call as a card
under the following cell, updated in place, and stay free for other cells.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from kernel_harness import KernelHarness

from dsh_nb.cards import CARD_MIME

# Builds real journal lines (two clients, real calls), then appends them
# to the file as the test says, one command a line on stdin.
WRITER = r"""
import asyncio, json, os, sys
from dsh_nb.tools import Agent, ToolExecutionInput, ToolRegistry, tool
from dsh_nb.tools.audit.journal import turn
from dsh_nb.tools.jsonvalue import to_plain

@tool
def add(a: int, b: int = 2) -> str:
    '''Add two integers.'''
    return str(a + b)

path = sys.argv[1]
registry = ToolRegistry()
registry.register(add)
lines = {}

async def make(agent, call_id, a):
    seen = []
    agent.session.on_append(seen.append)
    with turn(agent):
        await registry.execute(ToolExecutionInput(
            call_id=call_id, name="add", arguments={"a": a}, agent=agent))
    # As python -m dsh_nb serve --journal writes it: the session's id on
    # every line, and a first line saying which client the session is.
    hello = {"type": "mcp/session", "agent": agent.name,
             "data": {"agent": agent.name, "client": CLIENTS[agent.name]}}
    lines[(call_id, "tool/session")] = json.dumps(hello) + "\n"
    for event in seen:
        if event["type"] in ("tool/call", "tool/result"):
            line = dict(to_plain(event), agent=agent.name)
            lines[(call_id, event["type"])] = json.dumps(line) + "\n"

CLIENTS = {"s-1": "claude-code", "s-2": "cursor <b>"}

async def main():
    claude, cursor = Agent("s-1"), Agent("s-2")
    for i in range(1, 8):
        await make(claude if i != 2 else cursor, f"call-{i}", 10 * i)

asyncio.run(main())
print("ready", flush=True)
for command in sys.stdin:
    op, *rest = command.split()
    if op == "append":
        with open(path, "a") as fh:
            for key in rest:
                call_id, kind = key.split(":")
                fh.write(lines[(call_id, "tool/" + kind)])
    elif op == "half":
        call_id, kind = rest[0].split(":")
        line = lines[(call_id, "tool/" + kind)]
        cut = len(line) // 2
        with open(path, "a") as fh:
            fh.write(line[:cut] if rest[1] == "1" else line[cut:])
    elif op == "truncate":
        open(path, "w").close()
    elif op == "rotate":
        os.rename(path, path + ".1")
    print("done", flush=True)
"""


class Writer:
    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"

    def __call__(self, command: str) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "done"

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run("%load_ext dsh_nb")
        yield harness


def _cards(kernel: KernelHarness, msg_id: str) -> dict[str, Mapping[str, Any]]:
    """The latest card of each display id under ``msg_id``."""
    kernel.pump()
    out: dict[str, Mapping[str, Any]] = {}
    for message in kernel.messages(msg_id):
        content = message["content"]
        if CARD_MIME in content.get("data", {}):
            out[content["transient"]["display_id"]] = content["data"][CARD_MIME]
    return out


def _texts(kernel: KernelHarness, msg_id: str) -> list[str]:
    kernel.pump()
    return [
        str(m["content"]["data"]["text/plain"])
        for m in kernel.messages(msg_id)
        if "text/plain" in m["content"].get("data", {})
        and CARD_MIME not in m["content"]["data"]
    ]


def _done(cards: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    return sorted(
        (c["callId"], c["result"]["content"][0]["text"])
        for c in cards.values()
        if c["status"] == "done"
    )


def _wait(kernel: KernelHarness, what: str, check: Any, timeout: float = 15) -> None:
    kernel.wait_for(check, timeout=timeout, what=what)


def test_follow_shows_another_process_s_calls_live(
    kernel: KernelHarness, tmp_path: Path
) -> None:
    path = tmp_path / "journal.jsonl"
    writer = Writer(path)
    try:
        follow = kernel.execute_async(f"%tool_log --follow {path}")
        kernel.collect(follow).check()
        # The file does not exist yet; it appears with a call still open.
        writer("append call-1:session call-1:call")
        _wait(kernel, "a pending card", lambda: len(_cards(kernel, follow)) == 1)
        [(display_id, card)] = _cards(kernel, follow).items()
        assert card["status"] == "pending" and card["tool"] == "add"
        assert "client claude-code · session s-1" in _texts(kernel, follow)
        # A result line written in two pieces is read once it is whole.
        writer("half call-1:result 1")
        time.sleep(0.8)
        assert _cards(kernel, follow)[display_id]["status"] == "pending"
        writer("half call-1:result 2")
        _wait(kernel, "the card done", lambda: _done(_cards(kernel, follow)) != [])
        assert _done(_cards(kernel, follow)) == [("call-1", "12")]
        # The kernel stays free while it follows.
        assert kernel.run("print(6 * 7)").stdout.strip() == "42"
        # Another client: a header names it (escaped in the HTML part).
        writer("append call-2:session call-2:call call-2:result")
        _wait(kernel, "call-2", lambda: len(_done(_cards(kernel, follow))) == 2)
        assert "client cursor <b> · session s-2" in _texts(kernel, follow)
        html = [
            m["content"]["data"].get("text/html", "")
            for m in kernel.messages(follow)
            if "client" in str(m["content"].get("data", {}).get("text/plain", ""))
        ]
        assert any("cursor &lt;b&gt;" in h for h in html)
        assert not any("cursor <b>" in h for h in html)
        # Truncated: read again from the start.
        writer("truncate")
        time.sleep(0.5)
        writer("append call-3:call call-3:result")
        _wait(kernel, "call-3", lambda: len(_done(_cards(kernel, follow))) == 3)
        # Rotated: what the old file got last is still read, then the new one.
        writer("append call-4:call")
        writer("rotate")
        writer("append call-5:call call-5:result")
        _wait(
            kernel, "call-5", lambda: ("call-5", "52") in _done(_cards(kernel, follow))
        )
        statuses = {c["callId"]: c["status"] for c in _cards(kernel, follow).values()}
        assert statuses == {
            "call-1": "done",
            "call-2": "done",
            "call-3": "done",
            "call-4": "pending",
            "call-5": "done",
        }
        assert any("truncated" in t for t in _texts(kernel, follow))
        _wait(
            kernel,
            "the status line to say the file was replaced",
            lambda: any("replaced" in t for t in _texts(kernel, follow)),
        )
        # Stopped: nothing more arrives.
        assert "stopped following" in kernel.run("%tool_log --follow --stop").stdout
        writer("append call-6:call call-6:result")
        time.sleep(1.0)
        assert len(_cards(kernel, follow)) == 5
        assert "not following" in kernel.run("%tool_log --follow --stop").stdout
    finally:
        writer.close()


def test_a_line_written_before_the_first_poll_is_shown(
    kernel: KernelHarness, tmp_path: Path
) -> None:
    # The task's first poll runs after the cell: a line the same cell
    # writes after the magic came later than the follow, so it is new.
    source, path = tmp_path / "lines.jsonl", tmp_path / "journal.jsonl"
    writer = Writer(source)
    try:
        writer("append call-1:session call-1:call call-1:result")
        follow = kernel.execute_async(
            f"%tool_log --follow {path}\n"
            f"open({str(path)!r}, 'a').write(open({str(source)!r}).read())"
        )
        kernel.collect(follow).check()
        _wait(kernel, "call-1", lambda: _done(_cards(kernel, follow)) != [])
        assert _done(_cards(kernel, follow)) == [("call-1", "12")]
        kernel.run("%tool_log --follow --stop")
    finally:
        writer.close()


def test_following_again_stops_the_first(kernel: KernelHarness, tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    writer = Writer(path)
    try:
        first = kernel.execute_async(f"%tool_log --follow {path}")
        kernel.collect(first).check()
        second = kernel.execute_async(f"%tool_log --follow '{path}'")
        kernel.collect(second).check()
        writer("append call-7:call call-7:result")
        _wait(kernel, "call-7", lambda: _done(_cards(kernel, second)) != [])
        time.sleep(0.5)
        assert _cards(kernel, first) == {}
        # The first status line is updated by id (from the second cell).
        [status] = [
            m["content"]["transient"]["display_id"]
            for m in kernel.messages(first)
            if m["msg_type"] == "display_data"
        ]
        updates = [
            m["content"]["data"]["text/plain"]
            for m in kernel.messages(second)
            if m["msg_type"] == "update_display_data"
            and m["content"]["transient"]["display_id"] == status
        ]
        assert updates and updates[-1].startswith("stopped following")
        kernel.run("%tool_log --follow --stop")
    finally:
        writer.close()


def test_follow_usage_errors(kernel: KernelHarness, tmp_path: Path) -> None:
    reply = kernel.execute("%tool_log --follow")
    assert reply.status == "error" and "needs a file" in reply.text
    reply = kernel.execute(f"%tool_log --follow {tmp_path}")
    assert reply.status == "error" and "is a folder" in reply.text
    assert "Traceback" not in reply.text  # one line, as IPython shows a UsageError
