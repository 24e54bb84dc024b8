"""``PolicyMagics``: ``%tool_policy``, the table of per-tool policies.

The table is one pre-execute listener the kernel state installed
(:meth:`~dsh_nb.notebook.state.KernelState.apply_policy`); the magic only
edits and shows its rows.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class

from dsh_nb.cards.listing import Table
from dsh_nb.notebook.magics.args import argument, magic_arguments, parse_argstring
from dsh_nb.notebook.state import POLICIES, PolicyEntry, sample_subject

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.state import KernelState

__all__ = ["PolicyMagics"]


@magics_class
class PolicyMagics(Magics):
    """Set, list or clear what happens to each tool's calls."""

    def __init__(self, shell: InteractiveShell, state: KernelState) -> None:
        super().__init__(shell)
        self.state = state

    @magic_arguments()
    @argument("policy", nargs="?", help="allow, ask or deny")
    @argument("names", nargs="*", help="tool names")
    @argument("--clear", action="store_true", help="remove rows (all if no names)")
    @line_magic
    def tool_policy(self, line: str) -> Table:
        """Set, list or clear per-tool policies (one pre-execute listener).

        ``deny`` denies each call; ``ask`` routes it to the approval prompt;
        ``allow`` lets it through without asking other pre-execute
        listeners (guards still run).

        Examples
        --------
        ::

            %tool_policy deny shell rm
            %tool_policy ask search
            %tool_policy
            %tool_policy --clear search
        """
        args = parse_argstring(self.tool_policy, line, "%tool_policy")  # type: ignore[misc]
        table = self.state.policies
        if args.clear:
            names = ([args.policy] if args.policy else []) + args.names
            for name in names or list(table):
                self.state.clear_policy(name, everything=not names)
            return self._policy_table()
        if args.policy is None:
            return self._policy_table()
        policy = args.policy.lower()
        if policy not in POLICIES:
            close = difflib.get_close_matches(policy, POLICIES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UsageError(
                f"unknown policy {args.policy!r}{hint} (allow, ask or deny)"
            )
        if not args.names:
            raise UsageError(f"%tool_policy {policy} needs tool names: NAME...")
        for name in args.names:
            table[name] = PolicyEntry(policy=policy, source="%tool_policy")
        return self._policy_table()

    def _policy_table(self) -> Table:
        known = self.state.registry.view(self.state.agent)
        rows = []
        for name, entry in self.state.policies.items():
            tool, _, what = name.rpartition(":")
            if what == "sample" and name == sample_subject(tool):
                # A row for a tool's requests to the model, not a tool.
                note = f"the model requests of {tool!r}"
                if tool not in known:
                    note += " (not registered)"
            else:
                note = "" if name in known else "not registered"
            close = difflib.get_close_matches(name, list(known), n=1)
            if note == "not registered" and close:
                note += f"; did you mean {close[0]!r}?"
            source = entry.source
            if entry.agent is not None:
                source += f" (agent {entry.agent.name!r})"
                if entry.shadows is not None:
                    source += f"; otherwise {entry.shadows.policy}"
            rows.append((name, entry.policy, source, note))
        return Table("tool policies", ("tool", "policy", "set by", "note"), rows)
