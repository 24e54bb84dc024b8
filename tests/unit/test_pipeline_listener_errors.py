# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline, §4.4: waterfall mechanics (contract errors, raising listeners).

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pipelinekit import (
    CONTRACT,
    err,
    error_json,
    inp,
    make_def,
    ok_json,
    only_text,
    text,
)

from dsh_nb.tools.errors import (
    HarnessError,
    ListenerContractError,
)
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    Accept,
    Allow,
    Block,
    Deny,
)


@pytest.mark.parametrize("stage", ["pre", "execute", "post"])
async def test_listener_returning_none_is_a_contract_error(
    registry: ToolRegistry, stage: str
) -> None:
    registry.register(make_def())
    log: list[str] = []
    if stage == "pre":
        registry.on_pre_execute(lambda e, n: None)
    elif stage == "execute":
        registry.on_execute(lambda e, n: None)
    else:
        registry.on_post_execute(lambda e, r, n: None)
    if stage != "post":
        registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    registry.on_result(lambda e, r: log.append("result"))
    result = await registry.execute(inp())
    assert result.is_error is True
    assert only_text(result).startswith("Error: ")
    assert err(result) == CONTRACT
    assert log == ["result"]


@pytest.mark.parametrize("stage", ["pre", "execute", "post"])
async def test_async_listener_returning_none_is_a_contract_error(
    registry: ToolRegistry, stage: str
) -> None:
    registry.register(make_def())

    async def pre(e: Any, n: Any) -> None:
        await n()

    async def wrap(e: Any, n: Any) -> None:
        await n()

    async def post(e: Any, r: Any, n: Any) -> None:
        await n()

    {
        "pre": lambda: registry.on_pre_execute(pre),
        "execute": lambda: registry.on_execute(wrap),
        "post": lambda: registry.on_post_execute(post),
    }[stage]()
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT


@pytest.mark.parametrize(
    "bad",
    [
        Accept(),
        Block(feedback=[text("x")]),
        "allow",
        {"kind": "yolo"},
        {"reason": "no kind"},
        42,
        True,
    ],
    ids=["accept", "block", "str", "dict-unknown-kind", "dict-no-kind", "int", "bool"],
)
async def test_pre_listener_unknown_decision_is_a_contract_error(
    registry: ToolRegistry, bad: Any
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.guard(lambda e: ran.append("guard"))
    registry.on_pre_execute(lambda e, n: bad)
    registry.on_post_execute(lambda e, r, n: (ran.append("post"), n())[1])
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT
    assert ran == []


@pytest.mark.parametrize("reason", [None, 5, ["x"]], ids=["none", "int", "list"])
async def test_deny_without_string_reason_is_a_contract_error(
    registry: ToolRegistry, reason: Any
) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))
    registry.guard(lambda e: ran.append("guard"))
    malformed = object.__new__(Deny)
    object.__setattr__(malformed, "reason", reason)
    registry.on_pre_execute(lambda e, n: malformed)
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT
    assert ran == []


@pytest.mark.parametrize(
    "bad",
    [Allow(), Deny("no"), "accept", {"kind": "yolo"}, {"kind": "allow"}, 0],
    ids=["allow", "deny", "str", "dict-unknown-kind", "dict-pre-kind", "int"],
)
async def test_post_listener_unknown_decision_is_a_contract_error(
    registry: ToolRegistry, bad: Any
) -> None:
    registry.register(make_def())
    registry.on_post_execute(lambda e, r, n: bad)
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT


@pytest.mark.parametrize(
    "bad",
    ["text", {"content": [], "isError": False}, [text("x")], Allow()],
    ids=["str", "dict-without-callid", "list", "decision"],
)
async def test_wrapper_returning_non_result_is_a_contract_error(
    registry: ToolRegistry, bad: Any
) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_execute(lambda e, n: bad)
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT
    assert log == []


