"""The stage driver: one call from raw input to the frozen result.

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

Each stage is written once. The driver records the call's
:class:`~dsh_nb.tools.outcome.ToolOutcome` as the stages run, writes the
agent's journal (:mod:`dsh_nb.tools.journal`) and, only while a trace
observer is registered, reports each stage to a
:class:`~dsh_nb.tools.trace.Recorder`.

The pipeline never raises to its caller, except for ``KeyboardInterrupt``
and ``asyncio.CancelledError``, which must reach the kernel and the task.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Final, TypeVar

from dsh_nb.tools import journal, worker
from dsh_nb.tools._decisions import (
    ACCEPT,
    ALLOW,
    apply_post,
    check_call_id,
    check_post,
    check_pre,
    check_result,
)
from dsh_nb.tools._observers import notify
from dsh_nb.tools._waterfall import Ready, Vetting, describe, run_waterfall
from dsh_nb.tools.errors import ListenerContractError, ToolNotFoundError
from dsh_nb.tools.execution import (
    _PHASE_FROZEN,
    _PHASE_RUNNING,
    _PHASE_WRAPPING,
    Allow,
    Ask,
    Block,
    Deny,
    PreToolDecision,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    text_result,
)
from dsh_nb.tools.jsonvalue import ABSENT, NotJsonError, compact_json, snapshot_json
from dsh_nb.tools.outcome import ToolRun, outcome_of, settled_status
from dsh_nb.tools.results import (
    ARGS_NOT_JSON,
    FATAL,
    denial,
    error_result,
    finalize,
    freeze_if_json,
    materialize,
    not_json_result,
    settle,
)
from dsh_nb.tools.trace import Recorder

if TYPE_CHECKING:
    from dsh_nb.tools.registry import ToolRegistry

__all__ = ["execute", "run"]

T = TypeVar("T")
_set = object.__setattr__

_DONE: Final = outcome_of("done", "execute", None)
_OUTCOME_DENIALS: Final = {
    "rejected": 'the user rejected tool "{}"',
    # Not the contract's text: under "never" nobody was asked, so the model
    # and the card say the policy decided (the outcome stays "rejected").
    "rejected-by-policy": 'approval policy "never" rejects tool "{}"',
    "cancelled": 'approval for tool "{}" was cancelled',
    "unavailable": 'tool "{}" requires approval, but no approval channel is available',
}


class _Call:
    """Per-call state the stages share; avoids a dozen closures."""

    __slots__ = (
        "approval",
        "body_running",
        "execution",
        "rec",
        "registry",
        "said",
        "stage",
        "trusted",
    )

    def __init__(self, registry: ToolRegistry, execution: ToolExecution) -> None:
        self.registry = registry
        self.execution = execution
        self.rec: Recorder | None = None  # the trace, once stage 2 starts
        self.stage = "arguments"
        self.approval: str | None = None
        self.body_running = False  # a worker thread still runs the body
        # The result dispatch built already frozen; a wrapper that passes it
        # on unchanged saves the pipeline from copying it again.
        self.trusted: ToolExecutionResult | None = None
        # The tool's own str return while ``trusted`` is the result built
        # from it (one text block, nothing else): the journal then need not
        # inspect the result (3,100 instructions of a journaled call,
        # valgrind, 2026-12-01).
        self.said: str | None = None

    # --- stage 6's base

    def dispatch(self) -> Awaitable[ToolExecutionResult]:
        """Run the tool at once, as the reference's promise does.

        A sync tool settles here and comes back as a ready awaitable, so the
        common call needs no coroutine for dispatch at all.
        """
        ex = self.execution
        call_id = ex.call_id
        _set(ex, "_phase", _PHASE_RUNNING)
        try:
            registry = self.registry
            tool = registry.get(ex.name, ex.agent)
            if tool is None:
                raise ToolNotFoundError(ex.name)
            threads = registry.threads
            if threads is not None and not worker.is_async(tool.execute):
                body = threads.run(tool.execute, ex.arguments, ex)
                return self.settle_async(worker.settle(body, ex.signal))
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
            if type(out) is str:
                self.said = out
        _set(ex, "_phase", _PHASE_WRAPPING)
        return Ready(result)

    async def settle_async(self, pending: Awaitable[object]) -> ToolExecutionResult:
        ex = self.execution
        call_id = ex.call_id
        try:
            out = await pending
        except FATAL:
            raise
        except worker.Abandoned as exc:
            self.body_running = True
            return self.keep(freeze_if_json(error_result(call_id, exc)))
        except BaseException as exc:  # noqa: BLE001 - every tool failure is a result
            return self.keep(freeze_if_json(error_result(call_id, exc)))
        else:
            result = self.keep(settle(call_id, out))
            if type(out) is str:
                self.said = out
            return result
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
            self.said = None
        return result

    # --- stages 3-4

    async def resolve(self, decision: PreToolDecision) -> str | None:
        """The denial reason a decision ends in, or None to run."""
        if isinstance(decision, Deny):
            return decision.reason
        if isinstance(decision, Ask):
            self.stage = "approval"
            reason = await self.ask(decision)
            rec = self.rec
            if rec is not None:
                rec.end("approval", "approval", reason or "allowed-once")
            if reason is not None:
                return reason
        return self.run_guards()

    def run_guards(self) -> str | None:
        """The first guard to return a reason denies; nothing overrides it."""
        ex = self.execution
        guards = self.registry._guards_for(ex._agent)
        if not guards:
            return None
        self.stage = "guard"
        rec = self.rec
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
            if rec is not None:
                rec.end("guard", guard, "deny: " + reason)
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
        if type(outcome) is str and outcome in OUTCOMES:
            self.approval = outcome
            if outcome == "allowed-once":
                return None
            if outcome == "rejected" and by_policy:
                return _OUTCOME_DENIALS["rejected-by-policy"].format(ex.name)
            return _OUTCOME_DENIALS[outcome].format(ex.name)
        try:
            shown = compact_json(outcome)
        except (TypeError, ValueError):
            shown = repr(outcome)
        raise RuntimeError(f"unreachable variant in ApprovalOutcome: {shown}")


def execute(registry: ToolRegistry, call: ToolExecutionInput) -> Awaitable[Any]:
    """Run one call through every stage; the result. Never raises."""
    return _drive(registry, call, False)


def run(registry: ToolRegistry, call: ToolExecutionInput) -> Awaitable[Any]:
    """Like :func:`execute`, answering a :class:`ToolRun` (result + outcome)."""
    return _drive(registry, call, True)


async def _drive(
    registry: ToolRegistry, call: ToolExecutionInput, want_run: bool
) -> ToolExecutionResult | ToolRun:
    """Stages 0-9 in one coroutine frame (see the module doc).

    A stage that settles synchronously (sync listeners, a sync tool) is
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
        final = finalize(error_result("", exc), "")
        if not want_run:
            return final
        ex = ToolExecution(
            call_id="", name="", arguments=ABSENT, agent=None, parent=None, signal=None
        )
        outcome = outcome_of("error", "input", None)
        _set(ex, "_outcome", outcome)
        _set(ex, "_phase", _PHASE_FROZEN)
        return ToolRun(result=final, outcome=outcome, execution=ex)
    ex = ToolExecution(
        call_id=call_id,
        name=name,
        arguments=ABSENT,
        agent=agent,
        parent=parent,
        signal=signal,
    )
    pre_fns, execute_fns, post_fns, observers, tracers = registry._plan_for(agent)
    rec: Recorder | None = None
    state = _Call(registry, ex)
    session = agent.session if agent is not None else None
    result: ToolExecutionResult
    status = "error"
    try:
        raw = call.arguments
        try:
            arguments = snapshot_json(raw)
        except NotJsonError:
            result = text_result(call_id, ARGS_NOT_JSON, is_error=True)
            if session is not None:
                journal.record_call(session, call_id, name, ABSENT)
        else:
            _set(ex, "_arguments", arguments)
            if session is not None:
                journal.record_call(session, call_id, name, arguments)
            # 2 pre-execute
            state.stage = "pre-execute"
            if tracers:
                rec = state.rec = Recorder()  # starts the clock
            decision: PreToolDecision = ALLOW
            if pre_fns:
                asked = run_waterfall(pre_fns, (ex,), ALLOW, check_pre, rec)
                if isinstance(asked, Ready):
                    decision = asked.value
                elif isinstance(asked, Vetting):
                    decision = asked.check(await asked.awaitable, asked.fn)
                    if rec is not None and decision is not rec.value:
                        rec.fn = asked.fn  # noted(), written out
                else:
                    decision = await asked
            if rec is not None:
                rec.end("pre-execute", "default", decision)
            # 3-4 approval and guards
            if decision is ALLOW or type(decision) is Allow:
                reason = state.run_guards()
            else:
                reason = await state.resolve(decision)
            # 5-6 denial, or dispatch inside the wrappers
            if reason is not None:
                result = denial(call_id, reason)
                status = "cancelled" if state.approval == "cancelled" else "denied"
            else:
                state.stage = "execute"
                who = rec.begin() if rec is not None else None  # after the guards
                _set(ex, "_phase", _PHASE_WRAPPING)
                try:
                    ran = (
                        run_waterfall(
                            execute_fns, (ex,), state.dispatch, check_result, who
                        )
                        if execute_fns
                        else state.dispatch()
                    )
                    if isinstance(ran, Ready):
                        result = ran.value
                    elif isinstance(ran, Vetting):
                        result = ran.check(await ran.awaitable, ran.fn)
                        if rec is not None and result is not rec.value:
                            rec.fn = ran.fn  # noted(), written out
                    else:
                        result = await ran
                finally:
                    _set(ex, "_phase", _PHASE_RUNNING)
                if rec is not None:
                    rec.end("execute", name, result)
                check_call_id(result, call_id)
                if not result.is_error:
                    status = "done"
                else:
                    status = settled_status(result)
            # 7 post-execute, on an immutable view
            if post_fns:
                stage = state.stage
                state.stage = "post-execute"
                result = state.view(result)
                checked = run_waterfall(post_fns, (ex, result), ACCEPT, check_post, rec)
                if isinstance(checked, Ready):
                    post = checked.value
                elif isinstance(checked, Vetting):
                    post = checked.check(await checked.awaitable, checked.fn)
                    if rec is not None and post is not rec.value:
                        rec.fn = checked.fn  # noted(), written out
                else:
                    post = await checked
                result = apply_post(result, post)
                if rec is not None:
                    rec.end("post-execute", "default", post)
                if isinstance(post, Block) and status == "done":
                    status = "error"
                else:
                    state.stage = stage
    except FATAL as exc:
        _cancel(state, session, exc)
        raise
    except BaseException as exc:  # noqa: BLE001 - the outer boundary
        result = error_result(call_id, exc)
        status = "error"
    # 8 final materialise (already done when nobody replaced the result)
    if result is state.trusted:
        final = result
    else:
        try:
            final = materialize(result)
        except NotJsonError:
            final = not_json_result(call_id)
            status, state.stage = "error", "result"
    if status == "done" and state.approval is None and state.stage == "execute":
        outcome = _DONE  # the common case, without building a key
    else:
        outcome = outcome_of(status, state.stage, state.approval, state.body_running)
    _set(ex, "_outcome", outcome)
    if session is not None:
        said = state.said if final is state.trusted else None
        journal.record_result(session, final, outcome, said)
    # 9 observers
    _set(ex, "_phase", _PHASE_FROZEN)
    if tracers and rec is None:
        rec = Recorder()  # no stage ran: the trace is empty
    notify(ex, final, observers, tracers, rec)
    if want_run:
        return ToolRun(result=final, outcome=outcome, execution=ex)
    return final


def _cancel(state: _Call, session: Any, exc: BaseException) -> None:
    """An interrupt or a cancel ended the call: no result, but a record."""
    ex = state.execution
    _set(ex, "_outcome", outcome_of("cancelled", state.stage, state.approval))
    if session is not None:
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else "cancelled"
        journal.record_cancelled(session, ex.call_id, reason)
