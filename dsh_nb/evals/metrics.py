"""The evaluation metrics: one table, one row per metric.

A row says what a metric reads of a trial, the label a report shows, and
how a case passes under it when two runs are compared case by case
(:mod:`dsh_nb.evals.compare`). ``summary()``, ``by_tool()``, ``by_tag()``,
``compare()``, the HTML report and ``to_pandas()`` all read
:data:`METRIC_TABLE` when they run, as inspect_ai's scorers read their
``@metric`` functions: adding a metric is one row here (and, if it needs
a fact no trial records yet, that fact on ``TrialResult``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import Final

from dsh_nb.evals.trial import TrialResult

__all__ = [
    "MAJORITY",
    "METRIC_TABLE",
    "Metric",
    "PairRule",
    "paired_metrics",
    "trial_metrics",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class PairRule:
    """How a case passes when a comparison pairs it: from its trials."""

    text: str
    """The rule in words, as a comparison prints it."""
    passes: Callable[[int, int], bool]
    """``(passed trials, trials) -> bool``."""


MAJORITY: Final = PairRule(
    text="a case passes when more than half of its trials pass",
    passes=lambda good, seen: 2 * good > seen,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Metric:
    """One metric: what it reads, what it is called, how it pairs."""

    name: str
    """Its key in ``summary()`` and ``compare(metric=...)``."""
    label: str
    """What a report's table heads its column with."""
    value: Callable[[TrialResult], bool | None]
    """Its value for one trial; None where it measured nothing."""
    per_trial: bool = True
    """A rate over trials in ``summary()``; False for a rate over cases
    (``pass^k``, ``pass@k``: ``summary()`` adds them with several trials)."""
    pairs: PairRule | None = MAJORITY
    """How a case passes in ``compare()``; None: not compared."""


_PASSED: Final = attrgetter("passed")

#: Every metric, by name, in the order a report shows them.
METRIC_TABLE: Final[dict[str, Metric]] = {
    row.name: row
    for row in (
        Metric(name="selected", label="selected", value=attrgetter("selected")),
        Metric(
            name="args_valid_first_try",
            label="valid first try",
            value=attrgetter("args_valid_first_try"),
        ),
        Metric(
            name="args_correct",
            label="args correct",
            value=attrgetter("args_correct"),
        ),
        # Measured only on trials whose first step had refused arguments,
        # so two runs rarely share a case to pair: not compared.
        Metric(
            name="recovered",
            label="recovered",
            value=attrgetter("recovered"),
            pairs=None,
        ),
        Metric(name="passed", label="passed", value=_PASSED),
        Metric(
            name="pass^k",
            label="pass^k",
            value=_PASSED,
            per_trial=False,
            pairs=PairRule(
                text="a case passes when every one of its trials passes",
                passes=lambda good, seen: good == seen,
            ),
        ),
        Metric(
            name="pass@k",
            label="pass@k",
            value=_PASSED,
            per_trial=False,
            pairs=PairRule(
                text="a case passes when at least one of its trials passes",
                passes=lambda good, seen: good > 0,
            ),
        ),
    )
}


def trial_metrics() -> tuple[Metric, ...]:
    """The metrics rated over trials, in the table's order, as it is now."""
    return tuple(m for m in METRIC_TABLE.values() if m.per_trial)


def paired_metrics() -> Mapping[str, Metric]:
    """The metrics ``compare()`` takes, by name."""
    return {n: m for n, m in METRIC_TABLE.items() if m.pairs is not None}
