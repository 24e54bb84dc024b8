# mypy: disable-error-code="func-returns-value"
"""Hostile tools, listeners, observers and answerers (issue 6, item 2).

Each case must end in a clear ``isError`` result (or, for the three
exceptions that belong to the kernel and the task, propagate), and the same
registry must serve a normal call right afterwards. Known implementation bugs
are pinned by ``xfail(strict=True)`` tests at the end of the file.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import gc
import logging
import math
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from dsh_nb.tools import (
    AbortController,
    Accept,
    Agent,
    Allow,
    ApprovalService,
    Ask,
    Block,
    Deny,
    FrozenDict,
    HarnessError,
    TimeoutPolicy,
    ToolDefinition,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRegistry,
    define_tool,
    text_block,
    tool,
)

ARGS_NOT_JSON = "Error: tool execution arguments must be losslessly JSON-serializable"
RESULT_NOT_JSON = "Error: tool result must be losslessly JSON-serializable"
UNAVAILABLE = (
    'Error: tool "hostile" requires approval, but no approval channel is available'
)
CANCELLED = 'Error: approval for tool "hostile" was cancelled'


class CustomBase(BaseException):
    """Neither KeyboardInterrupt nor SystemExit: must become an error result."""


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


class UnprintableBase(BaseException):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")


class Opaque:
    pass


class ListSub(list):  # type: ignore[type-arg]
    pass


class OddStr(str):
    pass


def cyclic() -> dict[str, Any]:
    d: dict[str, Any] = {"a": 1}
    d["self"] = d
    return d


def nest(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


class Rig:
    """One registry with a healthy ``ok`` tool beside the hostile one."""

    def __init__(self, body: Callable[..., Any] | None = None, **tool: Any) -> None:
        self.registry = ToolRegistry()
        self.registry.approval = ApprovalService()
        self.agent = Agent("hostile")
        self.agent.session.start_turn()
        self.registry.register(
            define_tool(
                name="ok", description="", parameters={}, execute=lambda a: "pong"
            )
        )
        if body is not None:
            self.registry.register(
                ToolDefinition(
                    name="hostile",
                    description="",
                    parameters={"type": "object", "properties": {}},
                    execute=body,
                    **tool,
                )
            )
        self.observed: list[ToolExecutionResult] = []
        self.registry.on_result(lambda e, r: self.observed.append(r))
        self.calls = 0

    async def call(
        self,
        name: str = "hostile",
        arguments: Any = None,
        *,
        agent: bool = True,
        signal: Any = None,
    ) -> ToolExecutionResult:
        self.calls += 1
        return await self.registry.execute(
            ToolExecutionInput(
                call_id=f"c{self.calls}",
                name=name,
                arguments={} if arguments is None else arguments,
                agent=self.agent if agent else None,
                signal=signal,
            )
        )

    async def assert_usable(self) -> None:
        """A normal call right after the hostile one succeeds."""
        before = len(self.observed)
        result = await self.call("ok", agent=False)
        assert result.to_json() == {
            "callId": f"c{self.calls}",
            "content": [text_block("pong")],
            "isError": False,
        }
        assert self.observed[before:] == [result]


def error_payload(call_id: str, message: str, **extra: Any) -> dict[str, Any]:
    return {
        "callId": call_id,
        "content": [text_block(message)],
        "isError": True,
        **extra,
    }


# -- tools that raise -------------------------------------------------------------


def _raiser(exc: BaseException | Callable[[], Any]) -> Callable[..., Any]:
    def body(args: Any, execution: Any) -> Any:
        if isinstance(exc, BaseException):
            raise exc
        return exc()

    return body


RAISED = [
    (RuntimeError("boom"), "Error: boom", None),
    (KeyError("k"), "Error: 'k'", None),
    (ValueError(), "Error: ", None),
    (
        HarnessError("disk full", "ENOSPC"),
        "Error: disk full",
        {"name": "HarnessError", "code": "ENOSPC"},
    ),
    (CustomBase("went sideways"), "Error: CustomBase(went sideways)", None),
    (CustomBase(), "Error: CustomBase", None),
    (Unprintable(), "Error: <unprintable thrown value>", None),
    (UnprintableBase(), "Error: UnprintableBase(<unprintable thrown value>)", None),
    (StopIteration(), "Error: ", None),
    (StopAsyncIteration("done"), "Error: done", None),
    (MemoryError("pretend"), "Error: pretend", None),
    (RecursionError("deep"), "Error: deep", None),
]


@pytest.mark.parametrize(
    ("exc", "message", "info"),
    RAISED,
    ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else None,
)
async def test_a_raising_tool_becomes_an_error_result(
    exc: BaseException, message: str, info: dict[str, str] | None
) -> None:
    rig = Rig(_raiser(exc))
    result = await rig.call()
    expected = error_payload("c1", message)
    if info is not None:
        expected["error"] = info
    assert result.to_json() == expected
    assert rig.observed == [result]
    await rig.assert_usable()


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (3, "Error: SystemExit(3)"),
        (None, "Error: SystemExit"),
        ("bye", "Error: SystemExit(bye)"),
    ],
)
@pytest.mark.parametrize("is_async", [False, True])
async def test_sys_exit_in_a_tool_becomes_an_error_result(
    code: Any, message: str, is_async: bool
) -> None:
    def sync_body(args: Any, execution: Any) -> Any:
        sys.exit(code)

    async def async_body(args: Any, execution: Any) -> Any:
        await asyncio.sleep(0)
        sys.exit(code)

    rig = Rig(async_body if is_async else sync_body)
    result = await rig.call()
    assert result.to_json() == error_payload("c1", message)
    await rig.assert_usable()


async def test_an_async_tool_raising_stop_iteration_is_contained() -> None:
    async def body(args: Any, execution: Any) -> Any:
        raise StopIteration

    rig = Rig(body)
    result = await rig.call()
    assert result.to_json() == error_payload(
        "c1", "Error: coroutine raised StopIteration"
    )
    await rig.assert_usable()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is 3.11+")
async def test_an_exception_group_is_contained() -> None:
    group = vars(builtins)["ExceptionGroup"](
        "two failed", [ValueError("a"), KeyError("b")]
    )
    rig = Rig(_raiser(group))
    result = await rig.call()
    assert result.to_json() == error_payload(
        "c1", "Error: two failed (2 sub-exceptions)"
    )
    await rig.assert_usable()


@pytest.mark.parametrize("fatal", [KeyboardInterrupt, GeneratorExit])
@pytest.mark.parametrize("kind", ["sync", "async", "thread", "str"])
async def test_a_tools_own_interrupt_is_an_error_result(
    fatal: type[BaseException], kind: str
) -> None:
    """Raised in a task it would end the kernel or server (issue 34 §2.2)."""

    class Unprintable:
        def __str__(self) -> str:
            raise fatal()

    def sync_body(args: Any, execution: Any) -> Any:
        raise fatal()

    async def async_body(args: Any, execution: Any) -> Any:
        raise fatal()

    def unprintable() -> object:
        """A typed tool's return is shown as its str()."""
        return Unprintable()

    if kind == "str":
        rig = Rig()
        rig.registry.register(tool(name="hostile")(unprintable))
    else:
        rig = Rig(async_body if kind == "async" else sync_body)
    if kind == "thread":
        # The same body on a worker thread: its exception crosses a future.
        threads = ToolRegistry(sync_tools="thread")
        threads.register(
            ToolDefinition(
                name="hostile", description="", parameters={}, execute=sync_body
            )
        )
        rig.registry.on_execute(
            lambda ex, next_: (
                threads.execute(
                    ToolExecutionInput(call_id=ex.call_id, name="hostile", arguments={})
                )
                if ex.name == "hostile"
                else next_()
            )
        )
    result = await rig.call()
    assert result.to_json() == error_payload("c1", f"Error: {fatal.__name__}")
    await rig.assert_usable()


