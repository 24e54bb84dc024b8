"""What a registry holds besides tools: its listeners and guards, in order.

The export rebuilds a registry by replaying its registrations, so it reads
the seams the way a call sees them: each seam's listeners in waterfall
order (a ``prepend`` already put its listener first), each with its scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from dsh_nb.tools._waterfall import ListenerList
    from dsh_nb.tools.registry import ToolRegistry

__all__ = ["SEAMS", "Hook", "Seam", "registry_hooks"]

Seam = Literal["pre_execute", "execute", "post_execute", "result", "trace", "guard"]
SEAMS: Final[dict[str, str]] = {
    "pre_execute": "registry.on_pre_execute",
    "execute": "registry.on_execute",
    "post_execute": "registry.on_post_execute",
    "result": "registry.on_result",
    "trace": "registry.on_trace",
    "guard": "registry.guard",
}


@dataclass(frozen=True, slots=True)
class Hook:
    """One registration on a seam: the listener (or guard) and its scope."""

    seam: Seam
    fn: object
    scope: object | None = None

    @property
    def label(self) -> str:
        """``pre-execute listener no_rm``, for messages."""
        name = getattr(self.fn, "__qualname__", None) or type(self.fn).__name__
        kind = "guard" if self.seam == "guard" else f"{self.seam} listener"
        return f"{kind.replace('_', '-')} {name}"


def registry_hooks(registry: ToolRegistry) -> list[Hook]:
    """Every listener and guard of ``registry``, seam by seam, in order."""
    out: list[Hook] = []
    lists: tuple[tuple[Seam, ListenerList[Any]], ...] = (
        ("pre_execute", registry._pre),
        ("execute", registry._execute),
        ("post_execute", registry._post),
        ("result", registry._result),
        ("trace", registry._trace),
    )
    for seam, listeners in lists:
        for entry in listeners._entries:
            out.append(Hook(seam, entry.fn, entry.scope))
    for guard in registry._global_guards:
        out.append(Hook("guard", guard.fn))
    scoped = registry._scoped_guards
    for scope in list(scoped.scopes()):
        for guard in scoped.get(scope) or {}:
            out.append(Hook("guard", guard.fn, scope))
    return out
