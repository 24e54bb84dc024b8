"""Helpers for the MCP tests: an SDK client with the token, a test registry."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client

from dsh_nb.tools import (
    ApprovalService,
    Ask,
    ToolRegistry,
    define_tool,
)

ERAS = ("legacy", "auto")  # handshake (2025-11-25) and 2026-07-28


@contextlib.asynccontextmanager
async def client(
    url: str,
    token: str | None,
    *,
    mode: str = "legacy",
    name: str = "test-client",
    on_message: Any = None,
    elicit: Any = None,
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60))
    async with Client(
        streamable_http_client(url, http_client=http),
        mode=mode,  # type: ignore[arg-type]
        message_handler=on_message,
        elicitation_callback=elicit,
        client_info=types.Implementation(name=name, version="1.0"),
    ) as c:
        yield c


def add_tool() -> Any:
    return define_tool(
        name="add",
        description="Add two numbers.",
        parameters={
            "a": {"type": "number", "required": True},
            "b": {"type": "number", "required": True},
        },
        execute=lambda args: str(args["a"] + args["b"]),
    )


class Gate:
    """An approval answerer the test opens by hand; records what it saw."""

    def __init__(self) -> None:
        self.waiting: list[tuple[Any, asyncio.Future[str]]] = []
        self.asked = asyncio.Event()

    async def __call__(self, request: Any, next_: Any) -> str:
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.waiting.append((request, fut))
        self.asked.set()
        try:
            return await fut
        finally:
            self.waiting = [(r, f) for r, f in self.waiting if f is not fut]


def approval_registry(*ask: str) -> tuple[ToolRegistry, Gate]:
    """A registry whose tools in ``ask`` need approval from a Gate."""
    registry = ToolRegistry()
    registry.approval = ApprovalService()
    gate = Gate()
    registry.approval.on_request(gate)
    registry.on_pre_execute(
        lambda ex, next_: Ask(f"ask for {ex.name}") if ex.name in ask else next_()
    )
    return registry, gate


def children(pid: int | None = None) -> set[int]:
    """Live child processes of ``pid`` (this process by default), via /proc."""
    import os

    pid = os.getpid() if pid is None else pid
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.add(int(entry))
    return out
