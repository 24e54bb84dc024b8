"""``KernelState``: what the extension installed in one kernel.

One object holds the kernel-wide registry, the default agent, the config,
the policy table, the live calls and every disposer, so ``%unload_ext``
undoes exactly what ``%load_ext`` did. The policy table is one pre-execute
listener; the ``running`` status and the card's trace come from one
``tools/execute`` wrapper and one trace observer.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.notebook.kernelrunner import KernelRunner
from dsh_nb.notebook.nesting import check_depth, run_enclosed
from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.pipeline.approval import ApprovalService
from dsh_nb.tools.presenter import ToolPresenter
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.running.timeout import TimeoutPolicy
from dsh_nb.tools.schema.argcheck import own_check
from dsh_nb.tools.values.execution import Allow, Ask, Deny

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.config import DshConfig
    from dsh_nb.notebook.live import LiveCall
    from dsh_nb.notebook.stdin import KernelStdin
    from dsh_nb.tools import Disposer
    from dsh_nb.tools.definition import ToolDefinition
    from dsh_nb.tools.pipeline.trace import TraceRecord
    from dsh_nb.tools.running.abort import AbortSignal
    from dsh_nb.tools.values.execution import (
        PreToolDecision,
        ToolExecution,
        ToolExecutionResult,
    )

__all__ = [
    "sample_subject",
    "POLICIES",
    "SESSION_SOURCE",
    "KernelState",
    "PolicyEntry",
    "ToolCell",
    "policy_decision",
]

POLICIES: Final = ("allow", "ask", "deny")


def sample_subject(tool_name: str) -> str:
    """What a tool's requests to the model are named as an approval and a
    policy row (``TOOL:sample``): a row of their own, since allowing a tool
    to run is not allowing it to spend."""
    return f"{tool_name}:sample"


SESSION_SOURCE: Final = "Allow for this session"


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyEntry:
    """One row of the policy table: what to do with a tool, and who said so.

    A row with an ``agent`` applies to that agent's calls only (an *Allow for
    this session* answer); other agents get the row it ``shadows``, which
    comes back when it is cleared.
    """

    policy: str
    source: str
    agent: Agent | None = None
    shadows: PolicyEntry | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCell:
    """What a ``%%tool`` cell made, kept for ``%tools export``.

    ``found`` is what the cell bound (a function, or a ``ToolDefinition``
    its author built), ``definition`` the tool registered from it, and
    ``source`` the cell's body as it ran, in case the history loses it.
    """

    found: object
    definition: ToolDefinition
    description: str | None
    timeout_ms: float | None
    coerce: bool
    source: str
    number: int


class KernelState:
    """Everything the extension installed in one kernel, so unload can undo it."""

    def __init__(self, shell: InteractiveShell | None, config: DshConfig) -> None:
        self.shell = shell
        self.config = config
        # Sync tool bodies run in worker threads: the kernel's loop stays
        # free for approvals, other cells' calls and servers meanwhile.
        self.registry = ToolRegistry(sync_tools="thread")
        self.registry.approval = ApprovalService(policy=config.approval_policy)
        self.registry.max_result_rows = config.max_result_rows
        config.registry = self.registry
        self.agent = Agent("notebook", cwd=os.getcwd())
        config.session = self.agent.session
        self.agent.session.max_result_bytes = config.max_result_bytes
        self.presenter = ToolPresenter(self.registry)
        self.runner = KernelRunner(self)
        self.live_calls: dict[str, LiveCall] = {}
        self.pending_approvals: dict[str, Any] = {}
        self.stdin: KernelStdin | None = None  # set where the kernel has stdin
        self.policies: dict[str, PolicyEntry] = {}
        self.tools: dict[str, Disposer] = {}
        self.tool_cells: dict[str, ToolCell] = {}  # what %tools export reads
        self.listeners: dict[tuple[str, str, int], Disposer] = {}
        self.disposers: list[Callable[[], object]] = []
        self._timeout: Disposer | None = None

    def install(self) -> None:
        """Add the policy table, the status and trace hooks, the timeout policy."""
        reg = self.registry
        self.disposers.append(reg.on_pre_execute(self.apply_policy))
        self.disposers.append(reg.on_execute(self._mark_running, prepend=True))
        # First in line, so a call nested too deep never reaches a policy or
        # an approval prompt.
        depth = check_depth(lambda: self.config.max_call_depth)
        self.disposers.append(reg.on_pre_execute(depth, prepend=True))
        self.disposers.append(reg.on_trace(self._record_trace))
        self._install_timeout(self.config.default_timeout_ms)
        self.config.observe(self._timeout_changed, names=["default_timeout_ms"])
        self.disposers.append(
            lambda: self.config.unobserve(
                self._timeout_changed, names=["default_timeout_ms"]
            )
        )

    def dispose(self) -> None:
        """Undo everything :meth:`install` and the loader added."""
        for undo in reversed(self.disposers):
            undo()
        self.disposers.clear()
        if self._timeout is not None:
            self._timeout()
            self._timeout = None
        for undo in (*self.tools.values(), *self.listeners.values()):
            undo()
        self.tools.clear()
        self.tool_cells.clear()
        self.listeners.clear()
        if self.registry.threads is not None:
            # Queued bodies never start; a running one is not waited for.
            self.registry.threads.shutdown(wait=False, cancel_futures=True)
        self.config.session = None

    def _install_timeout(self, default_ms: float | None) -> None:
        # The new policy is built before the old one goes: a value it refuses
        # leaves the deadline in force (a transaction, not a gap).
        policy = TimeoutPolicy(default_timeout_ms=default_ms)
        previous, self._timeout = self._timeout, policy.install(self.registry)
        if previous is not None:
            previous()

    def _timeout_changed(self, change: Any) -> None:
        self._install_timeout(change["new"])

    # --- hooks on the registry -------------------------------------------------

    def policy_for(self, name: str, agent: object) -> PolicyEntry | None:
        """The policy-table row that applies to ``agent``'s ``name``, if any."""
        entry = self.policies.get(name)
        while entry is not None and entry.agent is not None:
            if entry.agent is agent:
                break
            entry = entry.shadows
        return entry

    def apply_policy(self, execution: ToolExecution, next_: Any) -> Any:
        """The ``%tool_policy`` table as one pre-execute listener."""
        entry = self.policy_for(execution.name, execution.agent)
        if entry is None:
            return next_()
        if entry.policy == "ask" and self._refused_arguments(execution):
            # Nobody is asked to approve a call the tool will refuse: it goes
            # on, fails with INVALID_ARGS, and the model learns why.
            return next_()
        return policy_decision(entry.policy, execution.name)

    def _refused_arguments(self, execution: ToolExecution) -> bool:
        """Whether the tool's own check refuses this call's arguments.

        Only a tool that ``define_tool`` or ``@tool`` built has a check of
        its own, the one its dispatch runs; any other tool is asked about
        as before (its arguments reach it unchecked).
        """
        definition = self.registry.get(execution.name, execution.agent)
        check = None if definition is None else own_check(definition)
        if check is None:
            return False
        try:
            return bool(check(execution.arguments))
        except Exception:  # noqa: BLE001 - a check that breaks: ask, to be safe
            return False

    def allow_for_session(
        self, tool_name: str, agent: Agent, call_id: str | None
    ) -> None:
        """Allow ``tool_name`` for ``agent`` from now on; journal the rule.

        What *Allow for this session* adds: a row in the policy table that
        ``%tool_policy`` lists and ``%tool_policy --clear NAME`` removes.
        """
        previous = self.policies.get(tool_name)
        self.policies[tool_name] = PolicyEntry(
            policy="allow", source=SESSION_SOURCE, agent=agent, shadows=previous
        )
        event: dict[str, Any] = {
            "toolName": tool_name,
            "rule": "allow",
            "scope": "session",
            "agent": agent.name,
        }
        if call_id is not None:
            event["callId"] = call_id
        agent.session.append("approval/rule", event)

    def clear_policy(self, tool_name: str, *, everything: bool = False) -> None:
        """Remove ``tool_name``'s row; a session allow gives back what it hid.

        With ``everything``, the hidden rows go too.
        """
        entry = self.policies.pop(tool_name, None)
        if entry is not None and entry.shadows is not None and not everything:
            self.policies[tool_name] = entry.shadows
        if entry is not None and entry.agent is not None:
            entry.agent.session.append(
                "approval/rule",
                {"toolName": tool_name, "rule": "cleared", "agent": entry.agent.name},
            )

    async def _mark_running(
        self, execution: ToolExecution, next_: Any
    ) -> ToolExecutionResult:
        """Show ``running``; run the body as the enclosing call of its calls."""
        live = self.live_calls.get(execution.call_id)
        if live is not None:
            live._mark_running()
        return await run_enclosed(execution, next_)

    def _record_trace(
        self,
        execution: ToolExecution,
        result: ToolExecutionResult,
        records: Sequence[TraceRecord],
    ) -> None:
        live = self.live_calls.get(execution.call_id)
        if live is not None:
            live._record_trace(records)

    # --- calls -------------------------------------------------------------------

    def new_call(
        self,
        name: str,
        arguments: Any,
        *,
        call_id: str | None = None,
        agent: Agent | None = None,
        signal: AbortSignal | None = None,
        door: str = "cell",
    ) -> LiveCall:
        """Create the live card of one call (the runner makes it); ``.show()``."""
        return self.runner.new_call(
            name, arguments, call_id=call_id, agent=agent, signal=signal, door=door
        )


def policy_decision(policy: str, name: str) -> PreToolDecision:
    """The pre-execute decision a ``%tool_policy`` row stands for."""
    if policy == "deny":
        return Deny(f'tool "{name}" is denied by %tool_policy')
    if policy == "ask":
        return Ask(f"policy: ask for {name}")
    return Allow()
