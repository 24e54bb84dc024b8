"""``execute()``: one call from raw input to the frozen authoritative result.

Stage order (contract §4.1)::

    0 read input fields once, mint the token
    1 materialise arguments as detached, deep-frozen lossless JSON
    2 tools/pre-execute waterfall           (default allow)
    3 ask -> the approval seam              (allowed-once proceeds)
    4 guards, global then the agent's       (first reason denies)
    5 denial result                         (stage 6 skipped)
    6 tools/execute wrappers around dispatch
    7 tools/post-execute waterfall           (default accept)
      anything raised in 2-7 -> outer boundary -> error result
    8 final materialise + freeze
    9 freeze the execution, notify tools/result observers, return

The pipeline never raises to its caller, except for ``KeyboardInterrupt``
and ``asyncio.CancelledError``, which must reach the kernel and the task.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.tools._waterfall import Ready, Vetting, describe, run_waterfall
from dsh_nb.tools.errors import (
    ListenerContractError,
    ToolNotFoundError,
)
from dsh_nb.tools.execution import (
    _PHASE_FROZEN,
    _PHASE_RUNNING,
    _PHASE_WRAPPING,
    Accept,
    Allow,
    Ask,
    Block,
    Deny,
    PostToolDecision,
    PreToolDecision,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolExecutionToken,
    text_result,
)
from dsh_nb.tools.jsonvalue import (
    ABSENT,
    NotJsonError,
    compact_json,
    snapshot_json,
)
from dsh_nb.tools.results import (
    ARGS_NOT_JSON,
    FATAL,
    denial,
    error_result,
    finalize,
    freeze_if_json,
    settle,
)

if TYPE_CHECKING:
    from dsh_nb.tools.registry import ToolRegistry

__all__ = [
    "Accept",
    "Allow",
    "Ask",
    "Block",
    "Deny",
    "PostToolDecision",
    "PreToolDecision",
    "TraceRecord",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolExecutionToken",
    "execute",
]

_log = logging.getLogger("dsh_nb.tools")
_set = object.__setattr__

_OUTCOME_DENIALS: Final = {
    "rejected": 'the user rejected tool "{}"',
    # Not the contract's text: under "never" nobody was asked, so the model
    # and the card say the policy decided (the outcome stays "rejected").
    "rejected-by-policy": 'approval policy "never" rejects tool "{}"',
    "cancelled": 'approval for tool "{}" was cancelled',
    "unavailable": 'tool "{}" requires approval, but no approval channel is available',
}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TraceRecord:
    """Who decided what at one stage of one call, and how long it took."""

    stage: str
    actor: str
    decision: str
    duration_ms: float


# --- decision checks: each names the listener that broke the contract


def _check_pre(value: object, fn: Callable[..., Any]) -> PreToolDecision:
    if isinstance(value, (Allow, Ask)):
        return value
    if isinstance(value, Deny):
        if type(value.reason) is str:
            return value
        raise ListenerContractError(
            f"pre-execute listener {describe(fn)} returned Deny without a str reason"
        )
    raise ListenerContractError(
        f"pre-execute listener {describe(fn)} returned {value!r}; "
        "return Allow(), Deny(reason), Ask(reason) or the result of next()"
    )


def _check_post(value: object, fn: Callable[..., Any]) -> PostToolDecision:
    if isinstance(value, (Accept, Block)):
        return value
    raise ListenerContractError(
        f"post-execute listener {describe(fn)} returned {value!r}; "
        "return Accept(...), Block(feedback) or the result of next()"
    )


def _check_result(value: object, fn: Callable[..., Any]) -> ToolExecutionResult:
    if isinstance(value, ToolExecutionResult):
        return value
    raise ListenerContractError(
        f"tools/execute wrapper {describe(fn)} returned {value!r}; "
        "return a ToolExecutionResult or the result of next()"
    )


_ALLOW: Final = Allow()
_ACCEPT: Final = Accept()


# --- the pipeline


class _Call:
    """Per-call state shared by the stages; avoids a dozen closures."""

    __slots__ = ("execution", "registry", "trace", "trusted")

    def __init__(
        self,
        registry: ToolRegistry,
        execution: ToolExecution,
        trace: list[TraceRecord] | None,
    ) -> None:
        self.registry = registry
        self.execution = execution
        self.trace = trace
        # The result dispatch built already frozen; a wrapper that passes it
        # on unchanged saves the pipeline from copying it again.
        self.trusted: ToolExecutionResult | None = None

    def clock(self) -> float:
        return time.perf_counter() if self.trace is not None else 0.0

    def record(self, stage: str, actor: str, decision: str, started: float) -> None:
        if self.trace is not None:
            elapsed = (time.perf_counter() - started) * 1000.0
            self.trace.append(
                TraceRecord(
                    stage=stage, actor=actor, decision=decision, duration_ms=elapsed
                )
            )

    def dispatch(self) -> Awaitable[ToolExecutionResult]:
        """Stage 6's base: run the tool at once, as the reference's promise does.

        A sync tool settles here and comes back as a ready awaitable, so the
        common call needs no coroutine for dispatch at all.
        """
        ex = self.execution
        call_id = ex.call_id
        _set(ex, "_phase", _PHASE_RUNNING)
        try:
            tool = self.registry.get(ex.name, ex.agent)
            if tool is None:
                raise ToolNotFoundError(ex.name)
            out = tool.execute(ex.arguments, ex)
            if hasattr(out, "__await__"):
                return self.settle_async(out)
        except FATAL:
            _set(ex, "_phase", _PHASE_WRAPPING)
            raise
        except BaseException as exc:  # noqa: BLE001 - every tool failure is a result
            result = self.keep(freeze_if_json(error_result(call_id, exc)))
        else:
            result = self.keep(settle(call_id, out))
        _set(ex, "_phase", _PHASE_WRAPPING)
        return Ready(result)

    async def settle_async(self, pending: Awaitable[object]) -> ToolExecutionResult:
        ex = self.execution
        call_id = ex.call_id
        try:
            out = await pending
        except FATAL:
            raise
        except BaseException as exc:  # noqa: BLE001 - every tool failure is a result
            return self.keep(freeze_if_json(error_result(call_id, exc)))
        else:
            return self.keep(settle(call_id, out))
        finally:
            _set(ex, "_phase", _PHASE_WRAPPING)

    def keep(self, settled: tuple[ToolExecutionResult, bool]) -> ToolExecutionResult:
        """Note a dispatched result that is already frozen (see ``trusted``)."""
        result, frozen = settled
        if frozen:
            self.trusted = result
        return result

    def view(self, result: ToolExecutionResult) -> ToolExecutionResult:
        """What post listeners see: the result frozen, or the error it becomes."""
        if result is not self.trusted:
            result = self.trusted = finalize(result, self.execution.call_id)
        return result

    async def resolve(self, decision: PreToolDecision) -> str | None:
        """Stages 3-4: the denial reason a decision ends in, or None to run."""
        if isinstance(decision, Deny):
            return decision.reason
        if isinstance(decision, Ask):
            started = self.clock()
            reason = await self.ask(decision)
            self.record("approval", "approval", reason or "allowed-once", started)
            if reason is not None:
                return reason
        return self.run_guards()

    def run_guards(self) -> str | None:
        """Stage 4: the first guard to return a reason denies; no override."""
        ex = self.execution
        guards = self.registry._guards_for(ex._agent)
        if not guards:
            return None
        started = self.clock()
        for guard in guards:
            reason = guard(ex)
            if reason is None:
                continue
            if hasattr(reason, "__await__"):
                getattr(reason, "close", lambda: None)()
                raise ListenerContractError(
                    f"guard {describe(guard)} is async; guards must be synchronous"
                )
            if type(reason) is not str:
                raise ListenerContractError(
                    f"guard {describe(guard)} returned {reason!r}; "
                    "return None to pass or a str reason to deny"
                )
            self.record("guard", describe(guard), "deny: " + reason, started)
            return reason
        return None

    async def ask(self, decision: Ask) -> str | None:
        from dsh_nb.tools.approval import (
            OUTCOMES,
            ApprovalRequest,
            ApprovalService,
            effective_policy,
        )

        ex = self.execution
        service = self.registry.approval
        if service is None:
            if decision.reason is not None:
                return decision.reason
            return f'tool "{ex.name}" requires approval (not yet supported)'
        if ex.agent is None:
            return (
                f'tool "{ex.name}" requires approval, '
                "but the call has no agent to route it through"
            )
        request = ApprovalRequest(
            agent=ex.agent,
            tool_name=ex.name,
            call_id=ex.call_id,
            reason=decision.reason,
            signal=ex.signal,
        )
        # The service applies "never" before consulting anyone, so the policy
        # in force now is the one that rejects, if it is "never".
        by_policy = isinstance(service, ApprovalService) and (
            effective_policy(service, ex.agent.session) == "never"
        )
        outcome = await service.request(request)
        if outcome == "allowed-once" and type(outcome) is str:
            return None
        if type(outcome) is str and outcome in OUTCOMES:
            if outcome == "rejected" and by_policy:
                outcome = "rejected-by-policy"
            return _OUTCOME_DENIALS[outcome].format(ex.name)
        try:
            shown = compact_json(outcome)
        except (TypeError, ValueError):
            shown = repr(outcome)
        raise RuntimeError(f"unreachable variant in ApprovalOutcome: {shown}")


def _actor(who: list[Callable[..., Any] | None] | None, default: str) -> str:
    fn = who[0] if who else None
    return default if fn is None else describe(fn)


def _describe_post(decision: PostToolDecision) -> str:
    if isinstance(decision, Block):
        return "block"
    changed = [
        name
        for name, value in (
            ("content", decision.content),
            ("additionalContext", decision.additional_context),
        )
        if value is not None
    ]
    return "accept" + (" (replaces " + ", ".join(changed) + ")" if changed else "")


def _describe_pre(decision: PreToolDecision) -> str:
    if isinstance(decision, Deny):
        return "deny: " + decision.reason
    if isinstance(decision, Ask):
        return "ask" + (": " + decision.reason if decision.reason else "")
    return "allow"


def _describe_result(result: ToolExecutionResult) -> str:
    if result.error is not None:
        return f"error {result.error.code}"
    return "error" if result.is_error else "ok"


def _apply_post(
    result: ToolExecutionResult, decision: PostToolDecision
) -> ToolExecutionResult:
    if isinstance(decision, Block):
        return ToolExecutionResult(
            call_id=result.call_id,
            content=decision.feedback,
            is_error=True,
            additional_context=decision.additional_context,
        )
    if decision.content is None and decision.additional_context is None:
        return result
    return dataclasses.replace(
        result,
        content=result.content if decision.content is None else decision.content,
        additional_context=(
            result.additional_context
            if decision.additional_context is None
            else decision.additional_context
        ),
    )


async def execute(
    registry: ToolRegistry, call: ToolExecutionInput
) -> ToolExecutionResult:
    """Run one call through every stage; never raises (see module doc).

    One coroutine frame for the whole untraced call: stages 2-7 are inline,
    and a stage that settles synchronously (sync listeners, a sync tool) is
    read off its ready awaitable instead of being awaited.
    """
    try:
        call_id = call.call_id
        name = call.name
        agent = getattr(call, "agent", None)
        parent = getattr(call, "parent", None)
        signal = getattr(call, "signal", None)
    except FATAL:
        raise
    except BaseException as exc:  # noqa: BLE001 - a hostile input object
        return finalize(error_result("", exc), "")
    ex = ToolExecution(
        call_id=call_id,
        name=name,
        arguments=ABSENT,
        agent=agent,
        parent=parent,
        signal=signal,
    )
    pre_fns, execute_fns, post_fns, observers, tracers = registry._plan_for(agent)
    trace: list[TraceRecord] | None = [] if tracers else None
    state = _Call(registry, ex, trace)
    result: ToolExecutionResult
    try:
        raw = call.arguments
        try:
            arguments = snapshot_json(raw)
        except NotJsonError:
            result = text_result(call_id, ARGS_NOT_JSON, is_error=True)
        else:
            _set(ex, "_arguments", arguments)
            if trace is not None:
                result = await _traced_stages(state, pre_fns, execute_fns, post_fns)
            else:
                # 2 pre-execute
                decision: PreToolDecision = _ALLOW
                if pre_fns:
                    asked = run_waterfall(pre_fns, (ex,), _ALLOW, _check_pre)
                    if isinstance(asked, Ready):
                        decision = asked.value
                    elif isinstance(asked, Vetting):
                        decision = asked.check(await asked.awaitable, asked.fn)
                    else:
                        decision = await asked
                # 3-4 approval and guards
                if decision is _ALLOW or type(decision) is Allow:
                    reason = state.run_guards()
                else:
                    reason = await state.resolve(decision)
                # 5-6 denial, or dispatch inside the wrappers
                if reason is not None:
                    result = denial(call_id, reason)
                else:
                    _set(ex, "_phase", _PHASE_WRAPPING)
                    try:
                        ran = (
                            run_waterfall(
                                execute_fns, (ex,), state.dispatch, _check_result
                            )
                            if execute_fns
                            else state.dispatch()
                        )
                        if isinstance(ran, Ready):
                            result = ran.value
                        elif isinstance(ran, Vetting):
                            result = ran.check(await ran.awaitable, ran.fn)
                        else:
                            result = await ran
                    finally:
                        _set(ex, "_phase", _PHASE_RUNNING)
                    _check_call_id(result, call_id)
                # 7 post-execute, on an immutable view
                if post_fns:
                    result = state.view(result)
                    checked = run_waterfall(
                        post_fns, (ex, result), _ACCEPT, _check_post
                    )
                    post: PostToolDecision
                    if isinstance(checked, Ready):
                        post = checked.value
                    elif isinstance(checked, Vetting):
                        post = checked.check(await checked.awaitable, checked.fn)
                    else:
                        post = await checked
                    result = _apply_post(result, post)
    except FATAL:
        raise
    except BaseException as exc:  # noqa: BLE001 - the outer boundary
        result = error_result(call_id, exc)
    # 8 final materialise (already done when nobody replaced the result)
    final = result if result is state.trusted else finalize(result, call_id)
    # 9 observers
    _set(ex, "_phase", _PHASE_FROZEN)
    registry._notify(ex, final, observers, tracers, trace)
    return final


def _check_call_id(result: ToolExecutionResult, call_id: str) -> None:
    if result.call_id != call_id:
        raise RuntimeError(
            f'tools/execute returned callId "{result.call_id}" '
            f'for authoritative call "{call_id}"'
        )


async def _traced_stages(
    state: _Call,
    pre_fns: tuple[Callable[..., Any], ...],
    execute_fns: tuple[Callable[..., Any], ...],
    post_fns: tuple[Callable[..., Any], ...],
) -> ToolExecutionResult:
    """Stages 2-7 again, also recording who decided each and how long it took."""
    ex = state.execution
    call_id = ex.call_id
    who: list[Callable[..., Any] | None] = [None]
    started = time.perf_counter()
    decision = await run_waterfall(pre_fns, (ex,), _ALLOW, _check_pre, who)
    actor = _actor(who, "default")
    state.record("pre-execute", actor, _describe_pre(decision), started)
    reason = await state.resolve(decision)
    if reason is not None:
        result = denial(call_id, reason)
    else:
        started, who[0] = time.perf_counter(), None
        _set(ex, "_phase", _PHASE_WRAPPING)
        try:
            result = await run_waterfall(
                execute_fns, (ex,), state.dispatch, _check_result, who
            )
        finally:
            _set(ex, "_phase", _PHASE_RUNNING)
        actor = _actor(who, ex.name)
        state.record("execute", actor, _describe_result(result), started)
        _check_call_id(result, call_id)
    if not post_fns:
        return result
    result = state.view(result)
    started, who[0] = time.perf_counter(), None
    post = await run_waterfall(post_fns, (ex, result), _ACCEPT, _check_post, who)
    state.record("post-execute", _actor(who, "default"), _describe_post(post), started)
    return _apply_post(result, post)
