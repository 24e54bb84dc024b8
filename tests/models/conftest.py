"""Fixtures: a loopback replay server and clients of the official SDKs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.tools import ApprovalService, ToolRegistry, define_tool


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as srv:
        yield srv


@pytest.fixture
def openai_client(server: ReplayServer) -> Any:
    import openai

    return openai.AsyncOpenAI(
        base_url=server.openai_url, api_key=server.token, max_retries=0
    )


@pytest.fixture
def anthropic_client(server: ReplayServer) -> Any:
    import anthropic

    return anthropic.AsyncAnthropic(
        base_url=server.url, api_key=server.token, max_retries=0
    )


def add_tool() -> Any:
    def add(args: Any) -> str:
        return str(args["a"] + args["b"])

    return define_tool(
        name="add",
        description="Add two integers.",
        parameters={
            "a": {"type": "number", "required": True},
            "b": {"type": "number", "required": True},
        },
        execute=add,
    )


@pytest.fixture
def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.approval = ApprovalService()
    reg.register(add_tool())
    return reg
