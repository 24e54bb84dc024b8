# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline, §4.9 and §2.3: tools/execute, base dispatch and return forms.

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pipelinekit import (
    AC,
    err,
    error_json,
    inp,
    make_def,
    ok_json,
    only_text,
    text,
)

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.errors import (
    HarnessError,
    ToolErrorInfo,
)
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    ToolExecutionResult,
)

# -- §4.9 tools/execute and base dispatch -------------------------------------------


async def test_unknown_tool_pinned(registry: ToolRegistry) -> None:
    log: list[str] = []
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    result = await registry.execute(inp("nope"))
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": 'Error: unknown tool "nope"'}],
        "isError": True,
        "error": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
    }
    assert result.error == ToolErrorInfo("ToolNotFoundError", "UNKNOWN_TOOL")
    assert log == ["post"]


async def test_scoped_tool_is_unknown_to_other_callers(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def("mine"), scope=agent)
    assert (await registry.execute(inp("mine", agent=agent))).is_error is False
    for caller in (None, other):
        result = await registry.execute(inp("mine", agent=caller))
        assert only_text(result) == 'Error: unknown tool "mine"'
        assert err(result) == {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"}


async def test_dispatch_uses_scoped_shadow(
    registry: ToolRegistry, agent: Agent
) -> None:
    async def g(args: Any, execution: Any) -> Any:
        return [text("global")]

    async def s(args: Any, execution: Any) -> Any:
        return [text("scoped")]

    registry.register(make_def("echo", g))
    registry.register(make_def("echo", s), scope=agent)
    assert (await registry.execute(inp(agent=agent))).to_json() == ok_json("scoped")
    assert (await registry.execute(inp())).to_json() == ok_json("global")


async def test_dispatch_resolves_at_dispatch_time(registry: ToolRegistry) -> None:
    async def late(args: Any, execution: Any) -> Any:
        return [text("late tool")]

    async def wrap(execution: Any, next: Any) -> Any:
        dispose = registry.register(make_def("late", late))
        try:
            return await next()
        finally:
            dispose()

    registry.on_execute(wrap)
    assert (await registry.execute(inp("late"))).to_json() == ok_json("late tool")


async def test_tool_removed_before_dispatch_is_unknown(registry: ToolRegistry) -> None:
    dispose = registry.register(make_def("gone"))

    async def wrap(execution: Any, next: Any) -> Any:
        dispose()
        return await next()

    registry.on_execute(wrap)
    result = await registry.execute(inp("gone"))
    assert only_text(result) == 'Error: unknown tool "gone"'


async def test_wrapper_next_returns_error_result_for_tool_failure(
    registry: ToolRegistry,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        raise HarnessError("kaboom", "BOOM")

    registry.register(make_def("echo", body))
    seen: list[Any] = []

    async def wrap(execution: Any, next: Any) -> Any:
        result = await next()
        seen.append(result)
        return result

    registry.on_execute(wrap)
    result = await registry.execute(inp())
    assert seen[0].is_error is True
    assert seen[0].to_json() == error_json(
        "Error: kaboom", error={"name": "HarnessError", "code": "BOOM"}
    )
    assert result.to_json() == seen[0].to_json()


async def test_wrapper_next_returns_error_result_for_unknown_tool(
    registry: ToolRegistry,
) -> None:
    seen: list[Any] = []

    async def wrap(execution: Any, next: Any) -> Any:
        result = await next()
        seen.append(result.to_json())
        return result

    registry.on_execute(wrap)
    await registry.execute(inp("ghost"))
    assert seen == [
        error_json(
            'Error: unknown tool "ghost"',
            error={"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
        )
    ]


@pytest.mark.parametrize("is_async", [False, True])
async def test_wrapper_sees_a_non_json_dispatch_result_as_is(
    registry: ToolRegistry, is_async: bool
) -> None:
    """§4.9: wrapper results are taken as-is; JSON-ness is checked later."""

    def sync_body(args: Any, execution: Any) -> Any:
        return [{"type": "text", "text": "x", "score": float("nan")}]

    async def async_body(args: Any, execution: Any) -> Any:
        return sync_body(args, execution)

    registry.register(make_def("echo", async_body if is_async else sync_body))
    seen: list[Any] = []

    async def repair(execution: Any, next: Any) -> Any:
        result = await next()
        seen.append(result)
        return ToolExecutionResult(
            call_id=result.call_id, content=[text("repaired")], is_error=False
        )

    registry.on_execute(repair)
    result = await registry.execute(inp())
    assert seen[0].is_error is False
    assert seen[0].content[0]["text"] == "x"
    assert seen[0].content[0]["score"] != seen[0].content[0]["score"]  # NaN
    assert result.to_json() == ok_json("repaired")


async def test_a_passed_on_result_is_frozen_and_detached_from_the_tool(
    registry: ToolRegistry,
) -> None:
    returned: list[Any] = []

    def body(args: Any, execution: Any) -> Any:
        content = [text("ok"), {"type": "json", "value": {"n": [1, 2]}}]
        returned.append(content)
        return {"content": content, "meta": {"m": [1]}}

    registry.register(make_def("echo", body))
    in_wrapper: list[Any] = []

    def wrap(execution: Any, next: Any) -> Any:
        pending = next()
        in_wrapper.append(pending)
        return pending

    registry.on_execute(wrap)
    registry.on_post_execute(lambda e, r, n: n())
    result = await registry.execute(inp())
    returned[0][1]["value"]["n"].append(3)
    returned[0].append(text("late"))
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("ok"), {"type": "json", "value": {"n": [1, 2]}}],
        "isError": False,
        "meta": {"m": [1]},
    }
    with pytest.raises(TypeError):
        result.content[1]["value"]["n"].append(4)  # type: ignore[index]


async def test_a_sync_tool_runs_when_the_wrapper_calls_next(
    registry: ToolRegistry,
) -> None:
    """next() starts the chain at once, as the reference's promise does."""
    log: list[str] = []

    def body(args: Any, execution: Any) -> Any:
        log.append("tool")
        return "ok"

    registry.register(make_def("echo", body))

    async def wrap(execution: Any, next: Any) -> Any:
        pending = next()
        log.append("next returned")
        return await pending

    registry.on_execute(wrap)
    result = await registry.execute(inp())
    assert log == ["tool", "next returned"]
    assert result.to_json() == ok_json()


async def test_wrapper_callid_mismatch_pinned(registry: ToolRegistry) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id="forged", content=[text("x")], is_error=False
        )
    )
    registry.on_post_execute(lambda e, r, n: (log.append("post"), n())[1])
    registry.on_result(lambda e, r: log.append("result"))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [
            {
                "type": "text",
                "text": 'Error: tools/execute returned callId "forged" for '
                'authoritative call "c1"',
            }
        ],
        "isError": True,
    }
    assert result.error is None
    assert log == ["result"]


