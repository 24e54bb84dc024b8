"""``sample_text``: one request for a tool's ``ctx.sample``, each provider.

The replay server on loopback plays the model; the official SDK clients
(conftest) send what they send to the real services.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.sampling import sample_text
from dsh_nb.models.scripted import Turn


async def test_openai_one_prompt_with_its_system_and_limit(
    server: ReplayServer, openai_client: Any
) -> None:
    server.add(Turn(text="a summary"))
    text = await sample_text(
        openai_client,
        provider="openai",
        model="m",
        prompt="Summarise: x",
        system="One line.",
        max_tokens=20,
    )
    assert text == "a summary"
    body = server.requests[-1].body
    assert body["messages"] == [
        {"role": "system", "content": "One line."},
        {"role": "user", "content": "Summarise: x"},
    ]
    assert body["max_tokens"] == 20 and "tools" not in body
    assert not body.get("stream")


async def test_anthropic_sends_its_required_limit_when_none_is_given(
    server: ReplayServer, anthropic_client: Any
) -> None:
    server.add(Turn(text="short"))
    text = await sample_text(
        anthropic_client, provider="anthropic", model="claude", prompt="Hi"
    )
    assert text == "short"
    body = server.requests[-1].body
    assert body["max_tokens"] == 4096 and "system" not in body
    assert body["messages"] == [{"role": "user", "content": "Hi"}]


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"provider": "cohere"}, "provider must be one of 'openai', 'anthropic'"),
        ({"model": ""}, "needs a model name"),
        ({"max_tokens": 0}, "max_tokens must be 1 or more, not 0"),
    ],
)
async def test_bad_requests_say_why_before_sending(
    server: ReplayServer, openai_client: Any, kwargs: dict[str, Any], why: str
) -> None:
    args: dict[str, Any] = {"provider": "openai", "model": "m", "prompt": "x"}
    with pytest.raises(ValueError, match=why):
        await sample_text(openai_client, **{**args, **kwargs})
    assert server.requests == []
