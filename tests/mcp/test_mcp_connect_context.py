"""``connect_mcp``: a connected server's progress, log lines and questions
reach the call that caused them.

The server is a real process: ``python -m dsh_nb serve`` over stdio,
serving the conformance suite's tools (they report progress, log and ask
as the suite's scenarios require). Our calls run through the runner with a
door that hears their ``ToolContext``, as a notebook card or an MCP
client would.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from dsh_nb.mcp.client import connect_mcp
from dsh_nb.tools import Agent, Answer, ToolContext, ToolRegistry
from dsh_nb.tools.runner import CallRunner, DoorCall

HERE = Path(__file__).resolve().parent
TOOLS = HERE / "conformance" / "conformance_tools.py"
TALKING = HERE / "talking_server.py"


class Door:
    def __init__(self, answer: Answer | None = None) -> None:
        self.progress_seen: list[tuple[float, float | None]] = []
        self.lines: list[tuple[str, str]] = []
        self.questions: list[Any] = []
        self.answer = answer or Answer("decline")

    def progress(self, ctx: ToolContext, report: Any) -> None:
        self.progress_seen.append((report.done, report.total))

    def log(self, ctx: ToolContext, line: Any) -> None:
        self.lines.append((line.level, line.text))

    async def ask(self, ctx: ToolContext, question: Any) -> Answer:
        self.questions.append(question)
        return self.answer


async def _call(registry: ToolRegistry, name: str, door: Door, **args: Any) -> str:
    answer = await CallRunner(registry, talk=door).run(
        DoorCall(name=name, arguments=args), agent=Agent("t")
    )
    return "".join(b.get("text", "") for b in answer.result.content)


async def test_a_servers_progress_logs_and_questions_reach_their_call() -> None:
    registry = ToolRegistry()
    conn = await connect_mcp(
        "conf",
        command=[sys.executable, "-m", "dsh_nb", "serve", str(TOOLS)],
        registry=registry,
        timeout=180,
    )
    try:
        door = Door()
        out = await _call(registry, "conf_test_tool_with_progress", door)
        assert out == "Progress test completed"
        assert door.progress_seen == [(0.0, 100.0), (50.0, 100.0), (100.0, 100.0)]

        door = Door()
        assert await _call(registry, "conf_test_tool_with_logging", door) == (
            "Logging test completed"
        )
        texts = [text for _, text in door.lines]
        assert [t.split(": ", 1)[-1] for t in texts] == [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]

        door = Door(Answer("accept", {"username": "ada", "email": "ada@example.org"}))
        out = await _call(registry, "conf_test_elicitation", door, message="Who?")
        assert door.questions[0].message == "Who?"
        assert set(door.questions[0].schema["required"]) == {"username", "email"}
        assert out == (
            'User response: action=accept, content={"username": "ada", '
            '"email": "ada@example.org"}'
        )

        door = Door(Answer("accept", {"username": 3}))  # does not fit: decline
        out = await _call(registry, "conf_test_elicitation", door, message="Who?")
        assert out == "User response: action=decline, content=null"
    finally:
        await conn.close()


class Person(Door):
    """A call's own door, answering its questions with its own name."""

    def __init__(self, name: str) -> None:
        super().__init__(Answer("accept", {"who": name}))

    def progress(self, ctx: ToolContext, report: Any) -> None:
        self.progress_seen.append((report.done, report.total))
        self.lines.append(("progress", report.message or ""))


async def _pair(
    registry: ToolRegistry, tool: str, pair: str, *, ask: bool
) -> tuple[dict[str, Person], dict[str, str], Agent]:
    """Call ``tool`` for tags a and b at once, each with its own door."""
    agent = Agent("t")
    doors = {tag: Person(f"door-{tag}") for tag in "ab"}

    async def one(tag: str) -> str:
        answer = await CallRunner(registry, talk=doors[tag]).run(
            DoorCall(name=tool, arguments={"tag": tag, "pair": pair, "ask": ask}),
            agent=agent,
        )
        return "".join(b.get("text", "") for b in answer.result.content)

    a, b = await asyncio.gather(one("a"), one("b"))
    return doors, {"a": a, "b": b}, agent


