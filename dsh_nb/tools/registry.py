"""``ToolRegistry``: layers, scopes, restrictions, guards and listener seams.

A registration is a trusted same-process contract: the registry keeps the
caller's definition as-is and only checks what would make it unusable (a
bad ``timeout_ms``, a duplicate name). Everything visible to a scope goes
through one view rule (contract §3.4): globals admitted by every restriction
of the scope, then the scope's own tools replacing same-name globals in place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Literal

from dsh_nb.tools._disposer import Disposer
from dsh_nb.tools._restriction import Restriction
from dsh_nb.tools._scopes import ScopeMap
from dsh_nb.tools.audit.resultsize import MaxResultRows
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.errors import ToolDefinitionError, error_message
from dsh_nb.tools.jsonvalue import NotJsonError, snapshot_json, to_plain
from dsh_nb.tools.pipeline import driver
from dsh_nb.tools.pipeline.plan import (
    CallPlan,
    Registration,
    ResultObserver,
    Seam,
    ToolGuard,
    TraceObserver,
)
from dsh_nb.tools.pipeline.waterfall import ListenerList
from dsh_nb.tools.running.abort import is_positive_finite
from dsh_nb.tools.running.worker import worker_threads
from dsh_nb.tools.values.execution import (
    ToolExecutionInput,
    ToolExecutionResult,
)

if TYPE_CHECKING:
    from dsh_nb.tools.pipeline.approval import ApprovalService
    from dsh_nb.tools.running.daemonthreads import DaemonThreads
    from dsh_nb.tools.values.run import ToolRun

__all__ = ["ToolGuard", "ToolRegistry"]

_log = logging.getLogger("dsh_nb.tools")


class ToolRegistry:
    """Holds tools and listeners, and runs calls through the pipeline."""

    max_result_rows = MaxResultRows()  # rows of a table a model reads (default 100)

    def __init__(self, *, sync_tools: Literal["inline", "thread"] = "inline") -> None:
        """Make an empty registry.

        Parameters
        ----------
        sync_tools
            ``"inline"`` (the contract's behaviour) runs a sync tool body
            at once, on the caller's thread. ``"thread"`` runs it in a
            worker thread of ``registry.threads``, an executor of daemon
            threads (:mod:`dsh_nb.tools.running.worker`), so
            the event loop stays free while it runs, and a call whose
            signal aborts (a timeout) settles on time while the body
            finishes on its own. The notebook's registry uses ``"thread"``.
        """
        if sync_tools not in ("inline", "thread"):
            raise ValueError(
                f'sync_tools must be "inline" or "thread", not {sync_tools!r}'
            )
        self.threads: DaemonThreads | None = (
            worker_threads() if sync_tools == "thread" else None
        )
        self._globals: dict[str, ToolDefinition] = {}
        # Keyed by identity: two agents that compare equal are two scopes.
        self._scoped: ScopeMap[dict[str, ToolDefinition]] = ScopeMap()
        self._restrictions: ScopeMap[list[Restriction]] = ScopeMap()
        # Insertion-ordered dicts used as sets: O(1) add and dispose.
        self._global_guards: dict[_Entry, None] = {}
        self._scoped_guards: ScopeMap[dict[_Entry, None]] = ScopeMap()
        stale = self._forget_plan
        self._pre: ListenerList[Callable[..., Any]] = ListenerList(stale)
        self._execute: ListenerList[Callable[..., Any]] = ListenerList(stale)
        self._post: ListenerList[Callable[..., Any]] = ListenerList(stale)
        self._result: ListenerList[ResultObserver] = ListenerList(stale)
        self._trace: ListenerList[TraceObserver] = ListenerList(stale)
        self._plan: CallPlan | None = None
        self._global_guard_fns: tuple[ToolGuard, ...] | None = ()
        self._change: dict[_Entry, None] = {}
        self.approval: ApprovalService | None = None

    # --- tools

    def register(
        self, definition: ToolDefinition, scope: object | None = None
    ) -> Disposer:
        """Add a tool to the global layer or to ``scope``'s layer."""
        name = getattr(definition, "name", None)
        if not isinstance(name, str) or not name:
            raise ToolDefinitionError(
                f"a tool needs a non-empty str name; got {name!r} on {definition!r}"
            )
        if not callable(getattr(definition, "execute", None)):
            raise ToolDefinitionError(f'tool "{name}" has no callable execute')
        timeout_ms = getattr(definition, "timeout_ms", None)
        if timeout_ms is not None and not is_positive_finite(timeout_ms):
            raise ToolDefinitionError(
                f'tool "{name}" timeoutMs must be a positive finite number '
                f"(got {timeout_ms!r})"
            )
        if scope is None:
            if name in self._globals:
                raise ToolDefinitionError(
                    f'tool "{name}" is already registered; to give one agent its '
                    "own version, register it with register(defn, scope=agent)"
                )
            layer = self._globals
        else:
            layer = self._scoped.get(scope) or {}
            if name in layer:
                raise ToolDefinitionError(
                    f'tool "{name}" is already registered in this scope'
                )
            self._scoped[scope] = layer
        layer[name] = definition
        try:
            self._emit_change()
        except BaseException:
            self._unregister(name, scope, definition, quiet=True)
            raise
        return Disposer(lambda: self._unregister(name, scope, definition))

    def _unregister(
        self,
        name: str,
        scope: object | None,
        definition: ToolDefinition,
        *,
        quiet: bool = False,
    ) -> None:
        layer = self._globals if scope is None else self._scoped.get(scope)
        if layer is None or layer.get(name) is not definition:
            return
        del layer[name]
        if not layer:
            layer.clear()  # an emptied dict keeps its table until cleared
        if scope is not None and not layer:
            self._scoped.pop(scope)
        if quiet:
            try:
                self._emit_change()
            except Exception as exc:  # noqa: BLE001 - the first error wins
                _log.warning(
                    "tools/change listener failed on rollback: %s", error_message(exc)
                )
        else:
            self._emit_change()

    def get(self, name: str, scope: object | None = None) -> ToolDefinition | None:
        """The definition ``scope`` sees under ``name``, or None."""
        if scope is None or not (self._scoped or self._restrictions):
            return self._globals.get(name)
        layer = self._scoped.get(scope)
        if layer is not None:
            found = layer.get(name)
            if found is not None:
                return found
        definition = self._globals.get(name)
        if definition is None:
            return None
        for restriction in self._restrictions.get(scope) or ():
            if not restriction.admits(name):
                return None
        return definition

    def view(self, scope: object | None = None) -> dict[str, ToolDefinition]:
        """Every tool ``scope`` sees, in view order (contract §3.4)."""
        restrictions = (
            (self._restrictions.get(scope) or ()) if scope is not None else ()
        )
        out = {
            name: d
            for name, d in self._globals.items()
            if all(r.admits(name) for r in restrictions)
        }
        if scope is not None:
            out.update(self._scoped.get(scope) or {})
        return out

    def schemas(self, scope: object | None = None) -> list[dict[str, Any]]:
        """The model-facing projection: name, description, parameters only."""
        out = []
        for name, definition in self.view(scope).items():
            try:
                parameters = to_plain(snapshot_json(definition.parameters))
            except NotJsonError as exc:
                raise ToolDefinitionError(
                    f'tool "{name}" parameters are not lossless JSON: {exc}'
                ) from None
            out.append(
                {
                    "name": str(definition.name),
                    "description": str(definition.description),
                    "parameters": parameters,
                }
            )
        return out

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._globals

    def __len__(self) -> int:
        return len(self._globals)

    # --- restrictions and guards

    def restrict(
        self,
        scope: object | None,
        allow: Iterable[str] | None = None,
        deny: Iterable[str] | None = None,
    ) -> Disposer:
        """Filter the global layer for one scope; returns the lift."""
        if scope is None:
            raise ToolDefinitionError(
                "restrict() requires a scoped context: pass the agent as scope"
            )
        restriction = Restriction.compile(allow, deny, known=self._globals)
        self._restrictions.setdefault(scope, list).append(restriction)
        self._emit_change()

        def lift() -> None:
            entries = self._restrictions.get(scope) or []
            for i, r in enumerate(entries):
                if r is restriction:
                    del entries[i]
                    break
            if not entries:
                self._restrictions.pop(scope)
            self._emit_change()

        return Disposer(lift)

    def guard(self, fn: ToolGuard, scope: object | None = None) -> Disposer:
        """Add a final, monotonic deny check; it can never be overridden."""
        if not callable(fn):
            raise TypeError(f"guard must be callable, not {fn!r}")
        if scope is None:
            guards = self._global_guards
        else:
            guards = self._scoped_guards.setdefault(scope, dict)
        entry = _Entry(fn)
        guards[entry] = None
        self._global_guard_fns = None

        def remove() -> None:
            guards.pop(entry, None)
            if not guards:
                guards.clear()  # free the emptied table
            # Only the scope's current set: after dispose_scope the scope may
            # have a new one, whose guards this disposer must not drop.
            if not guards and self._scoped_guards.get(scope) is guards:
                self._scoped_guards.pop(scope)
            self._global_guard_fns = None

        return Disposer(remove)

    def guards_for(self, scope: object | None = None) -> tuple[ToolGuard, ...]:
        """The guards a call by ``scope`` must pass, as of now.

        The guard stage reads them when it runs, not when the call starts,
        so a guard added while a call awaits approval applies to it.
        """
        guards = self._global_guard_fns
        if guards is None:
            guards = self._global_guard_fns = tuple(g.fn for g in self._global_guards)
        if scope is not None and self._scoped_guards:
            scoped = self._scoped_guards.get(scope)
            if scoped:
                guards += tuple(g.fn for g in scoped)
        return guards

    # --- listener seams

    def on_pre_execute(
        self, fn: Callable[..., Any], scope: object | None = None, prepend: bool = False
    ) -> Disposer:
        """``fn(execution, next)`` returns Allow, Deny or Ask."""
        return self._pre.add(fn, scope=scope, prepend=prepend, seam="tools/pre-execute")

    def on_execute(
        self, fn: Callable[..., Any], scope: object | None = None, prepend: bool = False
    ) -> Disposer:
        """``fn(execution, next)`` wraps dispatch and returns a result."""
        return self._execute.add(fn, scope=scope, prepend=prepend, seam="tools/execute")

    def on_post_execute(
        self, fn: Callable[..., Any], scope: object | None = None, prepend: bool = False
    ) -> Disposer:
        """``fn(execution, result, next)`` returns Accept or Block."""
        return self._post.add(
            fn, scope=scope, prepend=prepend, seam="tools/post-execute"
        )

    def on_result(
        self, fn: ResultObserver, scope: object | None = None, prepend: bool = False
    ) -> Disposer:
        """``fn(execution, result)`` observes the frozen outcome, once per call."""
        return self._result.add(fn, scope=scope, prepend=prepend, seam="tools/result")

    def on_trace(
        self, fn: TraceObserver, scope: object | None = None, prepend: bool = False
    ) -> Disposer:
        """``fn(execution, result, records)``: who decided what, and how long.

        Tracing costs a clock read per stage, so it only runs while at least
        one trace observer is registered.
        """
        return self._trace.add(fn, scope=scope, prepend=prepend, seam="tools/trace")

    def on_change(
        self, fn: Callable[[], None], scope: object | None = None, prepend: bool = False
    ) -> Disposer:
        """``fn()`` after every register, unregister, restrict and lift.

        Unfiltered: every listener hears every change, whatever its scope.
        """
        if not callable(fn):
            raise TypeError(f"tools/change listener must be callable, not {fn!r}")
        entry = _Entry(fn)
        if prepend:
            self._change = {entry: None, **self._change}
        else:
            self._change[entry] = None

        def remove() -> None:
            self._change.pop(entry, None)
            if not self._change:
                self._change.clear()  # free the emptied table

        return Disposer(remove)

    def _emit_change(self) -> None:
        for entry in tuple(self._change):
            entry.fn()

    def dispose_scope(self, scope: object) -> None:
        """Drop every tool, restriction, guard and listener of ``scope``."""
        changed = self._scoped.pop(scope) is not None
        changed = self._restrictions.pop(scope) is not None or changed
        self._scoped_guards.pop(scope)
        for listeners in (self._pre, self._execute, self._post, self._result):
            listeners.drop_scope(scope)
        self._trace.drop_scope(scope)
        if changed:
            self._emit_change()

    # --- execution

    def plan(self, scope: object | None = None) -> CallPlan:
        """The listeners a call made by ``scope`` runs through, as of now.

        A call keeps the plan it started with (contract §4.4). While no
        listener is scoped every call shares one plan, kept until a
        listener is added or disposed.
        """
        plan = self._plan
        if plan is not None:
            return plan
        plan = CallPlan(
            pre_execute=self._pre.for_scope(scope),
            execute=self._execute.for_scope(scope),
            post_execute=self._post.for_scope(scope),
            result=self._result.for_scope(scope),
            trace=self._trace.for_scope(scope),
            lookup=self.get,
            guards=self.guards_for,
            approval=self._approval_now,
            threads=self.threads,
            max_result_rows=lambda: self.max_result_rows,
        )
        seams = (self._pre, self._execute, self._post, self._result, self._trace)
        if not any(seam.scoped for seam in seams):
            self._plan = plan
        return plan

    def _forget_plan(self) -> None:
        self._plan = None

    def _approval_now(self) -> ApprovalService | None:
        return self.approval  # an attribute callers set: read per call

    def registrations(self) -> tuple[Registration, ...]:
        """Every listener and guard, seam by seam, each seam in run order.

        Listeners come in waterfall order (a ``prepend`` already first),
        every scope's included; then the global guards, then each scope's.
        ``tools/change`` listeners are not part of a call and not listed.
        """
        seams: tuple[tuple[Seam, ListenerList[Any]], ...] = (
            ("pre_execute", self._pre),
            ("execute", self._execute),
            ("post_execute", self._post),
            ("result", self._result),
            ("trace", self._trace),
        )
        out = [
            Registration(seam=seam, fn=fn, scope=scope)
            for seam, listeners in seams
            for fn, scope in listeners.registrations()
        ]
        out += [Registration(seam="guard", fn=g.fn) for g in self._global_guards]
        for scope in list(self._scoped_guards.scopes()):
            for guard in self._scoped_guards.get(scope) or {}:
                out.append(Registration(seam="guard", fn=guard.fn, scope=scope))
        return tuple(out)

    def execute(
        self, call: ToolExecutionInput
    ) -> Coroutine[Any, Any, ToolExecutionResult]:
        """Run one call through the pipeline; never raises (contract §4.1).

        The stage driver's coroutine, handed this registry's :meth:`plan`.
        """
        return driver.execute(self.plan, call)

    def run(self, call: ToolExecutionInput) -> Coroutine[Any, Any, ToolRun]:
        """Run one call like :meth:`execute`; also say what happened.

        ``(await registry.run(call)).outcome`` is the call's ``ToolOutcome``
        (status, deciding stage, approval answer); ``.result`` is exactly
        what ``execute`` returns. Never raises, like ``execute``.
        """
        return driver.run(self.plan, call)

    def __repr__(self) -> str:
        tools, layers = len(self._globals), len(self._scoped)
        return f"<ToolRegistry {tools} global tools, {layers} scoped layers>"


class _Entry:
    """One guard or change listener; the same function twice is two entries."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
