"""What a running evaluation tells whoever watches it.

``run_eval`` reports to an :class:`EvalProgress`: the number of trials at
the start, each finished trial, and the end. The base keeps every finished
trial, so when a run is interrupted the trials already done are still at
hand (``progress.results``). :class:`TextProgress` writes the pass rate so
far as plain text (a script, a terminal, a headless kernel); the notebook
draws a progress bar instead (``%tool_eval``).
"""

from __future__ import annotations

import sys
import time
from typing import IO, TYPE_CHECKING

from dsh_nb.evals.stats import wilson

if TYPE_CHECKING:
    from dsh_nb.evals.trial import TrialResult

__all__ = ["EvalProgress", "TextProgress"]


class EvalProgress:
    """Receives a run's progress; the base only keeps the finished trials."""

    def __init__(self) -> None:
        self.results: list[TrialResult] = []
        self.total = 0
        self.passed = 0
        self.answered = 0
        #: Trials that ended in a failed model request.
        self.errors = 0
        #: Why the run stopped early (too many request errors in a row).
        self.stopped: str | None = None

    def start(self, total: int) -> None:
        """``total`` trials are about to run."""
        self.total = total

    def trial(self, result: TrialResult) -> None:
        """One trial finished (called in the order trials finish)."""
        self.results.append(result)
        self.errors += result.error is not None
        if result.answered:
            self.answered += 1
            self.passed += result.passed

    def end(self, *, interrupted: bool) -> None:
        """The run is over (``interrupted``: stopped before every trial ran)."""

    def line(self) -> str:
        """``"120/1000 trials · passed 63% [60%, 66%]"``."""
        done = len(self.results)
        text = f"{done}/{self.total} trials"
        if self.answered:
            rate = wilson(self.passed, self.answered)
            text += f" · passed {rate.value:.0%} [{rate.low:.0%}, {rate.high:.0%}]"
        return text + self.error_text()

    def error_text(self) -> str:
        """``" · 3 request errors"`` (or ``""``), then why the run stopped."""
        text = ""
        if self.errors:
            plural = "s" if self.errors != 1 else ""
            text = f" · {self.errors} request error{plural}"
        if self.stopped:
            text += f" · {self.stopped}"
        return text


class TextProgress(EvalProgress):
    """Writes the progress line to a stream, at most every ``interval`` s.

    On a terminal the line is rewritten in place; elsewhere (a log, a
    headless kernel's stream) a new line is written each time.
    """

    def __init__(self, stream: IO[str] | None = None, *, interval: float = 1.0):
        super().__init__()
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._last = 0.0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def _write(self, text: str, final: bool = False) -> None:
        if self._tty:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def trial(self, result: TrialResult) -> None:
        super().trial(result)
        now = time.monotonic()
        if now - self._last >= self.interval and len(self.results) < self.total:
            self._last = now
            self._write("tool_eval: " + self._colored())

    def _colored(self) -> str:
        """The line, with the request errors in red on a terminal."""
        line = self.line()
        errors = self.error_text()
        if not (self._tty and errors):
            return line
        return line[: len(line) - len(errors)] + f"\033[31m{errors}\033[0m"

    def end(self, *, interrupted: bool) -> None:
        suffix = " (interrupted)" if interrupted else ""
        self._write("tool_eval: " + self._colored() + suffix, final=True)