def _told(door: Person) -> list[str]:
    """What a call's door heard, in an order that does not depend on timing
    (the SDK hands each notification to a task of its own)."""
    return sorted(f"{kind}: {text}" for kind, text in door.lines)


def _heard(tag: str) -> list[str]:
    said = [f"{tag} started", f"{tag} met the other call"]
    lines = [f"info: {s}" for s in said]
    return sorted([*lines, *(f"progress: {s}" for s in [*said, f"{tag} done"])])


async def test_two_calls_in_flight_each_hear_only_their_own_server_talk() -> None:
    """An SDK ``MCPServer`` over HTTP, two calls at once, in both eras.

    The handshake era sends log messages and ``elicitation/create`` as
    messages of their own: each must reach the call whose request stream
    carried it, not the latest call. The 2026-07-28 era opts in to log
    messages per request (the connection asks for them).
    """
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(TALKING),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 120)).decode()
        found = re.search(r"serving at (http://\S+)/mcp", line)
        assert found, line
        registry = ToolRegistry()
        old = await connect_mcp(
            "old", url=f"{found.group(1)}/handshake/mcp", registry=registry, timeout=60
        )
        new = await connect_mcp(
            "new", url=f"{found.group(1)}/mcp", registry=registry, timeout=60
        )
        try:
            assert old.protocol_version == "2025-11-25"
            assert new.protocol_version == "2026-07-28"
            doors, out, agent = await _pair(registry, "old_work", "old", ask=True)
            for tag in "ab":
                assert out[tag] == f"{tag} answered by door-{tag}"
                door = doors[tag]
                assert [q.message for q in door.questions] == [f"who answers {tag}?"]
                assert _told(door) == _heard(tag)
            # The journal files each line under its own call.
            calls = {
                e["data"]["callId"]: e["data"]["arguments"]["tag"]
                for e in agent.session.events
                if e["type"] == "tool/call"
            }
            journaled: list[str] = []
            for event in agent.session.events:
                if event["type"] in ("tool/log", "tool/progress", "tool/ask"):
                    said = event["data"].get("message") or event["data"]["text"]
                    tag = calls[event["data"]["callId"]]
                    other = "b" if tag == "a" else "a"
                    assert re.search(rf"\b{tag}\b", said), event
                    assert not re.search(rf"\b{other}\b", said), event
                    journaled.append(event["type"])
            assert sorted(set(journaled)) == ["tool/ask", "tool/log", "tool/progress"]

            doors, out, _ = await _pair(registry, "new_work", "new", ask=False)
            for tag in "ab":
                assert out[tag] == f"{tag} answered by nobody"
                assert _told(doors[tag]) == _heard(tag)
        finally:
            await old.close()
            await new.close()
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


async def test_over_stdio_a_message_no_request_owns_is_not_guessed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """stdio says nothing about which request a log line or question is for.

    With two calls in flight, progress still reaches each call by its token;
    the log lines reach neither card (the logger has them) and the
    questions are declined, rather than shown to the wrong call.
    """
    registry = ToolRegistry()
    conn = await connect_mcp(
        "talk",
        command=[sys.executable, str(TALKING), "--stdio"],
        registry=registry,
        timeout=120,
    )
    try:
        with caplog.at_level(logging.INFO, logger="dsh_nb.mcp.clienttalk"):
            doors, out, _ = await _pair(registry, "talk_work", "stdio", ask=True)
        for tag in "ab":
            other = "b" if tag == "a" else "a"
            assert out[tag] == f"{tag} answered by decline"
            assert doors[tag].questions == []
            heard = _told(doors[tag])
            progress = [h for h in _heard(tag) if h.startswith("progress: ")]
            # Before the other call was sent, a line had one owner to go to.
            assert heard in (progress, sorted([*progress, f"info: {tag} started"]))
            assert not any(re.search(rf"\b{other}\b", h) for h in heard)
        logged = [r.getMessage() for r in caplog.records]
        assert {"a met the other call", "b met the other call"} <= set(logged)
        assert sum("calls in flight" in m for m in logged) == 2
    finally:
        await conn.close()


