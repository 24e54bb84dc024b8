"""Per-scope filters over the global tool layer, and registration checks.

A restriction is compiled once from the caller's names into frozensets, so
later changes to the caller's lists have no effect (contract §3.5), and
every name must be a currently registered global so a typo fails at once.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from dsh_nb.tools.errors import ToolDefinitionError

__all__ = ["Restriction"]


@dataclass(frozen=True, slots=True)
class Restriction:
    """One scope's allow/deny filter; several on one scope intersect."""

    allow: frozenset[str] | None
    deny: frozenset[str] | None

    def admits(self, name: str) -> bool:
        return (self.allow is None or name in self.allow) and (
            self.deny is None or name not in self.deny
        )

    @classmethod
    def compile(
        cls,
        allow: Iterable[str] | None,
        deny: Iterable[str] | None,
        *,
        known: Collection[str],
    ) -> Restriction:
        """Snapshot the lists; raise naming unknown globals and the known ones."""
        if allow is None and deny is None:
            raise ToolDefinitionError(
                "restrict() with neither allow nor deny is a no-op; "
                "pass allow=[...] and/or deny=[...]"
            )
        allow_list = _names(allow, "allow")
        deny_list = _names(deny, "deny")
        unknown = [n for n in (allow_list or []) + (deny_list or []) if n not in known]
        if unknown:
            raise ToolDefinitionError(_unknown_globals_message(unknown, known))
        return cls(
            None if allow_list is None else frozenset(allow_list),
            None if deny_list is None else frozenset(deny_list),
        )


def _names(names: Iterable[str] | None, label: str) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str):
        raise ToolDefinitionError(
            f"restrict({label}=...) takes a list of names, not the str {names!r}"
        )
    return list(names)


def _unknown_globals_message(unknown: list[str], known_names: Collection[str]) -> str:
    known = sorted(known_names)
    quoted = ", ".join(f'"{n}"' for n in unknown)
    noun = "tool" if len(unknown) == 1 else "tools"
    message = (
        f"unknown global {noun} {quoted}; "
        f"known global tools: {', '.join(known) if known else '(none)'}"
    )
    hints = [
        f'"{m[0]}"' for n in unknown if (m := difflib.get_close_matches(n, known, n=1))
    ]
    if hints:
        message += f" (did you mean {', '.join(hints)}?)"
    return message
