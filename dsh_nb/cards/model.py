"""The values a card is rendered from: the call's state and the size limits."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.tools.presentation import (
    DiffCallView,
    DiffResultView,
    GenericCallView,
    GenericResultView,
    TerminalCallView,
    TerminalResultView,
    ToolCallView,
    ToolResultView,
)
from dsh_nb.tools.values.outcome import STATUSES as CORE_STATUSES
from dsh_nb.tools.values.outcome import ToolOutcome

if TYPE_CHECKING:
    from dsh_nb.tools.audit.failure import Failure

__all__ = [
    "CALL_VIEWS",
    "CARD_MIME",
    "RESULT_VIEWS",
    "STATUSES",
    "card_status",
    "classify",
    "CardLimits",
    "CardModel",
    "TraceEntry",
]

CARD_MIME: Final = "application/vnd.dsh.tool-card+json"
"""The MIME type of a card's JSON render intent (see :func:`render_card`)."""


def card_status(status: str) -> str:
    """The card's name for a core status: the card says ``timed-out``."""
    return "timed-out" if status == "timeout" else status


def classify(outcome: ToolOutcome) -> str:
    """A finished call's card status: the core's outcome, named for cards."""
    return card_status(outcome.status)


#: A card's statuses: the three a live call passes through, then the core's
#: final ones (:data:`dsh_nb.tools.values.outcome.STATUSES`) in the card's words.
STATUSES: Final = (
    "pending",
    "awaiting-approval",
    "running",
    *(card_status(s) for s in CORE_STATUSES),
)
CALL_VIEWS: Final = (GenericCallView, TerminalCallView, DiffCallView)
RESULT_VIEWS: Final = (GenericResultView, TerminalResultView, DiffResultView)


def _hint(value: str, choices: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(value, choices, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceEntry:
    """One pipeline stage's say on a call, shown in the card's trace.

    ``duration_ms`` is volatile: it goes to the display metadata only, so the
    rendered HTML and JSON stay byte-identical across runs.
    """

    stage: str
    actor: str
    decision: str
    duration_ms: float | None = None

    @classmethod
    def of_records(cls, records: Iterable[Any]) -> tuple[TraceEntry, ...]:
        """Entries for the pipeline's trace records (``TraceRecord``)."""
        return tuple(
            cls(
                stage=r.stage,
                actor=r.actor,
                decision=r.decision,
                duration_ms=round(r.duration_ms, 3),
            )
            for r in records
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CardLimits:
    """Bound what a card renders so one huge result cannot stall the page.

    Parameters
    ----------
    max_output_lines
        Terminal lines shown before the rest collapses behind "show all".
    max_output_chars
        Hard cap on terminal output and on each content block; the excess is
        dropped with a notice.
    max_diff_lines
        Diff rows rendered per card before truncating with a notice.
    max_diff_bytes
        Size of one file's old or new text (UTF-8) above which it is not
        diffed at all.
    max_fallback_diff_lines
        Diff rows the static fallbacks (HTML, Markdown) draw. JupyterLab
        renders the card's JSON, which keeps up to ``max_diff_lines``;
        the fallbacks serve VS Code, nbviewer and GitHub, and a saved
        notebook would otherwise carry every row three times.
    """

    max_output_lines: int = 40
    max_output_chars: int = 200_000
    max_diff_lines: int = 2_000
    max_diff_bytes: int = 2_000_000
    max_fallback_diff_lines: int = 200

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if type(value) is not int or value < 1:
                raise ValueError(
                    f"CardLimits.{f.name} must be a positive int; got {value!r}"
                )


@dataclass(frozen=True, slots=True, kw_only=True)
class CardModel:
    """Everything a card shows about one tool call.

    Parameters
    ----------
    tool
        The tool's name.
    call_id
        The call's id; carried in the JSON payload, never rendered.
    status
        One of :data:`STATUSES`.
    call, result
        The call view (pending state) and the result view (completed state).
    is_error
        Whether the result is an error result.
    trace
        The stages that decided on the call, in order.
    cwd
        The session's working folder; file-card titles are made relative to it.
    approval
        The approval outcome, if the call asked for one.
    meta
        Volatile data (ids, timestamps, durations): display metadata only.
    talk
        What the call said while it ran (progress, log lines), if anything:
        a :class:`~dsh_nb.cards.talk.CardTalk`.
    failure
        What the tool's body raised (type, message, bounded traceback),
        drawn folded under the result; a model never reads it.
    """

    tool: str
    call_id: str | None = None
    status: str = "done"
    call: ToolCallView | None = None
    result: ToolResultView | None = None
    is_error: bool = False
    trace: tuple[TraceEntry, ...] = ()
    cwd: str | None = None
    approval: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    talk: Any = None
    failure: Failure | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tool, str):
            raise TypeError(f"CardModel.tool must be a str; got {self.tool!r}")
        if self.status not in STATUSES:
            raise ValueError(
                f"CardModel.status must be one of {', '.join(STATUSES)}; "
                f"got {self.status!r}{_hint(str(self.status), STATUSES)}"
            )
        if self.call is not None and not isinstance(self.call, CALL_VIEWS):
            raise TypeError(
                f"CardModel.call must be a call view (GenericCallView, "
                f"TerminalCallView or DiffCallView); got {self.call!r}"
            )
        if self.result is not None and not isinstance(self.result, RESULT_VIEWS):
            raise TypeError(
                f"CardModel.result must be a result view (GenericResultView, "
                f"TerminalResultView or DiffResultView); got {self.result!r}"
            )
        trace = tuple(self.trace)
        for entry in trace:
            if not isinstance(entry, TraceEntry):
                raise TypeError(
                    f"CardModel.trace must hold TraceEntry values; got {entry!r}"
                )
        object.__setattr__(self, "trace", trace)
        object.__setattr__(self, "meta", dict(self.meta))
