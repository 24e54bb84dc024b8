"""Two variants on the same cases: which is better, and how sure is that?

The comparison is paired, case by case. With several trials a case counts
as passed by a variant when **more than half** of its answered trials
passed (so with two trials both must pass; a tie fails), or, with
``metric="pass^k"``, when **every** trial passed (``"pass@k"``: at least
one did); each case's two
pass rates are kept too (``cases``). McNemar's exact test then looks only
at the discordant cases, those one variant passed and the other did not:
``p_value`` is the chance of a split at least that lopsided if the two
variants were equally good. ``better`` names the variant that passed more
of them when ``p_value < alpha``, else None: "not shown to differ", which
is not the same as "equal".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dsh_nb.cards.escape import esc
from dsh_nb.evals.metrics import MAJORITY, Metric, paired_metrics
from dsh_nb.evals.stats import Rate, mcnemar_exact, wilson
from dsh_nb.evals.trial import TrialResult

__all__ = ["CasePair", "Comparison", "compare_trials"]

RULE = MAJORITY.text


@dataclass(frozen=True, slots=True)
class CasePair:
    """One case under both variants: each one's share of passed trials."""

    case_id: str
    a: float
    b: float

    @property
    def difference(self) -> float:
        """``b - a``: above zero when B did better on this case."""
        return self.b - self.a


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Comparison:
    """A paired comparison of variant ``a`` with variant ``b``."""

    a: str
    b: str
    metric: str
    a_rate: Rate
    b_rate: Rate
    both: int
    only_a: int
    only_b: int
    neither: int
    p_value: float
    better: str | None
    alpha: float
    cases: tuple[CasePair, ...]
    rule: str = RULE

    @property
    def n(self) -> int:
        """Cases compared (those with an answered trial under both)."""
        return len(self.cases)

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "metric": self.metric,
            "aRate": self.a_rate.to_json(),
            "bRate": self.b_rate.to_json(),
            "both": self.both,
            "onlyA": self.only_a,
            "onlyB": self.only_b,
            "neither": self.neither,
            "pValue": self.p_value,
            "better": self.better,
            "alpha": self.alpha,
            "rule": self.rule,
            "cases": [{"caseId": c.case_id, "a": c.a, "b": c.b} for c in self.cases],
        }

    def verdict(self) -> str:
        """One sentence: who is better, with the test behind it."""
        split = (
            f"{self.only_b} cases passed only with {self.b!r}, "
            f"{self.only_a} only with {self.a!r}"
        )
        if self.better is None:
            return (
                f"no significant difference in {self.metric} ({split}; "
                f"McNemar exact p = {self.p_value:.3g})"
            )
        other = self.a if self.better == self.b else self.b
        return (
            f"{self.better!r} is better than {other!r} on {self.metric} ({split}; "
            f"McNemar exact p = {self.p_value:.3g} < {self.alpha})"
        )

    def __repr__(self) -> str:
        return (
            f"<Comparison {self.a!r} vs {self.b!r} on {self.metric}, {self.n} cases: "
            f"better={self.better!r}, p={self.p_value:.3g}>"
        )

    def __str__(self) -> str:
        return (
            f"{self.metric}: {self.a!r} {self.a_rate} vs {self.b!r} {self.b_rate} "
            f"over {self.n} cases\n{self.verdict()}\n({self.rule})"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td style='padding:2px 8px'>{esc(name)}</td>"
            f"<td style='padding:2px 8px'>{esc(str(rate))}</td></tr>"
            for name, rate in ((self.a, self.a_rate), (self.b, self.b_rate))
        )
        return (
            "<div class='dsh-EvalComparison'>"
            f"<table><tr><th style='padding:2px 8px'>variant</th>"
            f"<th style='padding:2px 8px'>{esc(self.metric)} (by case)</th></tr>"
            f"{rows}</table><p>{esc(self.verdict())}</p>"
            f"<p style='opacity:.7'>{esc(self.rule)}; {self.n} paired cases, "
            f"{self.both} passed by both, {self.neither} by neither.</p></div>"
        )


def _case_rates(
    trials: Sequence[TrialResult], metric: Metric
) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for t in trials:
        if not t.answered:
            continue
        good, seen = out.get(t.case_id, (0, 0))
        out[t.case_id] = (good + bool(metric.value(t)), seen + 1)
    return out


def compare_trials(
    a_name: str,
    a: Sequence[TrialResult],
    b_name: str,
    b: Sequence[TrialResult],
    *,
    metric: str = "passed",
    alpha: float = 0.05,
    order: Mapping[str, int] | None = None,
) -> Comparison:
    """Pair ``a`` and ``b`` case by case on ``metric`` (see the module doc)."""
    known = paired_metrics()
    row = known.get(metric) if isinstance(metric, str) else None
    if row is None or row.pairs is None:
        raise ValueError(
            f"metric must be one of {', '.join(map(repr, known))}; not {metric!r}"
        )
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, not {alpha!r}")
    rule = row.pairs
    rates_a, rates_b = _case_rates(a, row), _case_rates(b, row)
    shared = [c for c in rates_a if c in rates_b]
    if order is not None:
        shared.sort(key=lambda c: order.get(c, len(order)))
    both = only_a = only_b = neither = 0
    pairs = []
    for case_id in shared:
        (ga, na), (gb, nb) = rates_a[case_id], rates_b[case_id]
        pairs.append(CasePair(case_id, ga / na, gb / nb))
        pass_a, pass_b = rule.passes(ga, na), rule.passes(gb, nb)
        if pass_a and pass_b:
            both += 1
        elif pass_a:
            only_a += 1
        elif pass_b:
            only_b += 1
        else:
            neither += 1
    p_value = mcnemar_exact(only_a, only_b)
    better = None
    if p_value < alpha and only_a != only_b:
        better = a_name if only_a > only_b else b_name
    n = len(pairs)
    return Comparison(
        a=a_name,
        b=b_name,
        metric=metric,
        a_rate=wilson(both + only_a, n),
        b_rate=wilson(both + only_b, n),
        both=both,
        only_a=only_a,
        only_b=only_b,
        neither=neither,
        p_value=p_value,
        better=better,
        alpha=alpha,
        cases=tuple(pairs),
        rule=rule.text,
    )
