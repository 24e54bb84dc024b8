"""What the values floor needs of an agent and of an abort signal.

A call's values name the agent that made the call and the signal that
may stop it, but both live above the floor (:class:`~dsh_nb.tools.audit.
session.Agent`, :class:`~dsh_nb.tools.running.abort.AbortSignal`). These
Protocols say what the floor relies on, so the floor imports nothing
above itself; the real classes satisfy them as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from dsh_nb.tools._disposer import Disposer

__all__ = ["AgentRef", "SignalRef"]


class AgentRef(Protocol):
    """A scope: compared by identity, named, with a session log."""

    @property
    def name(self) -> str: ...

    @property
    def cwd(self) -> str | None: ...

    @property
    def session(self) -> Any: ...


class SignalRef(Protocol):
    """An abort signal: notifies once, with a reason, and can be awaited."""

    @property
    def aborted(self) -> bool: ...

    @property
    def reason(self) -> BaseException | object | None: ...

    def add_callback(self, fn: Callable[[Any], object]) -> Disposer: ...

    def throw_if_aborted(self) -> None: ...

    def __await__(self) -> Generator[Any, None, object]: ...
