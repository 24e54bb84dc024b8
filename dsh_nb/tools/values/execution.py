"""The values one tool call carries through the pipeline.

:class:`ToolExecution` is the only live object a listener sees. Its identity
fields are read-only for the whole call; ``signal`` is the one operational
field, writable only by a ``tools/execute`` wrapper while the call runs, so
the audit trail, the UI and the tool always agree on what ran.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

from dsh_nb.tools.errors import ToolErrorInfo
from dsh_nb.tools.jsonvalue import ABSENT, to_plain

if TYPE_CHECKING:
    from dsh_nb.tools.values.outcome import ToolOutcome
    from dsh_nb.tools.values.refs import AgentRef as Agent
    from dsh_nb.tools.values.refs import SignalRef as AbortSignal

__all__ = [
    "Accept",
    "Allow",
    "Ask",
    "Block",
    "Deny",
    "PostToolDecision",
    "PreToolDecision",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolExecutionToken",
    "text_result",
]


class ToolExecutionToken:
    """An opaque identity minted per call; compare with ``is`` only."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<ToolExecutionToken {id(self):#x}>"

    def __reduce__(self) -> Any:
        raise TypeError("a ToolExecutionToken never crosses a process boundary")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionInput:
    """What a caller hands to ``ToolRegistry.execute``."""

    call_id: str
    name: str
    arguments: Any
    agent: Agent | None = None
    parent: ToolExecutionToken | None = None
    signal: AbortSignal | None = None


_PHASE_RUNNING: Final = 0
_PHASE_WRAPPING: Final = 1
_PHASE_FROZEN: Final = 2


