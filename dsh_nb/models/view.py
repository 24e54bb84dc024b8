"""What a ``Chat`` tells whoever shows it, and what one step produced.

The loop knows nothing of cells: it reports streamed text, reasoning,
calls whose arguments are complete, notices and usage to a
:class:`ChatView`. Calls run through the chat's
:class:`~dsh_nb.tools.runner.CallRunner`, as every door's do; a view only
supplies how each call is shown (``call_view``), the notebook's a live card.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dsh_nb.models.usage import Usage
from dsh_nb.models.wire import ParsedCall
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.runner import CallView

__all__ = ["ChatReply", "ChatView", "Completion", "GuardedView"]

_log = logging.getLogger("dsh_nb.models")


@dataclass(frozen=True, slots=True, kw_only=True)
class Completion:
    """One model response, read into provider-neutral parts.

    ``message`` is the assistant message in the provider's wire form, as it
    goes back into the conversation.
    """

    text: str
    reasoning: str
    calls: tuple[ParsedCall, ...]
    message: dict[str, Any]
    usage: Usage
    finish: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatReply:
    """How one ``send`` ended.

    ``stop`` is ``"end"`` (the model answered in text), ``"max-steps"``,
    ``"length"`` (the model ran out of output tokens), ``"error"`` (see
    ``error``), ``"stopped"`` (an approval was cancelled, see ``error``).
    ``message`` is the final assistant message, wire form.
    """

    text: str
    stop: str
    steps: int
    usage: Usage
    message: Mapping[str, Any] | None = None
    error: str | None = None
    step_usage: tuple[Usage, ...] = field(default=())

    def __str__(self) -> str:
        return self.error if self.error is not None else self.text


class ChatView:
    """Receives a chat's progress; the base shows nothing.

    Every method is called on the event loop, in order. A view that raises
    is contained (see :class:`GuardedView`): its output is lost, the
    conversation is not.
    """

    def begin_step(self, step: int) -> None:
        """A request is about to go out."""

    def text(self, delta: str) -> None:
        """Assistant text arrived."""

    def reasoning(self, delta: str) -> None:
        """Reasoning (DeepSeek ``reasoning_content``, Anthropic thinking)."""

    def call_ready(self, call: ParsedCall) -> None:
        """A call's arguments are complete (it runs once the reply is)."""

    def abandon_calls(self, reason: str) -> None:
        """The reply failed: announced calls will not run."""

    def call_view(self, call: ParsedCall) -> CallView | None:
        """How ``call`` is shown while it runs; None leaves it to the runner."""
        return None

    def notice(self, text: str, *, kind: str) -> None:
        """A visible one-line message: ``error``, ``stop`` or ``policy``."""

    def end_step(self, step: int, usage: Usage) -> None:
        """The step's reply (and its calls, if any) are done."""

    def end(self, reply: ChatReply) -> None:
        """``send`` is over."""


class GuardedView(ChatView):
    """A view whose failures are logged, never raised into the loop.

    A display that breaks must not leave the conversation half-written:
    each method's exception is logged and dropped, and a call whose view
    cannot be built runs all the same (the runner contains a view that
    raises later).
    """

    def __init__(self, inner: ChatView) -> None:
        self.inner = inner
        # The step's calls announced so far: if the step fails, the chat
        # journals them (a fact), whatever the inner view draws.
        self.announced: list[ParsedCall] = []

    def _safe(self, name: str, *args: Any, **kwargs: Any) -> None:
        try:
            getattr(self.inner, name)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a view never breaks the loop
            _log.warning("chat view %s failed: %s", name, error_message(exc))

    def begin_step(self, step: int) -> None:
        self.announced.clear()
        self._safe("begin_step", step)

    def text(self, delta: str) -> None:
        self._safe("text", delta)

    def reasoning(self, delta: str) -> None:
        self._safe("reasoning", delta)

    def call_ready(self, call: ParsedCall) -> None:
        self.announced.append(call)
        self._safe("call_ready", call)

    def abandon_calls(self, reason: str) -> None:
        self._safe("abandon_calls", reason)

    def call_view(self, call: ParsedCall) -> CallView | None:
        try:
            return self.inner.call_view(call)
        except Exception as exc:  # noqa: BLE001 - the call runs, unshown
            _log.warning("chat view call_view failed: %s", error_message(exc))
            return None

    def notice(self, text: str, *, kind: str) -> None:
        self._safe("notice", text, kind=kind)

    def end_step(self, step: int, usage: Usage) -> None:
        self._safe("end_step", step, usage)

    def end(self, reply: ChatReply) -> None:
        self._safe("end", reply)
