# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline, §4.10: tools/post-execute.

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

from typing import Any

from pipelinekit import (
    AC,
    AC2,
    error_json,
    inp,
    make_def,
    ok_json,
    text,
)

from dsh_nb.tools.errors import (
    HarnessError,
    ToolErrorInfo,
)
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    Accept,
    Block,
    ToolExecutionResult,
)

# -- §4.10 post-execute ---------------------------------------------------------------


async def test_post_accept_replaces_content_keeps_the_rest(
    registry: ToolRegistry,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("original")], "meta": {"m": 1}}

    registry.register(make_def("echo", body))
    registry.on_post_execute(lambda e, r, n: Accept(content=[text("replaced")]))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("replaced")],
        "isError": False,
        "meta": {"m": 1},
    }


async def test_post_accept_empty_content_counts_as_supplied(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_post_execute(lambda e, r, n: Accept(content=[]))
    result = await registry.execute(inp())
    assert result.to_json() == {"callId": "c1", "content": [], "isError": False}


async def test_post_accept_without_fields_keeps_result(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("original")], "meta": None}

    registry.register(make_def("echo", body))
    registry.on_post_execute(lambda e, r, n: Accept())
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("original")],
        "isError": False,
        "meta": None,
    }


async def test_post_accept_on_error_keeps_is_error_and_error_info(
    registry: ToolRegistry,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        raise HarnessError("disk full", "ENOSPC")

    registry.register(make_def("echo", body))
    registry.on_post_execute(
        lambda e, r, n: Accept(content=[text("Error: try a smaller file")])
    )
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("Error: try a smaller file")],
        "isError": True,
        "error": {"name": "HarnessError", "code": "ENOSPC"},
    }


async def test_post_accept_replaces_additional_context_not_merged(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())

    async def wrap(e: Any, n: Any) -> Any:
        inner = await n()
        return ToolExecutionResult(
            call_id=inner.call_id,
            content=inner.content,
            is_error=False,
            additional_context=AC,
            meta="wrapped",
        )

    registry.on_execute(wrap)
    registry.on_post_execute(lambda e, r, n: Accept(additional_context=AC2))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("ok")],
        "isError": False,
        "additionalContext": AC2,
        "meta": "wrapped",
    }


async def test_post_accept_keeps_wrapper_additional_context(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id,
            content=[text("w")],
            is_error=False,
            additional_context=AC,
        )
    )
    registry.on_post_execute(lambda e, r, n: Accept(content=[text("new")]))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("new")],
        "isError": False,
        "additionalContext": AC,
    }


async def test_post_block_builds_a_new_result_dropping_error_meta_and_context(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id,
            content=[text("w")],
            is_error=True,
            error=ToolErrorInfo("X", "Y"),
            additional_context=AC,
            meta={"dropped": True},
        )
    )
    feedback = [text("Blocked: do not do that"), {"type": "text", "text": "2nd"}]
    registry.on_post_execute(lambda e, r, n: Block(feedback=feedback))
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": feedback,
        "isError": True,
    }
    assert result.meta is ABSENT
    assert result.error is None
    assert result.additional_context is None


async def test_post_block_of_success_with_own_context(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("secret")], "meta": {"m": 1}}

    registry.register(make_def("echo", body))
    registry.on_post_execute(
        lambda e, r, n: Block(feedback=[text("no secrets")], additional_context=AC2)
    )
    result = await registry.execute(inp())
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("no secrets")],
        "isError": True,
        "additionalContext": AC2,
    }


async def test_post_block_feedback_verbatim_even_empty(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_post_execute(lambda e, r, n: Block(feedback=[]))
    result = await registry.execute(inp())
    assert result.to_json() == {"callId": "c1", "content": [], "isError": True}


async def test_post_sees_dispatched_result_as_immutable_view(
    registry: ToolRegistry,
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("original")], "meta": {"m": [1]}}

    registry.register(make_def("echo", body))
    attempts: list[str] = []

    def post(e: Any, result: Any, n: Any) -> Any:
        assert result.to_json() == {
            "callId": "c1",
            "content": [text("original")],
            "isError": False,
            "meta": {"m": [1]},
        }
        for mutate in (
            lambda: result.content.append(text("sneaky")),
            lambda: result.content[0].__setitem__("text", "sneaky"),
            lambda: setattr(result, "is_error", True),
            lambda: result.meta["m"].append(2),
        ):
            try:
                mutate()
                attempts.append("mutated")
            except (TypeError, AttributeError):
                attempts.append("refused")
        return n()

    registry.on_post_execute(post)
    result = await registry.execute(inp())
    assert attempts == ["refused"] * 4
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("original")],
        "isError": False,
        "meta": {"m": [1]},
    }


async def test_post_runs_for_failures_unknown_tools_and_wrapper_results(
    registry: ToolRegistry,
) -> None:
    async def broken(args: Any, execution: Any) -> Any:
        raise ValueError("bad value")

    registry.register(make_def("broken", broken))
    seen: list[Any] = []
    registry.on_post_execute(lambda e, r, n: (seen.append(r.to_json()), n())[1])
    await registry.execute(inp("broken"))
    await registry.execute(inp("missing"))
    dispose = registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id, content=[text("w")], is_error=False
        )
    )
    await registry.execute(inp("missing"))
    dispose()
    assert seen == [
        error_json("Error: bad value"),
        error_json(
            'Error: unknown tool "missing"',
            error={"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
        ),
        ok_json("w"),
    ]


async def test_inner_post_block_seen_by_outer_and_may_be_overridden(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    seen: list[Any] = []

    async def outer(e: Any, r: Any, n: Any) -> Any:
        decision = await n()
        seen.append(decision)
        return Accept()

    registry.on_post_execute(outer)
    registry.on_post_execute(lambda e, r, n: Block(feedback=[text("inner block")]))
    result = await registry.execute(inp())
    assert isinstance(seen[0], Block)
    assert result.to_json() == ok_json()
