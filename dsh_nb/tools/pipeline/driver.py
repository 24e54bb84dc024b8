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

Each stage is written once; what the stages share on the way (dispatch,
the approval seam, the guards) is :class:`~dsh_nb.tools.pipeline._callstate.CallState`.
The driver records the call's
:class:`~dsh_nb.tools.values.outcome.ToolOutcome` as the stages run, writes the
agent's journal (:mod:`dsh_nb.tools.audit.journal`) and, only while a trace
observer is registered, reports each stage to a
:class:`~dsh_nb.tools.pipeline.trace.Recorder`.

The pipeline never raises to its caller, except for ``KeyboardInterrupt``
and ``asyncio.CancelledError``, which must reach the kernel and the task.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Literal, overload

from dsh_nb.tools.audit import journal
from dsh_nb.tools.audit.failure import failure_of
from dsh_nb.tools.context.binding import bind
from dsh_nb.tools.jsonvalue import ABSENT, NotJsonError, snapshot_json
from dsh_nb.tools.pipeline._callstate import CallState
from dsh_nb.tools.pipeline._decisions import (
    ACCEPT,
    ALLOW,
    apply_post,
    check_call_id,
    check_post,
    check_pre,
    check_result,
)
from dsh_nb.tools.pipeline._observers import notify
from dsh_nb.tools.pipeline.plan import CallPlan
from dsh_nb.tools.pipeline.results import (
    ARGS_NOT_JSON,
    FATAL,
    denial,
    error_result,
    finalize,
    materialize,
    not_json_result,
)
from dsh_nb.tools.pipeline.trace import Recorder
from dsh_nb.tools.pipeline.waterfall import run_waterfall
from dsh_nb.tools.values.execution import (
    Allow,
    Block,
    PreToolDecision,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    text_result,
)
from dsh_nb.tools.values.outcome import DONE, outcome_of
from dsh_nb.tools.values.run import ToolRun, settled_status

__all__ = ["execute", "run"]


PlanFor = Callable[[Any], CallPlan]
"""``plan_for(agent)``: the plan a call by ``agent`` runs (a registry's ``plan``)."""


def execute(
    plan_for: PlanFor, call: ToolExecutionInput
) -> Coroutine[Any, Any, ToolExecutionResult]:
    """Run one call through every stage; the result. Never raises."""
    return _drive(plan_for, call, False)


def run(plan_for: PlanFor, call: ToolExecutionInput) -> Coroutine[Any, Any, ToolRun]:
    """Like :func:`execute`, answering a :class:`ToolRun` (result + outcome)."""
    return _drive(plan_for, call, True)


@overload
def _drive(
    plan_for: PlanFor, call: ToolExecutionInput, want_run: Literal[False]
) -> Coroutine[Any, Any, ToolExecutionResult]: ...
@overload
def _drive(
    plan_for: PlanFor, call: ToolExecutionInput, want_run: Literal[True]
) -> Coroutine[Any, Any, ToolRun]: ...
async def _drive(
    plan_for: PlanFor, call: ToolExecutionInput, want_run: bool
) -> ToolExecutionResult | ToolRun:
    """Stages 0-9 in one coroutine frame (see the module doc).

    Each waterfall stage is one ``await`` of :func:`run_waterfall`: the
    engine's awaitable vets the value and, while tracing, notes who
    decided it in the recorder.
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
        ex._settle(outcome)
        ex._freeze()
        return ToolRun(result=final, outcome=outcome, execution=ex)
    ex = ToolExecution(
        call_id=call_id,
        name=name,
        arguments=ABSENT,
        agent=agent,
        parent=parent,
        signal=signal,
    )
    plan = plan_for(agent)
    tracers = plan.trace
    rec: Recorder | None = None
    state = CallState(plan, ex)
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
            ex._take_arguments(arguments)
            if session is not None:
                journal.record_call(session, call_id, name, arguments)
            # 2 pre-execute
            state.stage = "pre-execute"
            if tracers:
                rec = state.rec = Recorder()  # starts the clock
            decision: PreToolDecision = await run_waterfall(
                plan.pre_execute, (ex,), ALLOW, check_pre, rec
            )
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
                ex._open_wrappers()
                try:
                    with bind(ex):  # the call's ToolContext, for this stage
                        result = await run_waterfall(
                            plan.execute, (ex,), state.dispatch, check_result, who
                        )
                finally:
                    ex._close_wrappers()
                if rec is not None:
                    rec.end("execute", name, result)
                check_call_id(result, call_id)
                if not result.is_error:
                    status = "done"
                else:
                    status = settled_status(result)
            # 7 post-execute, on an immutable view
            if plan.post_execute:
                stage = state.stage
                state.stage = "post-execute"
                result = state.view(result)
                post = await run_waterfall(
                    plan.post_execute, (ex, result), ACCEPT, check_post, rec
                )
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
        outcome = DONE  # the common case, without building a key
    else:
        outcome = outcome_of(status, state.stage, state.approval, state.body_running)
    ex._settle(outcome)
    failure = None
    if state.raised is not None and final.is_error:
        failure = failure_of(state.raised)
        state.raised = None
    if session is not None:
        said = state.said if final is state.trusted else None
        journal.record_result(session, final, outcome, said, failure)
    # 9 observers
    ex._freeze()
    if tracers and rec is None:
        rec = Recorder()  # no stage ran: the trace is empty
    notify(ex, final, plan.result, tracers, rec)
    if want_run:
        return ToolRun(result=final, outcome=outcome, execution=ex, failure=failure)
    return final


def _cancel(state: CallState, session: Any, exc: BaseException) -> None:
    """An interrupt or a cancel ended the call: no result, but a record."""
    ex = state.execution
    ex._settle(outcome_of("cancelled", state.stage, state.approval))
    if session is not None:
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else "cancelled"
        journal.record_cancelled(session, ex.call_id, reason)
