"""``KernelHost``: what the kernel's runner and its cards read from the kernel.

The kernel state builds the runner, and the runner builds the live cards;
each is handed the state. They see it through this Protocol, so neither
imports the state that imports them: the notebook's modules form no
circle, type-only imports included.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.config import DshConfig
    from dsh_nb.tools.audit.session import Agent
    from dsh_nb.tools.presenter import ToolPresenter
    from dsh_nb.tools.registry import ToolRegistry
    from dsh_nb.tools.runner import CallRunner

__all__ = ["KernelHost"]


class KernelHost(Protocol):
    """The parts of ``KernelState`` a card, a question or the runner uses."""

    @property
    def shell(self) -> InteractiveShell | None: ...
    @property
    def config(self) -> DshConfig: ...
    @property
    def registry(self) -> ToolRegistry: ...
    @property
    def presenter(self) -> ToolPresenter: ...
    @property
    def agent(self) -> Agent: ...
    @property
    def runner(self) -> CallRunner: ...
    @property
    def live_calls(self) -> MutableMapping[str, Any]: ...
    @property
    def pending_approvals(self) -> Mapping[str, Any]: ...
