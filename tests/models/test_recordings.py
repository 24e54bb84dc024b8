"""Hand-written recordings through the real SDKs: MockTransport and loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import httpx2
import pytest

from dsh_nb.models import Chat, ChatView, wire
from dsh_nb.models import recordings as rec
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import Raw, Turn
from dsh_nb.tools import ToolRegistry


def mock_openai(*bodies: tuple[int, str, str]) -> tuple[Any, list[Any]]:
    """An AsyncOpenAI whose transport answers ``bodies`` in order."""
    import openai

    queue = list(bodies)
    seen: list[Any] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        status, content_type, body = queue.pop(0)
        return httpx2.Response(
            status, content=body.encode(), headers={"content-type": content_type}
        )

    client = openai.AsyncOpenAI(
        base_url="http://model.invalid/v1",
        api_key="k",
        max_retries=0,
        http_client=openai.DefaultAsyncHttpxClient(
            transport=httpx2.MockTransport(handler)
        ),
    )
    return client, seen


DONE = json.dumps(
    {
        "id": "c2",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4.1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "5 and 42"},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 4, "total_tokens": 104},
    }
)


@pytest.mark.parametrize(
    ("stream", "first"),
    [(False, rec.OPENAI_TOOL_CALLS_JSON), (True, rec.OPENAI_TOOL_CALLS_SSE)],
)
async def test_openai_recordings_below_http(
    stream: bool, first: str, registry: ToolRegistry
) -> None:
    kind = "text/event-stream" if stream else "application/json"
    client, seen = mock_openai((200, kind, first), (200, "application/json", DONE))
    ready: list[tuple[str, Any]] = []
    thought: list[str] = []

    class View(ChatView):
        def reasoning(self, delta: str) -> None:
            thought.append(delta)

        def call_ready(self, call: wire.ParsedCall) -> None:
            ready.append((call.call_id, call.arguments))

    chat = Chat("gpt-4.1", client=client, registry=registry, stream=stream, view=View())
    if stream:  # the second request streams too: answer it as one JSON-less stream
        client, seen = mock_openai(
            (200, kind, first),
            (200, kind, rec.DEEPSEEK_REASONER_SSE),
        )
        chat = Chat("gpt-4.1", client=client, registry=registry, view=View())
    reply = await chat.send("add")
    calls = chat.messages[1]["tool_calls"]
    assert [c["function"]["arguments"] for c in calls] == [
        '{"a":2,"b":3}',
        '{"a":40,"b":2}',
    ]
    assert [m["content"] for m in chat.messages[2:4]] == ["5", "42"]
    assert (
        chat.step_usage[0].input_tokens == 82 and chat.step_usage[0].output_tokens == 51
    )
    if stream:
        # Each call announced once its arguments were complete, in order.
        assert ready == [
            ("call_h3Jk8A", {"a": 2, "b": 3}),
            ("call_p9Qw2Z", {"a": 40, "b": 2}),
        ]
        assert reply.text == "2 + 3 = 5"
        assert "".join(thought) == "The user wants a sum."
        assert "reasoning_content" not in chat.messages[-1]  # a text answer drops it
        assert chat.step_usage[1].reasoning_tokens == 22
        assert seen[1]["stream_options"] == {"include_usage": True}
    else:
        assert reply.text == "5 and 42"


async def test_openai_404_recording(registry: ToolRegistry) -> None:
    client, _ = mock_openai((404, "application/json", rec.OPENAI_MODEL_NOT_FOUND))
    reply = await Chat("gpt-9", client=client, registry=registry).send("hi")
    assert reply.error is not None
    assert "answered 404 (check the model name and base_url)" in reply.error
    assert "gpt-9" in reply.error


async def test_anthropic_recordings_on_loopback(
    server: ReplayServer, anthropic_client: Any, registry: ToolRegistry
) -> None:
    server.add(
        Raw(body=rec.ANTHROPIC_TOOL_USE_SSE, content_type="text/event-stream"),
        Raw(status=529, body=rec.ANTHROPIC_OVERLOADED),
        Turn(text="5"),
    )
    texts: list[str] = []

    class View(ChatView):
        def text(self, delta: str) -> None:
            texts.append(delta)

    chat = Chat(
        "claude-sonnet-5",
        client=anthropic_client,
        provider="anthropic",
        registry=registry,
        view=View(),
    )
    reply = await chat.send("add")
    # The overloaded second request failed; step one (call + result) stands.
    assert reply.stop == "error" and "529" in (reply.error or "")
    assert texts == ["Let me add", " those."]
    assert chat.messages[1]["content"][1] == {
        "type": "tool_use",
        "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        "name": "add",
        "input": {"a": 2, "b": 3},
    }
    assert chat.messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "content": "5",
        }
    ]
    assert (await chat.send("again")).text == "5"
    headers = server.requests[0].headers
    assert "anthropic-version" in headers and "authorization" not in headers


def test_models_imports_no_jupyter_and_no_sdk() -> None:
    code = (
        "import sys, dsh_nb.models, dsh_nb.models.replay_server, dsh_nb.models.chat\n"
        "bad = {'IPython','ipykernel','ipywidgets','traitlets','comm','openai','anthropic'}\n"
        "print(sorted(bad & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("header", ["authorization", "x-api-key", None])
def test_replay_server_requires_its_token(
    server: ReplayServer, header: str | None
) -> None:
    import urllib.error
    import urllib.request

    server.add(Turn(text="hi"), Turn(text="hi"))
    body = json.dumps({"model": "m", "messages": []}).encode()

    def post(headers: dict[str, str]) -> int:
        req = urllib.request.Request(
            f"{server.openai_url}/chat/completions", body, headers
        )
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    assert server.url.startswith("http://127.0.0.1:")
    wrong = {"authorization": "Bearer nope", "x-api-key": "nope"}
    right = {"authorization": f"Bearer {server.token}", "x-api-key": server.token}
    if header is None:
        assert post({}) == 401
    else:
        assert post({header: wrong[header]}) == 401
        assert post({header: right[header]}) == 200
        assert server.token not in json.dumps(dict(server.requests[-1].headers))
