"""pass^k and pass@k: is a case passed every time, or at least once?

One try hides how unreliable a tool set is: τ-bench saw a model pass about
61% of tasks once but under 25% eight times in a row. With ``k`` trials of
each case:

- **pass^k** is the share of cases whose k trials *all* passed (reliable);
- **pass@k** is the share of cases with *at least one* passed trial
  (capable, given retries).

Each case is one Bernoulli outcome, so each rate is a proportion over
*cases* with its Wilson 95% interval (as every rate here): the k trials of
one case share a prompt and are not independent, so counting trials would
claim a precision the run does not have. A case counts only when all its k
trials were answered (a failed request measured nothing); ``excluded``
says how many did not. Under ``variants=`` each (case, variant) pair is
one unit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dsh_nb.evals.stats import Rate, wilson
from dsh_nb.evals.trial import TrialResult

__all__ = ["PassK", "pass_k"]


@dataclass(frozen=True, slots=True)
class PassK:
    """pass^k and pass@k over the cases that ran all ``k`` trials."""

    k: int
    every: Rate
    any: Rate
    excluded: int

    def to_json(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "passAll": self.every.to_json(),
            "passAny": self.any.to_json(),
            "excluded": self.excluded,
        }

    def __str__(self) -> str:
        return f"pass^{self.k}: {self.every}\npass@{self.k}: {self.any}"


def pass_k(trials: Iterable[TrialResult]) -> PassK:
    """pass^k and pass@k with ``k`` the most trials any case ran."""
    runs: dict[tuple[str, str | None], list[TrialResult]] = {}
    for t in trials:
        runs.setdefault((t.case_id, t.variant), []).append(t)
    k = max((len(group) for group in runs.values()), default=0)
    every = some = counted = 0
    for group in runs.values():
        if len(group) < k or not all(t.answered for t in group):
            continue
        counted += 1
        every += all(t.passed for t in group)
        some += any(t.passed for t in group)
    return PassK(
        k=k,
        every=wilson(every, counted),
        any=wilson(some, counted),
        excluded=len(runs) - counted,
    )
