# mypy: disable-error-code="func-returns-value"
"""Contract tests for the execution pipeline, §4.12-§4.17: materialisation, observers, errors, context, meta.

Every pinned example of the contract is asserted with its exact value.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any

import pytest
from pipelinekit import (
    AC,
    ARGS_NOT_JSON,
    RESULT_NOT_JSON,
    DictSub,
    cycle_dict,
    error_json,
    inp,
    make_def,
    ok_json,
    text,
)

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.errors import (
    HarnessError,
    ToolErrorInfo,
)
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import (
    Accept,
    Deny,
    ToolExecutionResult,
)

# -- §4.12 final materialisation -------------------------------------------------


@pytest.mark.parametrize(
    "returned",
    [
        {"content": [text("ok")], "meta": {"x": float("nan")}},
        {"content": [text("ok")], "meta": lambda: 1},
        {"content": [text("ok")], "meta": -0.0},
        {"content": [text("ok")], "meta": (1, 2)},
        {"content": [text("ok")], "meta": {1: "int key"}},
        [{"type": "text", "text": "ok", "fn": print}],
        [{"type": "text", "text": float("inf")}],
        [{"type": "text", "text": b"bytes"}],
        [DictSub(type="text", text="sub")],
    ],
    ids=[
        "meta-nan",
        "meta-fn",
        "meta-neg-zero",
        "meta-tuple",
        "meta-int-key",
        "content-fn",
        "content-inf",
        "content-bytes",
        "content-dict-sub",
    ],
)
async def test_non_json_final_result_becomes_error(
    registry: ToolRegistry, returned: Any
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return returned

    registry.register(make_def("echo", body))
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(r))
    result = await registry.execute(inp())
    assert result.to_json() == error_json(RESULT_NOT_JSON)
    assert result.error is None
    assert result.meta is ABSENT
    assert observed == [result]
    assert observed[0] is result


async def test_cyclic_meta_becomes_error(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": cycle_dict()}

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    assert result.to_json() == error_json(RESULT_NOT_JSON)


async def test_non_json_wrapper_fields_become_error(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id=e.call_id,
            content=[text("ok")],
            is_error=False,
            additional_context={"content": [text("x")], "source": {1, 2}},
        )
    )
    result = await registry.execute(inp())
    assert result.to_json() == error_json(RESULT_NOT_JSON)


async def test_non_json_post_content_becomes_error(registry: ToolRegistry) -> None:
    registry.register(make_def())
    registry.on_post_execute(
        lambda e, r, n: Accept(content=[{"type": "text", "text": float("nan")}])
    )
    result = await registry.execute(inp())
    assert result.to_json() == error_json(RESULT_NOT_JSON)


async def test_harness_error_with_non_string_code_still_total(
    registry: ToolRegistry,
) -> None:
    class WeirdCode(HarnessError):
        pass

    async def body(args: Any, execution: Any) -> Any:
        raise WeirdCode("weird", 42)  # type: ignore[arg-type]

    registry.register(make_def("echo", body))
    observed: list[Any] = []
    registry.on_result(lambda e, r: observed.append(r))
    result = await registry.execute(inp())
    assert result.is_error is True
    assert result.error is None
    assert observed == [result]
    payload = result.to_json()
    assert json.loads(json.dumps(payload)) == payload


async def test_final_result_is_deep_frozen_and_detached(
    registry: ToolRegistry,
) -> None:
    held_content = [text("ok")]
    held_meta = {"rows": [1, 2]}

    async def body(args: Any, execution: Any) -> Any:
        return {"content": held_content, "meta": held_meta}

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    assert result.content is not held_content
    assert result.meta is not held_meta
    held_content.append(text("later"))
    held_content[0]["text"] = "changed"
    held_meta["rows"].append(3)
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("ok")],
        "isError": False,
        "meta": {"rows": [1, 2]},
    }
    with pytest.raises(TypeError):
        result.content.append(text("x"))  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        result.content[0]["text"] = "x"  # type: ignore[index]
    with pytest.raises(TypeError):
        result.meta["rows"].append(4)
    with pytest.raises(AttributeError):
        result.is_error = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        result.content = []  # type: ignore[misc]


async def test_to_json_is_plain_json(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": {"a": [1, 2.5, None, True]}}

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    payload = result.to_json()
    assert json.loads(json.dumps(payload)) == payload


# -- §4.13 observers ---------------------------------------------------------------


async def test_observer_fires_once_on_every_path(
    registry: ToolRegistry, agent: Agent
) -> None:
    async def ok(args: Any, execution: Any) -> Any:
        return [text("ok")]

    async def boom(args: Any, execution: Any) -> Any:
        raise RuntimeError("boom")

    async def bad(args: Any, execution: Any) -> Any:
        return {"content": [text("x")], "meta": float("nan")}

    registry.register(make_def("ok", ok))
    registry.register(make_def("boom", boom))
    registry.register(make_def("bad", bad))

    def pre(e: Any, n: Any) -> Any:
        if e.arguments == {"deny": True}:
            return Deny("denied")
        if e.arguments == {"raise": True}:
            raise RuntimeError("pre broke")
        return n()

    registry.on_pre_execute(pre)
    counts: Counter[str] = Counter()
    registry.on_result(lambda e, r: counts.update([e.call_id]))

    cases = [
        inp("ok", call_id="success"),
        inp("boom", call_id="tool-raise"),
        inp("bad", call_id="bad-result"),
        inp("missing", call_id="unknown"),
        inp("ok", {"deny": True}, call_id="deny"),
        inp("ok", {"raise": True}, call_id="pre-raise"),
        inp("ok", {"x": float("nan")}, call_id="bad-args"),
        inp("ok", call_id="scoped", agent=agent),
    ]
    for case in cases:
        result = await registry.execute(case)
        assert result.call_id == case.call_id
    assert counts == Counter({case.call_id: 1 for case in cases})


async def test_observer_receives_frozen_execution_and_result(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    checks: list[str] = []

    def observer(execution: Any, result: Any) -> None:
        try:
            result.content.append(text("x"))
        except TypeError:
            checks.append("content frozen")
        try:
            result.content[0]["text"] = "x"
        except TypeError:
            checks.append("block frozen")
        try:
            execution.arguments["a"] = 2
        except TypeError:
            checks.append("arguments frozen")

    registry.on_result(observer)
    result = await registry.execute(inp(arguments={"a": 1}))
    assert checks == ["content frozen", "block frozen", "arguments frozen"]
    assert result.to_json() == ok_json()


async def test_raising_observer_is_contained_and_logged(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.register(make_def())
    log: list[str] = []
    registry.on_result(lambda e, r: log.append("first"))

    def broken(e: Any, r: Any) -> None:
        raise RuntimeError("observer blew up")

    registry.on_result(broken)
    registry.on_result(lambda e, r: log.append("last"))
    with caplog.at_level(logging.WARNING):
        result = await registry.execute(inp(call_id="c7"))
    assert result.to_json() == ok_json(call_id="c7")
    assert log == ["first", "last"]
    messages = [r.getMessage() for r in caplog.records]
    assert (
        'tool "echo" (c7): tools/result observer failed: observer blew up' in messages
    )
    warnings = [
        r for r in caplog.records if "tools/result observer failed" in r.getMessage()
    ]
    assert len(warnings) == 1
    assert warnings[0].levelno == logging.WARNING


class Hostile(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no printing")


async def test_observer_with_unprintable_error_logs_fallback(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.register(make_def())

    def broken(e: Any, r: Any) -> None:
        raise Hostile()

    registry.on_result(broken)
    with caplog.at_level(logging.WARNING):
        result = await registry.execute(inp())
    assert result.to_json() == ok_json()
    assert (
        'tool "echo" (c1): tools/result observer failed: <unprintable thrown value>'
        in [r.getMessage() for r in caplog.records]
    )


async def test_raising_observer_on_error_path_is_contained(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(e: Any, r: Any) -> None:
        raise ValueError("still broken")

    registry.on_result(broken)
    with caplog.at_level(logging.WARNING):
        result = await registry.execute(inp("missing", {"x": (1,)}))
    assert result.to_json() == error_json(ARGS_NOT_JSON)
    assert 'tool "missing" (c1): tools/result observer failed: still broken' in [
        r.getMessage() for r in caplog.records
    ]


async def test_observers_are_scope_filtered(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def())
    heard: list[str] = []
    registry.on_result(lambda e, r: heard.append("alice"), scope=agent)
    registry.on_result(lambda e, r: heard.append("bob"), scope=other)
    registry.on_result(lambda e, r: heard.append("all"))
    await registry.execute(inp(agent=agent))
    await registry.execute(inp())
    assert heard == ["alice", "all", "all"]


# -- §4.14 error normalisation ---------------------------------------------------


class DiskFull(HarnessError):
    def __init__(self) -> None:
        super().__init__("no space left", "ENOSPC")


class BrokenCode(HarnessError):
    @property
    def code(self) -> str:
        raise RuntimeError("cannot read code")

    @code.setter
    def code(self, value: str) -> None:
        pass


@pytest.mark.parametrize(
    ("exc", "expected_text", "info"),
    [
        (RuntimeError("plain failure"), "Error: plain failure", None),
        (KeyError("k"), "Error: 'k'", None),
        (
            HarnessError("raw", "BOOM"),
            "Error: raw",
            {"name": "HarnessError", "code": "BOOM"},
        ),
        (DiskFull(), "Error: no space left", {"name": "DiskFull", "code": "ENOSPC"}),
        (Hostile(), "Error: <unprintable thrown value>", None),
        (BrokenCode("odd", "X"), "Error: odd", None),
    ],
    ids=["plain", "keyerror", "harness", "subclass", "hostile", "broken-code"],
)
async def test_tool_failures_normalise(
    registry: ToolRegistry, exc: Exception, expected_text: str, info: Any
) -> None:
    async def body(args: Any, execution: Any) -> Any:
        raise exc

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    expected = error_json(expected_text)
    if info is not None:
        expected["error"] = info
    assert result.to_json() == expected
    assert result.meta is ABSENT


async def test_sync_tool_failure_normalises(registry: ToolRegistry) -> None:
    def body(args: Any, execution: Any) -> Any:
        raise HarnessError("sync boom", "BOOM")

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    assert result.to_json() == error_json(
        "Error: sync boom", error={"name": "HarnessError", "code": "BOOM"}
    )


async def test_hostile_listener_error(registry: ToolRegistry) -> None:
    registry.register(make_def())

    def pre(e: Any, n: Any) -> Any:
        raise Hostile()

    registry.on_pre_execute(pre)
    result = await registry.execute(inp())
    assert result.to_json() == error_json("Error: <unprintable thrown value>")


# -- §4.16 additional context / §4.17 meta -----------------------------------------


async def test_additional_context_is_ferried_not_merged_into_content(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def())
    registry.on_post_execute(lambda e, r, n: Accept(additional_context=AC))
    result = await registry.execute(inp())
    assert result.content == [text("ok")]
    assert result.additional_context == AC
    assert result.to_json() == {**ok_json(), "additionalContext": AC}
    with pytest.raises(TypeError):
        result.additional_context["content"].append(text("x"))


async def test_meta_only_on_success(registry: ToolRegistry) -> None:
    async def body(args: Any, execution: Any) -> Any:
        return {"content": [text("ok")], "meta": {"lines": 3}}

    registry.register(make_def("echo", body))
    result = await registry.execute(inp())
    assert result.meta == {"lines": 3}
    with pytest.raises(TypeError):
        result.meta["lines"] = 4

    async def failing(args: Any, execution: Any) -> Any:
        raise RuntimeError("failed")

    registry.register(make_def("fail", failing))
    failed = await registry.execute(inp("fail"))
    assert failed.meta is ABSENT
    assert "meta" not in failed.to_json()


async def test_result_to_json_omits_absent_keys_only() -> None:
    result = ToolExecutionResult(call_id="x", content=[text("a")], is_error=False)
    assert result.to_json() == {"callId": "x", "content": [text("a")], "isError": False}
    with_null = ToolExecutionResult(call_id="x", content=[], is_error=False, meta=None)
    assert with_null.to_json() == {
        "callId": "x",
        "content": [],
        "isError": False,
        "meta": None,
    }
    full = ToolExecutionResult(
        call_id="x",
        content=[],
        is_error=True,
        error=ToolErrorInfo("N", "C"),
        additional_context=AC,
        meta=0,
    )
    assert full.to_json() == {
        "callId": "x",
        "content": [],
        "isError": True,
        "error": {"name": "N", "code": "C"},
        "additionalContext": AC,
        "meta": 0,
    }
