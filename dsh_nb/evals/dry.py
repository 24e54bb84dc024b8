"""How an evaluation runs its calls: through the registry, bodies optional.

An evaluation is a door like the others: each trial's ``Chat`` runs its
calls through one :class:`~dsh_nb.tools.runner.CallRunner` on the registry
the run uses, as its own :class:`~dsh_nb.tools.audit.session.Agent`, so every
policy, guard, listener and timeout of that registry applies, and only the
tools a request offered may run. :class:`TrialCalls` adds two things, for the
run's trial agents only (any other caller of the registry is passed on
untouched):

- with ``execute="dry"``, the innermost ``tools/execute`` wrapper checks
  the arguments with the tool's own check (an ``INVALID_ARGS`` result goes
  back to the model as usual) and answers a stub instead of running the
  body;
- with ``execute="dry"``, an approval a policy asks for is answered
  ``allowed-once`` (nothing runs, and no person should be asked a thousand
  times); a ``"never"`` policy still rejects. With ``execute="real"`` the
  registry's own answerers decide, as for any other call.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Final

from dsh_nb.evals.answers import Answers, ScriptedAnswers
from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.errors import ToolArgsError
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.runner import CallRunner
from dsh_nb.tools.schema.argcheck import ArgumentCheck, argument_check
from dsh_nb.tools.values.execution import (
    ToolExecution,
    ToolExecutionResult,
    text_result,
)

__all__ = ["EXECUTE_MODES", "STUB", "TrialCalls"]

EXECUTE_MODES: Final = ("dry", "real")
#: What a tool answers in a dry run.
STUB: Final = "ok (dry run: the tool was not run)"


class TrialCalls:
    """The run's hooks on one registry; :meth:`close` takes them away."""

    def __init__(self, registry: ToolRegistry, execute: str) -> None:
        if execute not in EXECUTE_MODES:
            raise ValueError(f'execute must be "dry" or "real", not {execute!r}')
        self.registry = registry
        #: The runner every trial's calls go through (no view: no cards).
        self.runner = CallRunner(registry)
        self.execute = execute
        self._agents: weakref.WeakSet[Agent] = weakref.WeakSet()
        self._checks: dict[int, tuple[object, ArgumentCheck]] = {}
        self._disposers: list[Callable[[], object]] = []
        if execute == "dry":
            # Appended: the innermost wrapper, inside timeouts and the rest.
            self._disposers.append(registry.on_execute(self._dry))
            if registry.approval is not None:
                self._disposers.append(
                    registry.approval.on_request(self._allow, prepend=True)
                )

    def runner_for(self, answers: Answers | None) -> CallRunner:
        """The runner of a case's trials: :attr:`runner`, or one that answers.

        A case's scripted answers are the ``talk`` of a runner of its own on
        the same registry, so the run's hooks (dry run, checks) still apply.
        """
        if answers is None:
            return self.runner
        return CallRunner(self.registry, talk=ScriptedAnswers(answers))

    def agent(self, name: str) -> Agent:
        """A fresh trial agent whose calls this run handles."""
        agent = Agent(name)
        self._agents.add(agent)
        return agent

    def release(self, agent: Agent) -> None:
        """The trial is over: its agent's calls are no longer the run's.

        Nothing is registered on a trial agent's behalf (the hooks are the
        run's, filtered by agent), so there is no scope to dispose.
        """
        self._agents.discard(agent)

    def close(self) -> None:
        """Remove the run's hooks (idempotent)."""
        disposers, self._disposers = self._disposers, []
        for dispose in reversed(disposers):
            dispose()

    def _check(self, definition: object) -> ArgumentCheck:
        key = id(definition)
        known = self._checks.get(key)
        if known is not None and known[0] is definition:
            return known[1]
        check = argument_check(definition)  # type: ignore[arg-type]
        self._checks[key] = (definition, check)
        return check

    def _dry(
        self,
        execution: ToolExecution,
        next_: Callable[[], Awaitable[ToolExecutionResult]],
    ) -> Any:
        agent = execution.agent
        if agent is None or agent not in self._agents:
            return next_()
        definition = self.registry.get(execution.name, agent)
        if definition is None:
            return next_()  # the pipeline's own UNKNOWN_TOOL
        violations = self._check(definition)(execution.arguments)
        if violations:
            raise ToolArgsError(violations)
        return text_result(execution.call_id, STUB, is_error=False)

    def _allow(self, request: Any, next_: Callable[[], Awaitable[object]]) -> Any:
        if request.agent in self._agents:
            return "allowed-once"
        return next_()