@pytest.mark.parametrize(
    "fatal",
    [KeyboardInterrupt, asyncio.CancelledError, GeneratorExit],
    ids=lambda t: t.__name__,
)
@pytest.mark.parametrize(
    "where", ["tool", "pre-execute", "wrapper", "post-execute", "guard"]
)
async def test_kernel_and_task_exceptions_propagate(
    fatal: type[BaseException], where: str
) -> None:
    if where == "tool" and fatal is not asyncio.CancelledError:
        pytest.skip("a tool's own interrupt is its error result (above)")
    rig = Rig(lambda a, e: "fine")
    if where == "tool":
        rig.registry.register(
            ToolDefinition(
                name="fatal", description="", parameters={}, execute=_raiser(fatal())
            )
        )
    else:

        def boom(*args: Any) -> Any:
            raise fatal()

        {
            "pre-execute": rig.registry.on_pre_execute,
            "wrapper": rig.registry.on_execute,
            "post-execute": rig.registry.on_post_execute,
            "guard": rig.registry.guard,
        }[where](boom, rig.agent)
    with pytest.raises(fatal):
        await rig.call("fatal" if where == "tool" else "hostile")
    assert rig.observed == []  # the call did not complete, so no outcome
    await rig.assert_usable()


async def test_a_keyboard_interrupt_from_an_observer_propagates() -> None:
    """The result exists, but Ctrl-C must still reach the kernel."""
    rig = Rig(lambda a, e: "fine")

    def interrupt(e: Any, r: Any) -> None:
        raise KeyboardInterrupt

    dispose = rig.registry.on_result(interrupt, rig.agent)
    with pytest.raises(KeyboardInterrupt):
        await rig.call()
    assert len(rig.observed) == 1  # observers before it did run
    dispose()
    await rig.assert_usable()


