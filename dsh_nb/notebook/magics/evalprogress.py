"""The ``%tool_eval`` progress bar: an ``EvalProgress`` drawn with widgets.

Its own module, so that ``%load_ext`` does not import the evaluation
package: ``%tool_eval`` imports it when a run starts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dsh_nb.evals.progress import EvalProgress

if TYPE_CHECKING:
    from dsh_nb.evals.trial import TrialResult

__all__ = ["WidgetProgress"]


class WidgetProgress(EvalProgress):
    """A progress bar and the pass rate so far, updated at most 10 times/s."""

    def __init__(self) -> None:
        super().__init__()
        import ipywidgets as widgets
        from IPython.display import display

        show: Callable[..., Any] = display
        self.bar = widgets.IntProgress(value=0, min=0, max=1, description="tool_eval")
        self.label = widgets.Label(value="starting")
        self.box = widgets.HBox([self.bar, self.label])
        self._last = 0.0
        show(self.box)

    def _show(self) -> None:
        self.bar.value = len(self.results)
        self.label.value = self.line()
        if self.errors:  # red as soon as a request fails, not green at the end
            self.bar.bar_style = "danger"

    def start(self, total: int) -> None:
        super().start(total)
        self.bar.max = max(total, 1)
        self._show()

    def trial(self, result: TrialResult) -> None:
        super().trial(result)
        now = time.monotonic()
        if now - self._last >= 0.1:
            self._last = now
            self._show()

    def end(self, *, interrupted: bool) -> None:
        self._show()
        if self.errors or self.stopped:
            self.bar.bar_style = "danger"
        else:
            self.bar.bar_style = "warning" if interrupted else "success"
        if interrupted:
            self.label.value = self.line() + " (interrupted)"