SAMPLER = Path(__file__).resolve().parent / "sampling_server.py"


class ModelDoor:
    """A door whose model is the replay server, over the official SDK."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def sample(self, ctx: ToolContext, request: Any) -> str:
        from dsh_nb.models.sampling import sample_text

        return await sample_text(
            self.client,
            provider="openai",
            model="replayed",
            prompt=request.prompt,
            system=request.system,
            max_tokens=request.max_tokens,
        )


async def test_a_servers_sampling_request_goes_to_the_calls_model() -> None:
    from dsh_nb.models.chat import make_client
    from dsh_nb.models.replay_server import ReplayServer
    from dsh_nb.models.scripted import Turn

    def reply(request: Any) -> Turn:
        return Turn(text="short: " + request.body["messages"][-1]["content"])

    registry = ToolRegistry()
    with ReplayServer(reply) as model:
        conn = await connect_mcp(
            "sdk",
            command=[sys.executable, str(SAMPLER)],
            registry=registry,
            timeout=180,
        )
        try:
            agent = Agent("t")
            door = ModelDoor(make_client("openai", model.openai_url, model.token))
            answer = await CallRunner(registry, talk=door).run(
                DoorCall(name="sdk_summarise", arguments={"text": "a long text"}),
                agent=agent,
            )
            text = answer.result.content[0]["text"]
            assert text == "dsh_nb said: short: Summarise: a long text"
            sent = model.requests[-1].body
            assert sent["messages"] == [
                {"role": "system", "content": "Answer in one line."},
                {"role": "user", "content": "Summarise: a long text"},
            ]
            assert sent["max_tokens"] == 50
            journal = [
                (e["type"], e["data"])
                for e in agent.session.events
                if e["type"] in ("tool/sample", "tool/sampled")
            ]
            call_id = answer.result.call_id
            assert journal == [
                (
                    "tool/sample",
                    {
                        "callId": call_id,
                        "prompt": "Summarise: a long text",
                        "system": "Answer in one line.",
                        "maxTokens": 50,
                    },
                ),
                (
                    "tool/sampled",
                    {"callId": call_id, "text": "short: Summarise: a long text"},
                ),
            ]

            # A door with no model: the server hears why, as an MCP error.
            bare = await CallRunner(registry).run(
                DoorCall(name="sdk_summarise", arguments={"text": "x"}), agent=agent
            )
            said = bare.result.content[0]["text"]
            assert said.startswith("refused: ")
            assert "sdk_summarise" in said and "has none to ask" in said
            assert len(model.requests) == 1
        finally:
            await conn.close()


def test_a_servers_messages_become_one_prompt_of_text() -> None:
    from mcp import types

    from dsh_nb.mcp.clienttalk import _prompt

    def said(role: Any, text: str) -> types.SamplingMessage:
        return types.SamplingMessage(
            role=role, content=types.TextContent(type="text", text=text)
        )

    assert _prompt([said("user", "Summarise: x")]) == "Summarise: x"
    assert _prompt(
        [said("user", "hi"), said("assistant", "hello"), said("user", "and?")]
    ) == ("user: hi\n\nassistant: hello\n\nuser: and?")
    image = types.SamplingMessage(
        role="user",
        content=types.ImageContent(type="image", data="AAAA", mime_type="image/png"),
    )
    with pytest.raises(ValueError, match="samples text only; a 'image' block"):
        _prompt([image])
    with pytest.raises(ValueError, match="at least one message"):
        _prompt([])
