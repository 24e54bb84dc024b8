"""One call's state as the stage driver's stages share it.

:mod:`dsh_nb.tools.pipeline.driver` drives the stages in order; this is what they
read and write on the way: stage 6's base (dispatching the tool, inline
or in a worker thread), stages 3-4 (the approval seam and the guards),
and the facts the call's outcome is read from (the deciding stage, the
approval answer, whether a body still runs).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Final, cast

from dsh_nb.tools.audit.resultsize import MAX_RESULT_ROWS
from dsh_nb.tools.errors import HarnessError, ListenerContractError, ToolNotFoundError
from dsh_nb.tools.jsonvalue import compact_json
from dsh_nb.tools.pipeline.results import (
    BODY_FATAL,
    error_result,
    finalize,
    freeze_if_json,
    settle,
)
from dsh_nb.tools.pipeline.waterfall import Ready, describe
from dsh_nb.tools.running import worker
from dsh_nb.tools.values.execution import (
    Ask,
    Deny,
    PreToolDecision,
    ToolExecution,
    ToolExecutionResult,
)

if TYPE_CHECKING:
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.pipeline.approval import ApprovalDecision
    from dsh_nb.tools.pipeline.plan import CallPlan
    from dsh_nb.tools.pipeline.trace import Recorder

__all__ = ["CallState"]

_OUTCOME_DENIALS: Final = {
    "rejected": 'the user rejected tool "{}"',
    # Not the contract's text: the policy decided and nobody was asked, so
    # the model and the card say so (the outcome stays "rejected").
    "policy": 'approval policy "never" rejects tool "{}"',
    "cancelled": 'approval for tool "{}" was cancelled',
    "unavailable": 'tool "{}" requires approval, but no approval channel is available',
}


class CallState:
    """Per-call state the stages share; avoids a dozen closures."""

    __slots__ = (
        "body_running",
        "decision",
        "execution",
        "plan",
        "raised",
        "rec",
        "said",
        "stage",
        "trusted",
    )

    def __init__(self, plan: CallPlan, execution: ToolExecution) -> None:
        self.plan = plan
        self.execution = execution
        self.rec: Recorder | None = None  # the trace, once stage 2 starts
        self.stage = "arguments"
        self.decision: ApprovalDecision | None = None  # the service's, if asked
        self.body_running = False  # a worker thread still runs the body
        # The result dispatch built already frozen; a wrapper that passes it
        # on unchanged saves the pipeline from copying it again.
        self.trusted: ToolExecutionResult | None = None
        # The tool's own str return while ``trusted`` is the result built
        # from it (one text block, nothing else): the journal then need not
        # inspect the result.
        self.said: str | None = None
        # What the body raised, for the people who debug it (never a model).
        self.raised: BaseException | None = None

    @property
    def approval(self) -> str | None:
        """The approval outcome, when the approval service was asked."""
        decision = self.decision
        return None if decision is None else decision.outcome

    # --- stage 6's base

    def dispatch(self) -> Awaitable[ToolExecutionResult]:
        """Run the tool at once, as the reference's promise does.

        A sync tool settles here and comes back as a ready awaitable, so the
        common call needs no coroutine for dispatch at all.
        """
        ex = self.execution
        call_id = ex.call_id
        ex._close_wrappers()  # the body runs: the signal is fixed
        # The body turns its value into a result (a table cut to the rows):
        # set for a sync body and the worker thread's copied context.
        rows = MAX_RESULT_ROWS.set(self.plan.max_result_rows())
        try:
            plan = self.plan
            tool = plan.lookup(ex.name, ex.agent)
            if tool is None:
                raise ToolNotFoundError(ex.name)
            threads = plan.threads
            if threads is not None and not worker.is_async(tool.execute):
                body = worker.run_sync(
                    threads, ex.signal, tool.execute, ex.arguments, ex
                )
                return self.settle_async(body)
            out = tool.execute(ex.arguments, ex)
            if hasattr(out, "__await__"):
                return self.settle_async(out)
        except BODY_FATAL:
            ex._open_wrappers()
            raise
        except BaseException as exc:  # noqa: BLE001 - every tool failure is a result
            self.note_raised(exc)
            result = self.keep(freeze_if_json(error_result(call_id, exc)))
        else:
            result = self.keep(settle(call_id, out), out)
        finally:
            MAX_RESULT_ROWS.reset(rows)
        ex._open_wrappers()
        return Ready(result)

    async def settle_async(self, pending: Awaitable[object]) -> ToolExecutionResult:
        ex = self.execution
        call_id = ex.call_id
        rows = MAX_RESULT_ROWS.set(self.plan.max_result_rows())  # an async body
        try:
            out = await pending
        except BODY_FATAL:
            raise
        except worker.Abandoned as exc:
            self.body_running = True
            return self.keep(freeze_if_json(error_result(call_id, exc)))
        except BaseException as exc:  # noqa: BLE001 - every tool failure is a result
            self.note_raised(exc)
            return self.keep(freeze_if_json(error_result(call_id, exc)))
        else:
            return self.keep(settle(call_id, out), out)
        finally:
            MAX_RESULT_ROWS.reset(rows)
            ex._open_wrappers()

    def note_raised(self, exc: BaseException) -> None:
        """Keep what a body raised; not the pipeline's own routed errors
        (bad arguments, an unknown tool, a timeout), whose code says it all."""
        if not isinstance(exc, HarnessError):
            self.raised = exc

    def keep(
        self, settled: tuple[ToolExecutionResult, bool], out: object = None
    ) -> ToolExecutionResult:
        """Note a dispatched result that is already frozen (see ``trusted``).

        ``out`` is what the tool returned, when ``settled`` was built from
        it: a plain ``str`` is kept as ``said``.
        """
        result, frozen = settled
        if frozen:
            self.trusted = result
            if type(out) is str:
                self.said = out
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
        guards = self.plan.guards(ex._agent)
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
        from dsh_nb.tools.pipeline.approval import (
            OUTCOMES,
            ApprovalDecision,
            ApprovalRequest,
            consult,
        )

        ex = self.execution
        service = self.plan.approval()
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
            # The scope the caller named; answerers read it as an Agent.
            agent=cast("Agent", ex.agent),
            tool_name=ex.name,
            call_id=ex.call_id,
            reason=decision.reason,
            signal=ex.signal,
        )
        answer = await consult(service, request)
        outcome: object = getattr(answer, "outcome", answer)
        if type(answer) is ApprovalDecision and type(outcome) is str:
            if outcome in OUTCOMES:
                self.decision = answer
                if outcome == "allowed-once":
                    return None
                # The text follows how the service says it decided.
                how = "policy" if answer.decided_by == "policy" else outcome
                return _OUTCOME_DENIALS[how].format(ex.name)
        try:
            shown = compact_json(outcome)
        except (TypeError, ValueError):
            shown = repr(outcome)
        raise RuntimeError(f"unreachable variant in ApprovalOutcome: {shown}")