# -- tools that hang ---------------------------------------------------------------


async def test_a_tool_ignoring_its_signal_is_awaited_then_reported_timed_out() -> None:
    seen: list[Any] = []

    async def stubborn(args: Any, execution: Any) -> Any:
        seen.append(execution.signal)
        await asyncio.sleep(0.15)  # never looks at the signal
        return [text_block("finished anyway")]

    rig = Rig(stubborn, timeout_ms=20)
    TimeoutPolicy().install(rig.registry)
    started = time.perf_counter()
    result = await rig.call()
    elapsed = time.perf_counter() - started
    assert elapsed >= 0.15  # the policy waits for the tool to settle
    assert seen[0].aborted  # it was told, and ignored it
    assert result.to_json() == error_payload(
        "c1",
        "Error: tool call timed out after 20ms",
        error={"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT"},
    )
    await rig.assert_usable()


async def test_a_loop_blocking_sync_tool_cannot_be_timed_out() -> None:
    """Documented: the deadline timer never runs while the loop is blocked."""

    def blocking(args: Any, execution: Any) -> Any:
        time.sleep(0.05)
        return [text_block("blocked the loop")]

    rig = Rig(blocking, timeout_ms=5)
    TimeoutPolicy().install(rig.registry)
    result = await rig.call()
    assert result.to_json() == {
        "callId": "c1",
        "content": [text_block("blocked the loop")],
        "isError": False,
    }
    await rig.assert_usable()


@pytest.mark.parametrize("with_policy", [False, True])
async def test_a_truly_hanging_tool_yields_to_the_callers_cancellation(
    with_policy: bool,
) -> None:
    started = asyncio.Event()

    async def hang(args: Any, execution: Any) -> Any:
        started.set()
        await asyncio.Event().wait()  # forever, signal or not

    rig = Rig(hang, timeout_ms=10 if with_policy else None)
    if with_policy:
        TimeoutPolicy().install(rig.registry)
    controller = AbortController()
    task = asyncio.ensure_future(rig.call(signal=controller.signal))
    await started.wait()
    await asyncio.sleep(0.03)  # the deadline (if any) fires and is ignored
    controller.abort("caller gave up")  # ignored as well
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rig.observed == []
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(rig.call(), 0.02)
    await rig.assert_usable()


# -- tools that return non-JSON ----------------------------------------------------

NON_JSON_RETURNS: list[tuple[str, Callable[[], Any]]] = [
    ("set-meta", lambda: {"content": [text_block("x")], "meta": {1, 2}}),
    ("nan-content", lambda: [{"type": "text", "text": "x", "score": math.nan}]),
    ("inf-meta", lambda: {"content": [], "meta": math.inf}),
    ("negative-zero", lambda: [{"type": "number", "value": -0.0}]),
    ("object-in-content", lambda: [Opaque()]),
    ("cyclic-meta", lambda: {"content": [text_block("x")], "meta": cyclic()}),
    ("cyclic-content", lambda: [cyclic()]),
    ("list-subclass", lambda: ListSub([text_block("x")])),
    ("tuple-block", lambda: [("type", "text")]),
    ("bytes-text", lambda: [{"type": "text", "text": b"raw"}]),
    ("int-key", lambda: [{1: "one"}]),
    ("too-deep", lambda: [{"type": "json", "value": nest(400)}]),
    ("huge-int", lambda: {"content": [], "meta": 10**5000}),
    ("callable-meta", lambda: {"content": [], "meta": print}),
]


@pytest.mark.parametrize(
    ("case", "make"), NON_JSON_RETURNS, ids=[c for c, _ in NON_JSON_RETURNS]
)
@pytest.mark.parametrize("with_post", [False, True])
async def test_a_non_json_result_becomes_the_contract_error(
    case: str, make: Callable[[], Any], with_post: bool
) -> None:
    rig = Rig(lambda a, e: make())
    if with_post:  # post-execute then sees the unfrozen result path
        rig.registry.on_post_execute(lambda e, r, n: n())
    result = await rig.call()
    assert result.to_json() == error_payload("c1", RESULT_NOT_JSON)
    assert rig.observed == [result]
    await rig.assert_usable()


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ({1, 2}, "set"),
        (Opaque(), "Opaque"),
        (math.nan, "float"),
        (None, "NoneType"),
        (42, "int"),
    ],
)
async def test_an_unsupported_return_shape_is_named(value: Any, shown: str) -> None:
    """§2.3: every unsupported shape is an error result naming the type."""
    rig = Rig(lambda a, e: value)
    result = await rig.call()
    assert result.to_json() == error_payload(
        "c1",
        f"Error: tool returned {shown}; expected a list of content blocks, "
        '{"content": [...], "meta": ...}, or a str',
    )
    await rig.assert_usable()


