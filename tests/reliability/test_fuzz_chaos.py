# mypy: disable-error-code="func-returns-value"
"""Chaos at every seam: listeners, guards, wrappers, answerers, tools, observers.

Section 3 of the fuzz suites (see ``fuzzkit``): each seam draws a well
behaved or a hostile behaviour, and every call still ends in one frozen,
lossless result that every observer sees once.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

from fuzzkit import (
    ARGS_NOT_JSON,
    any_arguments,
    assert_frozen_result,
    assert_lossless_json,
    json_values,
    lossless,
    run,
    text,
)
from hypothesis import event, given
from hypothesis import strategies as st
from jsonshapes import ListSub, Opaque, cyclic_dict

from dsh_nb.tools import (
    AbortController,
    Accept,
    Agent,
    Allow,
    ApprovalService,
    Ask,
    Block,
    Deny,
    HarnessError,
    TimeoutPolicy,
    ToolDefinition,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRegistry,
    define_tool,
)

# -- 3. listener, approval, timeout and tool chaos --------------------------------

PRE = (
    "next",
    "allow",
    "deny",
    "ask",
    "ask-reason",
    "none",
    "raise",
    "raise-base",
    "sys-exit",
    "garbage",
    "twice",
    "deny-not-str",
)
GUARD = ("none", "reason", "empty", "raise", "sys-exit", "garbage", "async")
WRAP = (
    "next",
    "short",
    "wrong-id",
    "none",
    "raise",
    "raise-after",
    "non-json",
    "twice",
    "swap-signal",
    "sys-exit",
)
POST = (
    "next",
    "accept",
    "accept-content",
    "accept-bad-content",
    "accept-context",
    "block",
    "block-bad",
    "none",
    "raise",
    "garbage",
    "mutate-result",
)
ANSWER = (
    "allowed-once",
    "rejected",
    "cancelled",
    "unavailable",
    "next",
    "garbage",
    "yolo",
    "raise",
    "raise-base",
    "async-allowed",
    "str-subclass",
)
TOOL = (
    "text",
    "list",
    "object",
    "str",
    "none",
    "set",
    "nan-content",
    "cyclic-meta",
    "opaque",
    "list-sub",
    "raise",
    "raise-harness",
    "raise-base",
    "sys-exit",
    "raise-unprintable",
    "mutate-args",
    "mutate-nested",
    "sleep",
    "slow",
    "print",
    "huge-text",
)
OBSERVER = ("fine", "raise", "raise-base", "sys-exit", "async", "mutate")


class CustomBase(BaseException):
    """A BaseException that is neither KeyboardInterrupt nor SystemExit."""


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


class OddStr(str):
    pass


def _pre(behaviour: str) -> Callable[..., Any]:
    async def listener(e: Any, n: Any) -> Any:
        match behaviour:
            case "next":
                return await n()
            case "allow":
                return Allow()
            case "deny":
                return Deny("denied")
            case "ask":
                return Ask()
            case "ask-reason":
                return Ask("why")
            case "none":
                return None
            case "raise":
                raise HarnessError("pre", "PRE")
            case "raise-base":
                raise CustomBase("pre base")
            case "sys-exit":
                raise SystemExit(2)
            case "twice":
                await n()
                return await n()
            case "deny-not-str":
                return Deny(5)  # type: ignore[arg-type]
        return object()

    return listener


def _guard(behaviour: str) -> Callable[..., Any]:
    def guard(e: Any) -> Any:
        match behaviour:
            case "reason":
                return "guarded"
            case "empty":
                return ""
            case "raise":
                raise RuntimeError("guard")
            case "sys-exit":
                raise SystemExit("guard exit")
            case "garbage":
                return 42
            case "async":
                return asyncio.sleep(0)
        return None

    return guard


def _wrap(behaviour: str) -> Callable[..., Any]:
    async def wrapper(e: Any, n: Any) -> Any:
        match behaviour:
            case "next":
                return await n()
            case "short":
                return ToolExecutionResult(
                    call_id=e.call_id, content=[text("short")], is_error=False
                )
            case "wrong-id":
                return ToolExecutionResult(call_id="other", content=[], is_error=False)
            case "none":
                return None
            case "raise":
                raise RuntimeError("wrap")
            case "raise-after":
                await n()
                raise RuntimeError("wrap after")
            case "twice":
                await n()
                return await n()
            case "swap-signal":
                e.signal = AbortController().signal
                return await n()
            case "sys-exit":
                raise SystemExit(0)
        return ToolExecutionResult(
            call_id=e.call_id, content=[text("x")], is_error=False, meta={"bad": {1, 2}}
        )

    return wrapper


def _post(behaviour: str) -> Callable[..., Any]:
    def listener(e: Any, r: Any, n: Any) -> Any:
        match behaviour:
            case "next":
                return n()
            case "accept":
                return Accept()
            case "accept-content":
                return Accept(content=[text("replaced")])
            case "accept-bad-content":
                return Accept(content=[{"type": "text", "text": math.nan}])
            case "accept-context":
                return Accept(
                    additional_context={
                        "content": [text("ctx")],
                        "source": {"kind": "plugin"},
                    }
                )
            case "block":
                return Block(feedback=[text("blocked")])
            case "block-bad":
                return Block(feedback=[{"type": "text", "text": b"bytes"}])
            case "none":
                return None
            case "raise":
                raise RuntimeError("post")
            case "mutate-result":
                r.content.append(text("sneaky"))
        return "garbage"

    return listener


def _answerer(behaviour: str) -> Callable[..., Any]:
    async def answer(request: Any, n: Any) -> Any:
        match behaviour:
            case "next":
                return await n()
            case "garbage":
                return 42
            case "yolo":
                return "yolo"
            case "raise":
                raise RuntimeError("answerer")
            case "raise-base":
                raise CustomBase("answerer base")
            case "async-allowed":
                await asyncio.sleep(0)
                return "allowed-once"
            case "str-subclass":
                return OddStr("allowed-once")
        return behaviour

    return answer


def _tool(behaviour: str) -> Callable[..., Any]:
    async def body(args: Any, execution: Any) -> Any:
        match behaviour:
            case "text":
                return [text("ok")]
            case "list":
                return [{"type": "json", "value": [1, {"a": None}]}]
            case "object":
                return {"content": [text("ok")], "meta": {"m": [1, 2.5]}}
            case "str":
                return "plain"
            case "none":
                return None
            case "set":
                return {1, 2}
            case "nan-content":
                return [{"type": "text", "text": "x", "score": math.nan}]
            case "cyclic-meta":
                return {"content": [text("ok")], "meta": cyclic_dict()}
            case "opaque":
                return Opaque()
            case "list-sub":
                return ListSub([text("ok")])
            case "raise":
                raise ValueError("tool failed")
            case "raise-harness":
                raise HarnessError("tool harness", "BOOM")
            case "raise-base":
                raise CustomBase("tool base")
            case "sys-exit":
                raise SystemExit(3)
            case "raise-unprintable":
                raise Unprintable()
            case "mutate-args":
                args["new"] = 1
            case "mutate-nested":
                for value in args.values():
                    if isinstance(value, list):
                        value.append(1)
                    if isinstance(value, dict):
                        value.clear()
                return [text("no containers")]
            case "sleep":
                await asyncio.sleep(0)
                return [text("slept")]
            case "slow":
                await asyncio.sleep(0.004)
                return [text("late")]
            case "print":
                print("x" * 1000)
                return [text("printed")]
            case "huge-text":
                return [text("y" * 100_000)]
        return [text("fallthrough")]

    return body


def _observer(behaviour: str) -> Callable[..., Any]:
    def observer(e: Any, r: Any, *extra: Any) -> Any:
        match behaviour:
            case "raise":
                raise RuntimeError("observer")
            case "raise-base":
                raise CustomBase("observer base")
            case "sys-exit":
                raise SystemExit(9)
            case "async":
                return asyncio.sleep(0)
            case "mutate":
                r.content.append(text("sneaky"))
        return None

    return observer


def _mostly(default: str, choices: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Half the time the well-behaved choice, so calls also reach later stages."""
    return st.one_of(st.just(default), st.sampled_from(choices))