class ToolExecution:
    """One call as the pipeline sees it: identity plus the current signal."""

    __slots__ = (
        "_agent",
        "_arguments",
        "_call_id",
        "_name",
        "_outcome",
        "_parent",
        "_phase",
        "_signal",
        "_token",
    )
    _agent: Agent | None
    _arguments: Any
    _call_id: str
    _name: str
    _outcome: ToolOutcome | None
    _parent: ToolExecutionToken | None
    _phase: int
    _signal: AbortSignal | None
    _token: ToolExecutionToken

    def __init__(
        self,
        *,
        call_id: str,
        name: str,
        arguments: Any,
        agent: Agent | None,
        parent: ToolExecutionToken | None,
        signal: AbortSignal | None,
    ) -> None:
        init = object.__setattr__  # __setattr__ below refuses every name
        init(self, "_token", ToolExecutionToken())
        init(self, "_call_id", call_id)
        init(self, "_name", name)
        init(self, "_arguments", arguments)
        init(self, "_agent", agent)
        init(self, "_parent", parent)
        init(self, "_signal", signal)
        init(self, "_phase", _PHASE_RUNNING)
        init(self, "_outcome", None)

    @property
    def token(self) -> ToolExecutionToken:
        """This call's opaque identity; nested calls get it as ``parent``."""
        return self._token

    @property
    def call_id(self) -> str:
        return self._call_id

    @property
    def name(self) -> str:
        return self._name

    @property
    def arguments(self) -> Any:
        """The deep-frozen arguments, or ABSENT when they were not JSON."""
        return self._arguments

    @property
    def agent(self) -> Agent | None:
        return self._agent

    @property
    def parent(self) -> ToolExecutionToken | None:
        return self._parent

    @property
    def outcome(self) -> ToolOutcome | None:
        """What happened to the call; None until the pipeline has settled it.

        Result and trace observers read it; so does ``ToolRegistry.run``.
        """
        return self._outcome

    @property
    def signal(self) -> AbortSignal | None:
        """The signal the tool will see; wrappers may swap it (deadlines)."""
        return self._signal

    @signal.setter
    def signal(self, value: AbortSignal | None) -> None:
        self._check_signal_writable()
        object.__setattr__(self, "_signal", value)

    @signal.deleter
    def signal(self) -> None:
        self._check_signal_writable()
        object.__setattr__(self, "_signal", None)

    def _check_signal_writable(self) -> None:
        if self._phase != _PHASE_WRAPPING:
            where = "after the pipeline" if self._phase == _PHASE_FROZEN else "here"
            raise AttributeError(
                "execution.signal can only be changed by a tools/execute wrapper "
                f"before it calls next(), not {where}"
            )

    def __setattr__(self, name: str, value: object) -> None:
        if name == "signal":
            ToolExecution.signal.__set__(self, value)  # type: ignore[attr-defined]
            return
        raise AttributeError(f"ToolExecution.{name} is read-only")

    def __delattr__(self, name: str) -> None:
        if name == "signal":
            ToolExecution.signal.__delete__(self)  # type: ignore[attr-defined]
            return
        raise AttributeError(f"ToolExecution.{name} is read-only")

    # --- the pipeline's own changes, in the order a call goes through them.
    # Underscored: a listener never calls them; the stage driver does, and
    # nothing sets this object's attributes from outside.

    def _take_arguments(self, arguments: Any) -> None:
        """Stage 1: the arguments, now detached and deep-frozen."""
        object.__setattr__(self, "_arguments", arguments)

    def _open_wrappers(self) -> None:
        """Stage 6: ``tools/execute`` wrappers run; ``signal`` is writable."""
        object.__setattr__(self, "_phase", _PHASE_WRAPPING)

    def _close_wrappers(self) -> None:
        """Dispatch began, or the wrappers are done: ``signal`` is fixed again."""
        object.__setattr__(self, "_phase", _PHASE_RUNNING)

    def _settle(self, outcome: ToolOutcome) -> None:
        """Note what happened to the call, once the pipeline knows it."""
        object.__setattr__(self, "_outcome", outcome)

    def _freeze(self) -> None:
        """Stage 9: the call is over; nothing about it changes again."""
        object.__setattr__(self, "_phase", _PHASE_FROZEN)

    def __repr__(self) -> str:
        agent = f" agent={self._agent.name!r}" if self._agent is not None else ""
        return f"<ToolExecution {self._name!r} callId={self._call_id!r}{agent}>"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionResult:
    """The outcome of one call; ``execute()`` returns it deep-frozen."""

    call_id: str
    content: Sequence[Mapping[str, Any]]
    is_error: bool
    error: ToolErrorInfo | None = None
    additional_context: Any = None
    meta: Any = ABSENT

    def to_json(self) -> dict[str, Any]:
        """The wire form, with absent fields omitted."""
        out: dict[str, Any] = {
            "callId": self.call_id,
            "content": to_plain(self.content),
            "isError": self.is_error,
        }
        if self.error is not None:
            out["error"] = self.error.to_json()
        if self.additional_context is not None:
            out["additionalContext"] = to_plain(self.additional_context)
        if self.meta is not ABSENT:
            out["meta"] = to_plain(self.meta)
        return out

    @property
    def text(self) -> str:
        """The text blocks joined by newlines: what a model reads first."""
        return "\n".join(
            str(b.get("text", ""))
            for b in self.content
            if isinstance(b, Mapping) and b.get("type") == "text"
        )


def text_result(
    call_id: str, text: str, *, is_error: bool, error: ToolErrorInfo | None = None
) -> ToolExecutionResult:
    """One text block as a result; the shape every failure takes."""
    return ToolExecutionResult(
        call_id=call_id,
        content=[{"type": "text", "text": text}],
        is_error=is_error,
        error=error,
    )


@dataclass(frozen=True, slots=True)
class Allow:
    """Pre-execute: let the call through (guards still run)."""

    kind: ClassVar[str] = "allow"


@dataclass(frozen=True, slots=True)
class Deny:
    """Pre-execute: refuse the call; ``reason`` is what the model reads."""

    reason: str
    kind: ClassVar[str] = "deny"


@dataclass(frozen=True, slots=True)
class Ask:
    """Pre-execute: route the call through the approval seam."""

    reason: str | None = None
    kind: ClassVar[str] = "ask"


@dataclass(frozen=True, slots=True, kw_only=True)
class Accept:
    """Post-execute: keep the result, optionally replacing its content."""

    content: Sequence[Mapping[str, Any]] | None = None
    additional_context: Any = None
    kind: ClassVar[str] = "accept"


@dataclass(frozen=True, slots=True)
class Block:
    """Post-execute: turn the call into an error whose content is feedback."""

    feedback: Sequence[Mapping[str, Any]]
    additional_context: Any = None
    kind: ClassVar[str] = "block"


PreToolDecision = Allow | Deny | Ask
PostToolDecision = Accept | Block