async def test_non_json_from_a_wrapper_or_a_post_decision_is_caught() -> None:
    rig = Rig(lambda a, e: "fine")

    async def wrapper(e: Any, n: Any) -> Any:
        await n()
        return ToolExecutionResult(
            call_id=e.call_id,
            content=[text_block("x")],
            is_error=False,
            meta={"f": print},
        )

    dispose = rig.registry.on_execute(wrapper, rig.agent)
    assert (await rig.call()).text == RESULT_NOT_JSON
    dispose()
    rig.registry.on_post_execute(
        lambda e, r, n: Accept(
            content=[text_block("x")], additional_context={math.nan: 1}
        ),
        rig.agent,
    )
    assert (await rig.call()).text == RESULT_NOT_JSON
    await rig.assert_usable()


# -- tools that mutate what they were given ----------------------------------------


@pytest.mark.parametrize(
    "mutation",
    [
        "set-key",
        "update",
        "nested-list",
        "nested-dict",
        "execution-name",
        "execution-args",
        "signal",
    ],
)
async def test_a_tool_cannot_mutate_its_arguments_or_the_execution(
    mutation: str,
) -> None:
    def body(args: Any, execution: Any) -> Any:
        if mutation == "set-key":
            args["injected"] = True
        elif mutation == "update":
            args.update(injected=True)
        elif mutation == "nested-list":
            args["items"].append("injected")
        elif mutation == "nested-dict":
            args["inner"]["x"] = "injected"
        elif mutation == "execution-name":
            execution.name = "other"
        elif mutation == "execution-args":
            execution.arguments = {}
        else:
            execution.signal = None
        return "mutated"

    caller_args = {"items": [1, 2], "inner": {"x": 1}}
    original = copy.deepcopy(caller_args)
    inner_list, inner_dict = caller_args["items"], caller_args["inner"]
    rig = Rig(body)
    result = await rig.call(arguments=caller_args)
    assert result.is_error
    assert result.error is None
    if mutation.startswith("execution") or mutation == "signal":
        assert "read-only" in result.text or "can only be changed" in result.text
    else:
        assert result.text.startswith("Error: Frozen")
        assert "is immutable (deep-frozen pipeline value)" in result.text
    assert caller_args == original
    assert caller_args["items"] is inner_list and caller_args["inner"] is inner_dict
    await rig.assert_usable()


async def test_a_deliberate_bypass_of_the_freeze_never_reaches_the_caller() -> None:
    """dict.__setitem__ on the FrozenDict works (a dict subclass cannot stop it),
    but it only touches this call's private copy."""
    seen: list[Any] = []

    def body(args: Any, execution: Any) -> Any:
        dict.__setitem__(args, "sneaky", 1)
        list.append(args["items"], "sneaky")
        seen.append(args)
        return "done"

    caller_args = {"items": [1]}
    rig = Rig(body)
    result = await rig.call(arguments=caller_args)
    assert result.text == "done" and not result.is_error
    assert caller_args == {"items": [1]}
    assert type(seen[0]) is FrozenDict
    assert seen[0] == {"items": [1, "sneaky"], "sneaky": 1}  # the bypass worked
    second = await rig.call(arguments=caller_args)
    assert second.text == "done"
    assert seen[1] is not seen[0] and "sneaky" not in caller_args
    await rig.assert_usable()


# -- tools that flood the output ----------------------------------------------------


async def test_megabytes_of_output_are_captured_and_the_result_is_fine(
    capsys: pytest.CaptureFixture[str],
) -> None:
    mib = 1024 * 1024

    def noisy(args: Any, execution: Any) -> Any:
        for _ in range(8):
            print("x" * mib)
        sys.stderr.write("e" * (2 * mib))
        return [text_block("printed 10 MiB")]

    rig = Rig(noisy)
    result = await rig.call()
    captured = capsys.readouterr()
    assert len(captured.out) >= 8 * mib
    assert len(captured.err) >= 2 * mib
    assert result.to_json() == {
        "callId": "c1",
        "content": [text_block("printed 10 MiB")],
        "isError": False,
    }
    await rig.assert_usable()


async def test_a_huge_result_is_returned_intact() -> None:
    big = "y" * (16 * 1024 * 1024)
    rig = Rig(lambda a, e: [text_block(big)])
    result = await rig.call()
    assert not result.is_error and result.text == big
    await rig.assert_usable()


def test_a_tool_that_recurses_into_the_registry_forever_is_contained() -> None:
    async def scenario() -> ToolExecutionResult:
        rig = Rig()

        async def recurse(args: Any, execution: Any) -> Any:
            inner = await rig.registry.execute(
                ToolExecutionInput(
                    call_id=execution.call_id + "+", name="hostile", arguments={}
                )
            )
            return [text_block(inner.text[:80])]

        rig.registry.register(
            ToolDefinition(
                name="hostile", description="", parameters={}, execute=recurse
            )
        )
        result = await rig.call()
        await rig.assert_usable()
        return result

    result = _in_thread(scenario)
    assert result.text.startswith("Error: maximum recursion depth exceeded")