async def test_calling_next_twice_raises_contract_error(
    registry: ToolRegistry,
) -> None:
    runs: list[int] = []

    async def body(args: Any, execution: Any) -> Any:
        runs.append(1)
        return [text("ok")]

    registry.register(make_def("echo", body))
    caught: list[ListenerContractError] = []

    async def wrapper(execution: Any, next: Any) -> Any:
        first = await next()
        try:
            await next()
        except ListenerContractError as exc:
            caught.append(exc)
        return first

    registry.on_execute(wrapper)
    result = await registry.execute(inp())
    assert result.to_json() == ok_json()
    assert runs == [1]
    assert len(caught) == 1
    assert caught[0].code == "LISTENER_CONTRACT"


@pytest.mark.parametrize("stage", ["pre", "execute", "post"])
async def test_uncaught_second_next_becomes_contract_error_result(
    registry: ToolRegistry, stage: str
) -> None:
    runs: list[int] = []

    async def body(args: Any, execution: Any) -> Any:
        runs.append(1)
        return [text("ok")]

    registry.register(make_def("echo", body))

    async def twice(*payload: Any) -> Any:
        next = payload[-1]
        await next()
        return await next()

    {
        "pre": registry.on_pre_execute,
        "execute": registry.on_execute,
        "post": registry.on_post_execute,
    }[stage](twice)
    result = await registry.execute(inp())
    assert result.is_error is True
    assert err(result) == CONTRACT
    assert len(runs) <= 1


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_raising_pre_listener_pinned(
    registry: ToolRegistry, is_async: bool
) -> None:
    registry.register(make_def())
    log: list[str] = []

    async def pre_async(e: Any, n: Any) -> Any:
        await asyncio.sleep(0)
        raise RuntimeError("permission hook broke")

    def pre_sync(e: Any, n: Any) -> Any:
        raise RuntimeError("permission hook broke")

    pre: Callable[..., Any] = pre_async if is_async else pre_sync

    registry.on_pre_execute(pre)
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    registry.on_result(lambda e, r: log.append("result"))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: permission hook broke"}],
        "isError": True,
    }
    assert log == ["result"]


async def test_raising_pre_listener_harness_error_pinned(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())

    def pre(e: Any, n: Any) -> Any:
        raise HarnessError("denied", "DENIED")

    registry.on_pre_execute(pre)
    result = await registry.execute(inp())
    assert result.to_json() == error_json(
        "Error: denied", error={"name": "HarnessError", "code": "DENIED"}
    )


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_raising_wrapper_pinned(registry: ToolRegistry, is_async: bool) -> None:
    ran: list[str] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append("tool")
        return [text("ok")]

    registry.register(make_def("echo", body))

    async def wrap_async(e: Any, n: Any) -> Any:
        await asyncio.sleep(0)
        raise RuntimeError("wrapper broke")

    def wrap_sync(e: Any, n: Any) -> Any:
        raise RuntimeError("wrapper broke")

    wrap: Callable[..., Any] = wrap_async if is_async else wrap_sync

    registry.on_execute(wrap)
    registry.on_post_execute(lambda e, r, n: (ran.append("post"), n())[1])
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: wrapper broke"}],
        "isError": True,
    }
    assert ran == []


async def test_raising_wrapper_after_next_skips_post(registry: ToolRegistry) -> None:
    log: list[str] = []
    registry.register(make_def())

    async def wrap(e: Any, n: Any) -> Any:
        await n()
        raise RuntimeError("wrapper broke")

    registry.on_execute(wrap)
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    result = await registry.execute(inp())
    assert result.to_json() == error_json("Error: wrapper broke")
    assert log == []


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_raising_post_listener_pinned(
    registry: ToolRegistry, is_async: bool
) -> None:
    registry.register(make_def())

    async def post_async(e: Any, r: Any, n: Any) -> Any:
        await n()
        raise RuntimeError("post hook broke")

    def post_sync(e: Any, r: Any, n: Any) -> Any:
        raise RuntimeError("post hook broke")

    post: Callable[..., Any] = post_async if is_async else post_sync

    registry.on_post_execute(post)
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: post hook broke"}],
        "isError": True,
    }