@given(
    pre=_mostly("next", PRE),
    guard=_mostly("none", GUARD),
    wrap=_mostly("next", WRAP),
    post=_mostly("next", POST),
    answer=st.sampled_from(ANSWER),
    behaviour=st.sampled_from(TOOL),
    observer=_mostly("fine", OBSERVER),
    timeout=st.sampled_from([None, 1, 60_000]),
    signal=st.sampled_from(["none", "fresh", "aborted"]),
    open_turn=st.booleans(),
    name=st.sampled_from(["chaos", "missing"]),
    arguments=st.one_of(
        st.dictionaries(st.text(max_size=3), json_values, max_size=3), any_arguments
    ),
)
def test_chaos_at_every_seam_never_raises_and_registry_survives(
    pre: str,
    guard: str,
    wrap: str,
    post: str,
    answer: str,
    behaviour: str,
    observer: str,
    timeout: int | None,
    signal: str,
    open_turn: bool,
    name: str,
    arguments: Any,
) -> None:
    agent = Agent("chaos")
    if open_turn:
        agent.session.start_turn()
    registry = ToolRegistry()
    registry.approval = ApprovalService()
    registry.register(
        ToolDefinition(
            name="chaos",
            description="chaos",
            parameters={"type": "object", "properties": {}},
            execute=_tool(behaviour),
            timeout_ms=timeout,
        )
    )
    registry.register(
        define_tool(
            name="ping", description="", parameters={}, execute=lambda a: "pong"
        )
    )
    touched: list[str] = []
    registry.on_pre_execute(lambda e, n: touched.append("pre") or n(), scope=agent)
    registry.on_pre_execute(_pre(pre), scope=agent)
    registry.guard(_guard(guard), scope=agent)
    TimeoutPolicy().install(registry, scope=agent)
    registry.on_execute(_wrap(wrap), scope=agent)
    registry.on_post_execute(_post(post), scope=agent)
    registry.approval.on_request(_answerer(answer), scope=agent)
    registry.on_result(_observer(observer), scope=agent)
    registry.on_trace(_observer(observer), scope=agent)
    seen: list[ToolExecutionResult] = []
    traced: list[ToolExecutionResult] = []
    registry.on_result(lambda e, r: seen.append(r))
    registry.on_trace(lambda e, r, records: traced.append(r))

    controller = AbortController()
    if signal == "aborted":
        controller.abort("caller gave up")
    result = run(
        registry.execute(
            ToolExecutionInput(
                call_id="c1",
                name=name,
                arguments=arguments,
                agent=agent,
                signal=None if signal == "none" else controller.signal,
            )
        )
    )

    payload = assert_lossless_json(result)
    assert_frozen_result(result)
    event("chaos: " + (result.error.code if result.error else str(result.is_error)))
    assert seen == [result] and seen[0] is result
    assert traced == [result] and traced[0] is result
    assert result.call_id == "c1"
    if not lossless(arguments):
        assert payload == {
            "callId": "c1",
            "content": [text(ARGS_NOT_JSON)],
            "isError": True,
        }
        assert touched == []
    else:
        assert touched == ["pre"]
    asked = agent.session.of_type("approval/asked")
    decided = agent.session.of_type("approval/decided")
    if answer != "str-subclass":  # see test_hostile_outcome_keeps_the_audit_pair
        assert len(asked) == len(decided) <= 1

    # The registry is still usable: an agent-less call sees none of the chaos.
    after = run(
        registry.execute(ToolExecutionInput(call_id="c2", name="ping", arguments={}))
    )
    assert after.to_json() == {
        "callId": "c2",
        "content": [text("pong")],
        "isError": False,
    }