async def test_a_tool_that_reshapes_the_registry_mid_call_is_fine() -> None:
    rig = Rig()
    disposers: list[Any] = []

    def body(args: Any, execution: Any) -> Any:
        disposers.append(rig.registry.on_pre_execute(lambda e, n: Deny("late")))
        for d in list(disposers_of_self):
            d()
        return "reshaped"

    disposers_of_self = [
        rig.registry.register(
            ToolDefinition(name="hostile", description="", parameters={}, execute=body)
        )
    ]
    result = await rig.call()
    assert result.text == "reshaped"
    assert "hostile" not in rig.registry
    disposers[0]()
    await rig.assert_usable()


# -- listeners that raise, return garbage or call next() twice ---------------------

SEAMS = ["pre-execute", "guard", "wrapper", "post-execute"]


def _install(rig: Rig, seam: str, fn: Callable[..., Any]) -> None:
    {
        "pre-execute": rig.registry.on_pre_execute,
        "guard": rig.registry.guard,
        "wrapper": rig.registry.on_execute,
        "post-execute": rig.registry.on_post_execute,
    }[seam](fn, rig.agent)


@pytest.mark.parametrize(
    ("seam", "is_async"),
    [(seam, False) for seam in SEAMS]
    + [(seam, True) for seam in SEAMS if seam != "guard"],
)
@pytest.mark.parametrize(
    ("exc", "message", "info"),
    [
        (RuntimeError("hook broke"), "Error: hook broke", None),
        (
            HarnessError("denied", "DENIED"),
            "Error: denied",
            {"name": "HarnessError", "code": "DENIED"},
        ),
        (CustomBase("odd"), "Error: CustomBase(odd)", None),
        (SystemExit(2), "Error: SystemExit(2)", None),
        (Unprintable(), "Error: <unprintable thrown value>", None),
    ],
    ids=["exception", "harness", "custom-base", "sys-exit", "unprintable"],
)
async def test_a_raising_listener_becomes_an_error_result(
    seam: str, exc: BaseException, message: str, info: Any, is_async: bool
) -> None:
    ran: list[str] = []
    rig = Rig(lambda a, e: ran.append("tool") or "ran")

    def sync_listener(*args: Any) -> Any:
        raise exc

    async def async_listener(*args: Any) -> Any:
        await asyncio.sleep(0)
        raise exc

    _install(rig, seam, async_listener if is_async else sync_listener)
    result = await rig.call()
    expected = error_payload("c1", message)
    if info:
        expected["error"] = info
    assert result.to_json() == expected
    assert ran == ([] if seam != "post-execute" else ["tool"])
    await rig.assert_usable()


GARBAGE: list[tuple[str, Any, str]] = [
    ("pre-execute", None, "returned None; return Allow(), Deny(reason), Ask(reason)"),
    ("pre-execute", 42, "returned 42"),
    ("pre-execute", "allow", "returned 'allow'"),
    ("pre-execute", Allow, "returned <class"),
    ("pre-execute", Deny(5), "returned Deny without a str reason"),  # type: ignore[arg-type]
    ("pre-execute", Accept(), "returned Accept("),
    ("guard", 42, "returned 42; return None to pass or a str reason to deny"),
    ("guard", b"no", "returned b'no'"),
    ("guard", "coroutine", "is async; guards must be synchronous"),
    ("wrapper", None, "returned None; return a ToolExecutionResult"),
    ("wrapper", {"content": []}, "returned {'content': []}"),
    ("wrapper", Allow(), "returned Allow()"),
    ("post-execute", None, "returned None; return Accept(...), Block(feedback)"),
    ("post-execute", "accept", "returned 'accept'"),
    ("post-execute", Accept, "returned <class"),
    ("post-execute", Deny("x"), "returned Deny("),
]


@pytest.mark.parametrize(
    ("seam", "value", "fragment"),
    GARBAGE,
    ids=[f"{s}-{v!r:.20}" for s, v, _ in GARBAGE],
)
async def test_a_listener_returning_garbage_breaks_the_contract_visibly(
    seam: str, value: Any, fragment: str
) -> None:
    def listener(*args: Any) -> Any:
        if value == "coroutine":
            return asyncio.sleep(0)
        return value

    rig = Rig(lambda a, e: "ran")
    _install(rig, seam, listener)
    result = await rig.call()
    assert result.is_error
    assert result.error is not None and result.error.code == "LISTENER_CONTRACT"
    assert fragment in result.text
    assert "test_hostile" in result.text  # the listener is named
    await rig.assert_usable()


