"""What a registry holds besides tools: its listeners and guards, in order.

The export rebuilds a registry by replaying its registrations, so it reads
them the way a call sees them, from
:meth:`~dsh_nb.tools.registry.ToolRegistry.registrations`: each seam's
listeners in waterfall order (a ``prepend`` already put its listener
first), each with its scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from dsh_nb.tools.pipeline.plan import Seam

if TYPE_CHECKING:
    from dsh_nb.tools.registry import ToolRegistry

__all__ = ["SEAMS", "Hook", "Seam", "registry_hooks"]

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
    return [Hook(r.seam, r.fn, r.scope) for r in registry.registrations()]