async def test_wrapper_result_fields_are_kept(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id,
            content=[text("from wrapper")],
            is_error=True,
            error=ToolErrorInfo("RetryError", "RETRY_EXHAUSTED"),
            additional_context=AC,
            meta={"attempts": 3},
        )
    )
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("from wrapper")],
        "isError": True,
        "error": {"name": "RetryError", "code": "RETRY_EXHAUSTED"},
        "additionalContext": AC,
        "meta": {"attempts": 3},
    }


async def test_tool_receives_execution_with_call_identity(
    registry: ToolRegistry, agent: Agent
) -> None:
    seen: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        seen.append((execution.call_id, execution.name, execution.agent))
        return [text("ok")]

    registry.register(make_def("echo", body))
    await registry.execute(inp(agent=agent, call_id="abc"))
    assert seen == [("abc", "echo", agent)]


async def test_sync_tool_body(registry: ToolRegistry) -> None:
    def body(args: Any, execution: Any) -> Any:
        return [text(f"sync {args['n']}")]

    registry.register(make_def("echo", body))
    result = await registry.execute(inp(arguments={"n": 1}))
    assert result.to_json() == ok_json("sync 1")


# -- §2.3 return normalisation (raw definitions) -------------------------------


async def test_raw_definition_is_not_validated(registry: ToolRegistry) -> None:
    got: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        got.append(args)
        return [text("ran")]

    registry.register(
        ToolDefinition(
            name="raw",
            description="raw",
            parameters={
                "type": "object",
                "properties": {"n": {"type": "number"}},
                "required": ["n"],
            },
            execute=body,
        )
    )
    result = await registry.execute(inp("raw", {"n": "not a number"}))
    assert result.to_json() == ok_json("ran")
    result = await registry.execute(inp("raw", {}))
    assert result.to_json() == ok_json("ran")
    assert got == [{"n": "not a number"}, {}]


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        ([text("a"), text("b")], {"content": [text("a"), text("b")]}),
        ([], {"content": []}),
        ([{"type": "image", "data": "x", "odd": [1]}], None),
        ({"content": [text("m")], "meta": {"k": [1, 2]}}, None),
        ({"content": [text("m")], "meta": None}, None),
        ({"content": [text("m")], "meta": 0}, None),
        ({"content": [text("m")], "meta": ""}, None),
        ({"content": [text("m")]}, {"content": [text("m")]}),
        (
            {"content": [text("m")], "meta": 1, "ignored": True},
            {"content": [text("m")], "meta": 1},
        ),
        ("plain text", {"content": [text("plain text")]}),
    ],
    ids=[
        "list",
        "empty-list",
        "any-block-shape",
        "meta",
        "meta-null",
        "meta-zero",
        "meta-empty",
        "no-meta",
        "extra-keys",
        "str",
    ],
)
async def test_return_forms(
    registry: ToolRegistry, returned: Any, expected: Any
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return returned

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    if expected is None:
        expected = (
            {"content": returned} if isinstance(returned, list) else dict(returned)
        )
    want = {"callId": "c1", "isError": False, **expected}
    assert result.to_json() == want
    if "meta" in want:
        assert result.meta == want["meta"]
        assert result.meta is not ABSENT
    else:
        assert result.meta is ABSENT
        assert "meta" not in result.to_json()


@pytest.mark.parametrize(
    "returned",
    [
        None,
        5,
        True,
        {"content": "not a list"},
        {"nothing": []},
        (text("tuple"),),
        {"content": None},
        {"content": [text("ok")], "meta": float("nan")},
    ],
    ids=[
        "none",
        "int",
        "bool",
        "content-str",
        "no-content",
        "tuple",
        "content-none",
        "nan-meta",
    ],
)
async def test_unsupported_return_shapes_become_error_results(
    registry: ToolRegistry, returned: Any
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return returned

    registry.register(make_def("echo", body))
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(r))
    result = await registry.execute(inp())
    assert result.is_error is True
    assert only_text(result).startswith("Error: ")
    assert result.meta is ABSENT
    assert observed == [result]
    json.dumps(result.to_json())