async def test_a_wrapper_returning_another_calls_result_is_refused() -> None:
    rig = Rig(lambda a, e: "ran")
    rig.registry.on_execute(
        lambda e, n: ToolExecutionResult(
            call_id="someone-else", content=[], is_error=False
        ),
        rig.agent,
    )
    result = await rig.call()
    assert result.to_json() == error_payload(
        "c1",
        'Error: tools/execute returned callId "someone-else" for authoritative call "c1"',
    )
    await rig.assert_usable()


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
@pytest.mark.parametrize("seam", ["pre-execute", "wrapper", "post-execute"])
@pytest.mark.parametrize("is_async", [False, True])
async def test_calling_next_twice_is_a_contract_error(
    seam: str, is_async: bool
) -> None:
    ran: list[str] = []
    rig = Rig(lambda a, e: ran.append("tool") or "ran")

    def sync_listener(*args: Any) -> Any:
        args[-1]()
        return args[-1]()

    async def async_listener(*args: Any) -> Any:
        await args[-1]()
        return await args[-1]()

    _install(rig, seam, async_listener if is_async else sync_listener)
    result = await rig.call()
    assert result.error is not None and result.error.code == "LISTENER_CONTRACT"
    assert "called next() twice" in result.text
    assert len(ran) <= 1  # the inner chain never runs twice
    await rig.assert_usable()


# -- observers that raise ---------------------------------------------------------


@pytest.mark.parametrize(
    ("behaviour", "logged"),
    [
        ("raise", "observer broke"),
        ("custom-base", "odd observer"),
        ("sys-exit", "4"),
        ("unprintable", "<unprintable thrown value>"),
        ("async", "is async; observers must be synchronous"),
        ("mutate", "is immutable"),
    ],
)
@pytest.mark.parametrize("kind", ["result", "trace"])
async def test_a_failing_observer_is_contained_and_the_others_still_run(
    behaviour: str, logged: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    def bad(e: Any, r: Any, *extra: Any) -> Any:
        if behaviour == "raise":
            raise RuntimeError("observer broke")
        if behaviour == "custom-base":
            raise CustomBase("odd observer")
        if behaviour == "sys-exit":
            sys.exit(4)
        if behaviour == "unprintable":
            raise Unprintable()
        if behaviour == "async":
            return asyncio.sleep(0)
        r.content.append(text_block("tampered"))
        return None

    rig = Rig(lambda a, e: [text_block("fine")])
    later: list[ToolExecutionResult] = []
    if kind == "result":
        rig.registry.on_result(bad, rig.agent, prepend=True)
        rig.registry.on_result(lambda e, r: later.append(r))
    else:
        rig.registry.on_trace(bad, rig.agent)
        rig.registry.on_trace(lambda e, r, records: later.append(r))
    with caplog.at_level(logging.WARNING, logger="dsh_nb.tools"):
        result = await rig.call()
    assert result.to_json() == {
        "callId": "c1",
        "content": [text_block("fine")],
        "isError": False,
    }
    assert later == [result] and later[0] is result
    assert rig.observed == [result]
    what = "tools/result observer" if kind == "result" else "trace observer"
    assert f'tool "hostile" (c1): {what} failed: ' in caplog.text
    assert logged in caplog.text
    await rig.assert_usable()


# -- approval answerers that raise or never answer ---------------------------------


def _ask(rig: Rig) -> None:
    rig.registry.on_pre_execute(lambda e, n: Ask("check with the user"), rig.agent)


def _audit(rig: Rig) -> list[tuple[str, Any]]:
    return [
        (e["type"], e["data"].get("outcome"))
        for e in rig.agent.session.events
        if e["type"].startswith("approval/")
    ]


@pytest.mark.parametrize(
    "raised",
    [
        RuntimeError("answerer broke"),
        CustomBase("odd"),
        Unprintable(),
        HarnessError("x", "X"),
    ],
    ids=["exception", "custom-base", "unprintable", "harness"],
)
@pytest.mark.parametrize("with_signal", [False, True])
@pytest.mark.parametrize("is_async", [False, True])
async def test_a_raising_answerer_means_unavailable(
    raised: BaseException, with_signal: bool, is_async: bool
) -> None:
    ran: list[str] = []
    rig = Rig(lambda a, e: ran.append("tool") or "ran")
    _ask(rig)

    def sync_answer(request: Any, next_: Any) -> Any:
        raise raised

    async def async_answer(request: Any, next_: Any) -> Any:
        await asyncio.sleep(0)
        raise raised

    rig.registry.approval.on_request(async_answer if is_async else sync_answer)  # type: ignore[union-attr]
    signal = AbortController().signal if with_signal else None
    result = await rig.call(signal=signal)
    assert result.to_json() == error_payload("c1", UNAVAILABLE)
    assert ran == []
    assert _audit(rig) == [
        ("approval/asked", None),
        ("approval/decided", "unavailable"),
    ]
    await rig.assert_usable()


async def test_an_answerer_closing_its_own_prompt_means_cancelled() -> None:
    async def closes(request: Any, next_: Any) -> Any:
        raise asyncio.CancelledError

    rig = Rig(lambda a, e: "ran")
    _ask(rig)
    rig.registry.approval.on_request(closes)  # type: ignore[union-attr]
    result = await rig.call()
    assert result.to_json() == error_payload("c1", CANCELLED)
    assert _audit(rig) == [("approval/asked", None), ("approval/decided", "cancelled")]
    await rig.assert_usable()


@pytest.mark.parametrize(
    "returned", [None, 42, "yes", ["allowed-once"], {"outcome": "allowed-once"}]
)
async def test_an_answerer_returning_nonsense_means_unavailable(returned: Any) -> None:
    rig = Rig(lambda a, e: "ran")
    _ask(rig)
    rig.registry.approval.on_request(lambda r, n: returned)  # type: ignore[union-attr]
    result = await rig.call(signal=AbortController().signal)
    assert result.to_json() == error_payload("c1", UNAVAILABLE)
    await rig.assert_usable()


async def test_a_silent_answerer_is_cancelled_through_the_requests_signal() -> None:
    requests: list[Any] = []

    async def never(request: Any, next_: Any) -> Any:
        requests.append(request)
        await asyncio.Event().wait()

    rig = Rig(lambda a, e: "ran")
    _ask(rig)
    rig.registry.approval.on_request(never)  # type: ignore[union-attr]
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.02, controller.abort, "user walked away")
    result = await rig.call(signal=controller.signal)
    assert result.to_json() == error_payload("c1", CANCELLED)
    assert requests[0].signal is controller.signal
    assert _audit(rig) == [("approval/asked", None), ("approval/decided", "cancelled")]
    await rig.assert_usable()


