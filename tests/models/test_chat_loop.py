"""The step loop through the real openai/anthropic SDK clients on loopback."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dsh_nb.models import Chat, ChatView
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ApiError, ToolCallSpec, Turn
from dsh_nb.tools import Accept, Ask, ToolRegistry, define_tool, set_approval_policy

PROVIDERS = ["openai", "anthropic"]


def make_chat(provider: str, request: Any, registry: ToolRegistry, **kw: Any) -> Chat:
    client = request.getfixturevalue(f"{provider}_client")
    return Chat(
        "replay-model", client=client, provider=provider, registry=registry, **kw
    )


def calls(*pairs: tuple[str, str]) -> tuple[ToolCallSpec, ...]:
    return tuple(ToolCallSpec(name=n, arguments=a) for n, a in pairs)


def tool_texts(chat: Chat) -> list[tuple[str, str, bool]]:
    """(call id, text, is_error) of every tool answer, either provider."""
    out = []
    for m in chat.messages:
        if m["role"] == "tool":
            out.append(
                (m["tool_call_id"], m["content"], m["content"].startswith("Error"))
            )
        elif m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                if b["type"] == "tool_result":
                    out.append(
                        (b["tool_use_id"], b["content"], bool(b.get("is_error")))
                    )
    return out


def assert_consistent(chat: Chat) -> None:
    """Every assistant tool call has exactly one answer right after it."""
    msgs = chat.messages
    for i, m in enumerate(msgs):
        if m["role"] != "assistant":
            continue
        if chat.provider == "openai":
            ids = [c["id"] for c in m.get("tool_calls") or []]
            answered = []
            for nxt in msgs[i + 1 : i + 1 + len(ids)]:
                assert nxt["role"] == "tool"
                answered.append(nxt["tool_call_id"])
        else:
            ids = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
            if not ids:
                continue
            nxt = msgs[i + 1]
            answered = [
                b["tool_use_id"] for b in nxt["content"] if b["type"] == "tool_result"
            ]
        assert answered == ids


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("stream", [True, False])
async def test_two_steps_with_parallel_calls(
    provider: str,
    stream: bool,
    request: Any,
    server: ReplayServer,
    registry: ToolRegistry,
) -> None:
    server.add(
        Turn(
            text="Adding.",
            tool_calls=calls(("add", '{"a": 2, "b": 3}'), ("add", '{"a": 40, "b": 2}')),
            chunk=3,
            input_tokens=30,
            output_tokens=12,
        ),
        Turn(text="5 and 42.", input_tokens=50, output_tokens=4),
    )
    chat = make_chat(provider, request, registry, stream=stream)
    reply = await chat.send("add please")
    assert (reply.stop, reply.text, reply.steps) == ("end", "5 and 42.", 2)
    assert [t[1] for t in tool_texts(chat)] == ["5", "42"]
    assert_consistent(chat)
    assert chat.usage.input_tokens == 80 and chat.usage.output_tokens == 16
    assert [u.input_tokens for u in chat.step_usage] == [30, 50]
    # The second request carried the results, and the tools in the provider's shape.
    second = server.requests[1].body
    if provider == "openai":
        assert second["tools"][0]["function"]["name"] == "add"
        assert [m["role"] for m in second["messages"]] == [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
        ]
        if stream:
            assert second["stream_options"] == {"include_usage": True}
    else:
        assert second["tools"][0]["input_schema"]["required"] == ["a", "b"]
        assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    # One turn on the agent's log, around the whole send.
    kinds = [e["type"] for e in chat.agent.session.events]
    assert kinds[0] == "turn/start" and kinds[-1] == "turn/end"
    assert kinds.count("turn/start") == 1
    # The core journals each call the loop ran, inside that turn.
    assert kinds.count("tool/call") == kinds.count("tool/result") == 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_calls_run_concurrently_results_in_call_order(
    provider: str, request: Any, server: ReplayServer
) -> None:
    order: list[str] = []

    async def wait(args: Any) -> str:
        await asyncio.sleep(args["s"])
        order.append(args["tag"])
        return args["tag"]

    reg = ToolRegistry()
    reg.register(
        define_tool(
            name="wait",
            description="Wait.",
            parameters={"s": {"type": "number"}, "tag": {"type": "string"}},
            execute=wait,
        )
    )
    server.add(
        Turn(
            tool_calls=calls(
                ("wait", '{"s": 0.3, "tag": "slow"}'),
                ("wait", '{"s": 0.01, "tag": "fast"}'),
            )
        ),
        Turn(text="done"),
    )
    chat = make_chat(provider, request, reg)
    await chat.send("go")
    # The fast call started while the slow one slept: they ran at once.
    assert order == ["fast", "slow"]
    assert [t[1] for t in tool_texts(chat)] == [
        "slow",
        "fast",
    ]  # answered in call order


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_errors_become_results_the_model_reads(
    provider: str, request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    def boom(args: Any) -> str:
        raise RuntimeError("kaput")

    registry.register(
        define_tool(name="boom", description="b", parameters={}, execute=boom)
    )
    server.add(
        Turn(
            tool_calls=calls(
                ("serch", "{}"),
                ("boom", "{}"),
                ("add", '{"a": 1,'),
                ("add", '{"a": 1, "b": 1}'),
            )
        ),
        Turn(text="ok"),
    )
    chat = make_chat(provider, request, registry)
    reply = await chat.send("x")
    assert reply.stop == "end"
    texts = tool_texts(chat)
    assert len(texts) == 4 and all(t[2] for t in texts[:3]) and not texts[3][2]
    assert "serch" in texts[0][1]
    assert "kaput" in texts[1][1]
    if provider == "openai":  # anthropic's SDK keeps unparsable input whole
        assert "not valid JSON" in texts[2][1]
        # A call that never reached the pipeline is journaled all the same.
        results = chat.agent.session.of_type("tool/result")
        assert [(e["data"]["status"], e["data"]["stage"]) for e in results][2] == (
            "error",
            "arguments",
        )
    assert_consistent(chat)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("status", "hint"),
    [(401, "API key"), (404, "model name"), (429, "rate"), (500, "")],
)
async def test_http_errors_are_messages_and_roll_back(
    provider: str,
    status: int,
    hint: str,
    request: Any,
    server: ReplayServer,
    registry: ToolRegistry,
) -> None:
    shown: list[tuple[str, str]] = []

    class View(ChatView):
        def notice(self, text: str, *, kind: str) -> None:
            shown.append((kind, text))

    server.add(ApiError(status=status, message="nope"), Turn(text="fine now"))
    chat = make_chat(provider, request, registry, view=View())
    reply = await chat.send("hi")
    assert reply.stop == "error" and f"answered {status}" in (reply.error or "")
    assert hint in (reply.error or "")
    assert shown == [("error", reply.error)]
    assert chat.messages == []  # nothing answered: the user's message is taken back
    again = await chat.send("hi")
    assert again.text == "fine now" and len(chat.messages) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_stream_cut_midway_after_tool_results(
    provider: str, request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    server.add(
        Turn(tool_calls=calls(("add", '{"a": 1, "b": 2}'))),
        Turn(text="a long answer that never ends", chunk=2, cut_after=6),
    )
    abandoned: list[str] = []

    class View(ChatView):
        def abandon_calls(self, reason: str) -> None:
            abandoned.append(reason)

    chat = make_chat(provider, request, registry, view=View())
    reply = await chat.send("x")
    assert reply.stop == "error" and reply.error
    assert abandoned == [reply.error]
    # Step 1 (call + result) stays; the cut step left nothing behind.
    assert chat.messages[-1]["role"] in ("tool", "user")
    assert_consistent(chat)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_max_steps_is_a_visible_stop(
    provider: str, request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    server.add(*[Turn(tool_calls=calls(("add", '{"a": 1, "b": 1}'))) for _ in range(3)])
    chat = make_chat(provider, request, registry, max_steps=2)
    reply = await chat.send("loop")
    assert reply.stop == "max-steps" and "max_steps" in (reply.error or "")
    assert len(server.requests) == 2 and server.pending == 1
    assert_consistent(chat)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_additional_context_after_all_results(
    provider: str, request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    def remind(execution: Any, result: Any, next_: Any) -> Any:
        return Accept(
            additional_context={
                "content": [{"type": "text", "text": f"ctx {execution.call_id}"}]
            }
        )

    registry.on_post_execute(remind)
    server.add(
        Turn(
            tool_calls=calls(("add", '{"a": 1, "b": 1}'), ("add", '{"a": 2, "b": 2}'))
        ),
        Turn(text="ok"),
    )
    chat = make_chat(provider, request, registry)
    await chat.send("x")
    sent = server.requests[1].body["messages"]
    if provider == "openai":
        assert [m["role"] for m in sent] == [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
        ]
        assert sent[-1]["content"] == "ctx call_01\n\nctx call_02"
    else:
        blocks = sent[-1]["content"]
        assert [b["type"] for b in blocks] == [
            "tool_result",
            "tool_result",
            "text",
            "text",
        ]
        assert blocks[2]["text"] == "ctx toolu_01"


async def test_approval_prompt_section_and_policy_notice(
    request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    registry.on_pre_execute(lambda ex, nxt: Ask("sure?") if ex.name == "add" else nxt())
    server.add(
        Turn(tool_calls=calls(("add", '{"a": 1, "b": 1}'))),
        Turn(tool_calls=calls(("add", '{"a": 1, "b": 1}'))),
        Turn(text="ok"),
    )
    notices: list[str] = []

    class View(ChatView):
        def notice(self, text: str, *, kind: str) -> None:
            notices.append(text)

        def call_view(self, call: Any) -> None:
            # The user turns approvals off as the calls start.
            set_approval_policy(chat.agent.session, "never")

    chat = make_chat("openai", request, registry, system="Be brief.", view=View())
    await chat.send("x")
    first = server.requests[0].body["messages"][0]
    assert first["role"] == "system"
    assert first["content"] == 'Be brief.\n\n<approval-policy value="ask"/>'
    notice = 'The approval policy changed from "ask" to "never" (changed by the user).'
    assert notices == [notice]  # once, though the policy was set twice
    second = server.requests[1].body["messages"]
    assert second[-1] == {"role": "user", "content": notice}
    assert server.requests[2].body["messages"][-1]["role"] == "tool"  # no repeat
    # "never" rejected the second call without asking.
    assert tool_texts(chat)[1][1] == 'Error: approval policy "never" rejects tool "add"'


async def test_deepseek_reasoning_goes_back_only_when_sent(
    request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    seen: list[str] = []

    class View(ChatView):
        def reasoning(self, delta: str) -> None:
            seen.append(delta)

    server.add(
        Turn(reasoning="I should add.", tool_calls=calls(("add", '{"a": 1, "b": 1}'))),
        Turn(text="2"),
        Turn(text="plain"),
    )
    chat = make_chat("openai", request, registry, view=View())
    await chat.send("x")
    assert "".join(seen) == "I should add."
    assistant = server.requests[1].body["messages"][2]
    assert assistant["reasoning_content"] == "I should add."
    # A text-only answer never carries it; a new question drops the old one.
    assert "reasoning_content" not in chat.messages[-1]
    await chat.send("y")
    assert not any(
        "reasoning_content" in m for m in server.requests[2].body["messages"]
    )
    assert json.dumps(chat.messages)  # plain JSON


async def test_interrupt_mid_stream_closes_request_and_turn(
    request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    server.add(Turn(text="x" * 200, chunk=1, chunk_delay=0.02), Turn(text="next"))
    got: list[str] = []

    class View(ChatView):
        def text(self, delta: str) -> None:
            got.append(delta)

    chat = make_chat("openai", request, registry, view=View())
    task = asyncio.ensure_future(chat.send("long"))
    while len(got) < 5:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert chat.messages == []
    assert not chat.agent.session.in_open_turn()
    for _ in range(100):
        if server.disconnects:
            break
        await asyncio.sleep(0.02)
    assert server.disconnects == 1  # the HTTP request was closed
    assert (await chat.send("again")).text == "next"


@pytest.mark.parametrize("stream", [True, False])
async def test_anthropic_thinking_streams_and_goes_back_signed(
    stream: bool, request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    thought: list[str] = []

    class View(ChatView):
        def reasoning(self, delta: str) -> None:
            thought.append(delta)

    server.add(
        Turn(
            reasoning="Two numbers: use add.",
            tool_calls=calls(("add", '{"a": 1, "b": 2}')),
        ),
        Turn(text="3"),
    )
    chat = make_chat("anthropic", request, registry, stream=stream, view=View())
    assert (await chat.send("1 + 2?")).text == "3"
    if stream:
        assert "".join(thought) == "Two numbers: use add."
    # The thinking block goes back unchanged, signature and all, before the call.
    sent = server.requests[1].body["messages"][1]["content"]
    assert sent[0] == {
        "type": "thinking",
        "thinking": "Two numbers: use add.",
        "signature": "c2lnbmVk",
    }
    assert sent[1]["type"] == "tool_use" and sent[1]["input"] == {"a": 1, "b": 2}


class Exploding:
    """A call view whose every method raises."""

    def __getattr__(self, name: str) -> Any:
        def boom(*args: Any) -> None:
            raise RuntimeError(f"{name} broke")

        return boom


async def test_a_broken_view_never_breaks_the_conversation(
    request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    class Broken(ChatView):
        def text(self, delta: str) -> None:
            raise ValueError("display gone")

        def call_ready(self, call: Any) -> None:
            raise ValueError("display gone")

        def call_view(self, call: Any) -> Any:
            if call.arguments.get("a") == 1:
                raise ValueError("card gone")
            return Exploding()

        def end(self, reply: Any) -> None:
            raise SystemError("footer gone")

    server.add(
        Turn(
            text="hi",
            tool_calls=calls(("add", '{"a": 1, "b": 1}'), ("add", '{"a": 2, "b": 2}')),
        ),
        Turn(text="ok"),
    )
    chat = make_chat("openai", request, registry, view=Broken())
    reply = await chat.send("x")
    assert reply.text == "ok"
    # A view that cannot be built, or breaks while the call runs, loses
    # its display: the call runs all the same.
    texts = tool_texts(chat)
    assert [t[1] for t in texts] == ["2", "4"]
    assert_consistent(chat)


async def test_one_send_at_a_time(
    request: Any, server: ReplayServer, registry: ToolRegistry
) -> None:
    server.add(Turn(text="slow", delay=0.3), Turn(text="next"))
    chat = make_chat("openai", request, registry)
    first = asyncio.ensure_future(chat.send("a"))
    await asyncio.sleep(0.05)
    with pytest.raises(RuntimeError, match="already sending"):
        await chat.send("b")
    assert (await first).text == "slow"
    assert (await chat.send("c")).text == "next"
