"""Fixtures: the official SDK clients against a loopback responder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from responder import Responder

from dsh_nb.models.replay_server import ReplayServer


@pytest.fixture
def responder() -> Responder:
    return Responder()


@pytest.fixture
def server(responder: Responder) -> Iterator[ReplayServer]:
    with ReplayServer(responder) as srv:
        yield srv


def sdk_client(provider: str, server: ReplayServer) -> Any:
    if provider == "anthropic":
        import anthropic

        return anthropic.AsyncAnthropic(
            base_url=server.url, api_key=server.token, max_retries=0
        )
    import openai

    return openai.AsyncOpenAI(
        base_url=server.openai_url, api_key=server.token, max_retries=0
    )