async def test_a_silent_answerer_yields_to_an_asyncio_timeout_from_the_caller() -> None:
    async def never(request: Any, next_: Any) -> Any:
        await asyncio.Event().wait()

    rig = Rig(lambda a, e: "ran")
    _ask(rig)
    rig.registry.approval.on_request(never)  # type: ignore[union-attr]
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(rig.call(), 0.02)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(rig.call(signal=AbortController().signal), 0.02)
    assert rig.observed == []
    await rig.assert_usable()


async def test_a_cancelled_approval_still_closes_the_audit_pair() -> None:
    async def never(request: Any, next_: Any) -> Any:
        await asyncio.Event().wait()

    rig = Rig(lambda a, e: "ran")
    _ask(rig)
    rig.registry.approval.on_request(never)  # type: ignore[union-attr]
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(rig.call(), 0.02)
    assert _audit(rig) == [("approval/asked", None), ("approval/decided", "cancelled")]
    await rig.assert_usable()


async def test_a_late_answer_after_cancel_is_discarded() -> None:
    gate = asyncio.Event()

    async def slow(request: Any, next_: Any) -> Any:
        await gate.wait()
        return "allowed-once"

    ran: list[str] = []
    rig = Rig(lambda a, e: ran.append("tool") or "ran")
    _ask(rig)
    rig.registry.approval.on_request(slow)  # type: ignore[union-attr]
    result = await rig.call(signal=_aborting_soon())
    gate.set()
    await asyncio.sleep(0.01)
    assert result.text == CANCELLED and ran == []
    await rig.assert_usable()


def _aborting_soon() -> Any:
    controller = AbortController()
    asyncio.get_running_loop().call_later(0.01, controller.abort)
    return controller.signal


# -- hostile call inputs -------------------------------------------------------------


class HostileInput:
    def __init__(self, broken: str, exc: BaseException) -> None:
        self.broken, self.exc = broken, exc

    def __getattr__(self, name: str) -> Any:
        if name == self.broken:
            raise self.exc
        return {"call_id": "c1", "name": "ok", "arguments": {}}.get(name)


@pytest.mark.parametrize(
    ("broken", "exc", "call_id", "message"),
    [
        ("arguments", RuntimeError("getter exploded"), "c1", "Error: getter exploded"),
        ("arguments", CustomBase("odd"), "c1", "Error: CustomBase(odd)"),
        ("arguments", SystemExit(1), "c1", "Error: SystemExit(1)"),
        ("call_id", RuntimeError("no id"), "", "Error: no id"),
        ("name", CustomBase(), "", "Error: CustomBase"),
    ],
)
async def test_a_hostile_input_object_is_contained(
    broken: str, exc: BaseException, call_id: str, message: str
) -> None:
    rig = Rig()
    result = await rig.registry.execute(HostileInput(broken, exc))  # type: ignore[arg-type]
    assert result.to_json() == error_payload(call_id, message)
    await rig.assert_usable()


async def test_a_keyboard_interrupt_from_the_input_object_propagates() -> None:
    rig = Rig()
    with pytest.raises(KeyboardInterrupt):
        await rig.registry.execute(HostileInput("arguments", KeyboardInterrupt()))  # type: ignore[arg-type]
    await rig.assert_usable()


@pytest.mark.parametrize(
    "arguments",
    [
        math.nan,
        {"x": -0.0},
        (1, 2),
        {1, 2},
        b"raw",
        cyclic(),
        {1: "a"},
        nest(300),
        {"n": 10**5000},
    ],
    ids=[
        "nan",
        "negative-zero",
        "tuple",
        "set",
        "bytes",
        "cycle",
        "int-key",
        "too-deep",
        "huge-int",
    ],
)
async def test_non_json_arguments_stop_before_any_listener(arguments: Any) -> None:
    touched: list[str] = []
    rig = Rig(lambda a, e: touched.append("tool") or "ran")
    rig.registry.on_pre_execute(lambda e, n: touched.append("pre") or n())
    rig.registry.guard(lambda e: touched.append("guard"))
    rig.registry.on_execute(lambda e, n: touched.append("wrap") or n())
    rig.registry.on_post_execute(lambda e, r, n: touched.append("post") or n())
    result = await rig.call(arguments=arguments)
    assert result.to_json() == error_payload("c1", ARGS_NOT_JSON)
    assert touched == []
    assert rig.observed == [result]
    touched.clear()
    await rig.assert_usable()
    assert touched == ["pre", "guard", "wrap", "post"]


# -- known bugs (reported; strict so that a fix flips them) --------------------------


def _in_thread(coro_factory: Callable[[], Any]) -> Any:
    """Run on a fresh loop in a fresh thread; return or re-raise its outcome.

    A thread of its own keeps what these scenarios do to the interpreter's
    per-thread state (a loop torn down by SystemExit, a blown recursion
    limit) away from pytest's own thread.
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = asyncio.run(coro_factory())
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            # Only the type and args cross over: the traceback pins the dead
            # loop's tasks, whose finalizers must run here, not in pytest.
            box["raised"] = (type(exc), exc.args)
            del exc
        gc.collect()

    worker = threading.Thread(target=target)
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "the scenario hung"
    if "raised" in box:
        kind, args = box["raised"]
        raise kind(*args)
    return box["result"]


def _run_escaping(coro_factory: Callable[[], Any]) -> Any:
    """A SystemExit escaping the scenario's event loop fails the test."""
    try:
        return _in_thread(coro_factory)
    except SystemExit as exc:
        pytest.fail(f"SystemExit({exc.code}) escaped the event loop")


@pytest.mark.parametrize("with_signal", [False, True])
def test_sys_exit_in_an_answerer_stays_inside_the_call(with_signal: bool) -> None:
    async def scenario() -> ToolExecutionResult:
        rig = Rig(lambda a, e: "ran")
        _ask(rig)
        rig.registry.approval.on_request(lambda r, n: sys.exit(5))  # type: ignore[union-attr]
        return await rig.call(signal=AbortController().signal if with_signal else None)

    result = _run_escaping(scenario)
    assert result.to_json() == error_payload("c1", UNAVAILABLE)


def test_sys_exit_in_an_abort_callback_stays_inside_the_call() -> None:
    async def scenario() -> ToolExecutionResult:
        async def body(args: Any, execution: Any) -> Any:
            execution.signal.add_callback(lambda reason: sys.exit(6))
            await asyncio.sleep(0.03)
            return [text_block("done")]

        rig = Rig(body, timeout_ms=5)
        TimeoutPolicy().install(rig.registry)
        return await rig.call()

    result = _run_escaping(scenario)
    assert result.error is not None and result.error.code == "TOOL_TIMEOUT"


async def test_a_str_subclass_outcome_keeps_the_audit_pair() -> None:
    rig = Rig(lambda a, e: "ran")
    _ask(rig)
    rig.registry.approval.on_request(lambda r, n: OddStr("allowed-once"))  # type: ignore[union-attr]
    result = await rig.call()
    assert result.is_error
    assert [t for t, _ in _audit(rig)] == ["approval/asked", "approval/decided"]


def test_block_feedback_and_listener_misuse_keep_working_together() -> None:
    """A smoke run of several hostile seams at once on a private loop."""

    async def scenario() -> list[ToolExecutionResult]:
        rig = Rig(lambda a, e: [text_block("fine")])
        rig.registry.on_post_execute(
            lambda e, r, n: Block(feedback=[text_block("nope")]), rig.agent
        )
        rig.registry.on_result(lambda e, r: sys.exit(1))
        results = [await rig.call() for _ in range(3)]
        await rig.assert_usable()
        return results

    results = asyncio.run(scenario())
    assert [r.to_json() for r in results] == [
        {"callId": f"c{i}", "content": [text_block("nope")], "isError": True}
        for i in (1, 2, 3)
    ]
