"""``EvalReport``: the trials of a run, their rates, and what failed.

A report is data first: its trials (one :class:`TrialResult` each), what
each case asked and expected (:class:`CaseInfo`, so a saved report reads
without the cases), and the run's settings. Every rate is a
:class:`~dsh_nb.evals.stats.Rate` with its Wilson 95% interval, over the
trials whose first request was answered (a failed request measures
nothing about the tool; ``errors`` counts them). ``recovered`` counts only
the trials whose first step had refused arguments.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from dsh_nb.evals.compare import Comparison, compare_trials
from dsh_nb.evals.metrics import trial_metrics
from dsh_nb.evals.passk import PassK, pass_k
from dsh_nb.evals.stats import Rate
from dsh_nb.evals.summary import NO_CALL, CaseInfo, rates
from dsh_nb.evals.trial import TrialResult

__all__ = ["NO_CALL", "CaseInfo", "EvalReport"]

FORMAT: Final = "dsh-eval-report/1"
_T = TypeVar("_T")


class EvalReport:
    """The result of :func:`~dsh_nb.evals.run_eval` (or of ``load``)."""

    def __init__(
        self,
        trials: Sequence[TrialResult],
        *,
        cases: Mapping[str, CaseInfo],
        variants: Sequence[str] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.trials: tuple[TrialResult, ...] = tuple(trials)
        self.cases: dict[str, CaseInfo] = dict(cases)
        self.variants: tuple[str, ...] | None = (
            None if variants is None else tuple(variants)
        )
        self.meta: dict[str, Any] = dict(meta or {})

    # --- reading -------------------------------------------------------------

    def _select(self, variant: str | None) -> tuple[TrialResult, ...]:
        if variant is None:
            return self.trials
        if self.variants is None or variant not in self.variants:
            known = ", ".join(map(repr, self.variants or ())) or "none"
            raise KeyError(f"no variant {variant!r} in this report (variants: {known})")
        return tuple(t for t in self.trials if t.variant == variant)

    def variant(self, name: str) -> EvalReport:
        """The trials of one variant, as a report of their own."""
        return EvalReport(
            self._select(name), cases=self.cases, variants=(name,), meta=self.meta
        )

    def summary(self, variant: str | None = None) -> dict[str, Rate]:
        """Metric -> Rate (Wilson 95%), over every trial or one variant's.

        With several trials a case, ``"pass^k"`` and ``"pass@k"`` follow:
        over cases, not trials (see :meth:`pass_k`).
        """
        trials = self._select(variant)
        out = rates(trials)
        both = pass_k(trials)
        if both.k > 1:
            out["pass^k"], out["pass@k"] = both.every, both.any
        return out

    def pass_k(self, variant: str | None = None) -> PassK:
        """pass^k (every trial of a case passed) and pass@k (one did), over
        cases, each with its Wilson 95% interval (:mod:`dsh_nb.evals.passk`)."""
        return pass_k(self._select(variant))

    def by_variant(self) -> dict[str, dict[str, Rate]]:
        """Variant -> its summary (a run without variants has none)."""
        return {name: self.summary(name) for name in self.variants or ()}

    def by_tool(self, variant: str | None = None) -> dict[str, dict[str, Rate]]:
        """Expected tool -> the rates of the trials that expected it.

        A case expecting several tools counts for each; cases expecting no
        call are under :data:`NO_CALL`. Names are shown as the case names
        them (BFCL's ``math.factorial``).
        """
        groups: dict[str, list[TrialResult]] = {}
        for t in self._select(variant):
            info = self.cases.get(t.case_id)
            names = info.expected if info is not None else ()
            keys = {info.shown(n) for n in names} if info and names else {NO_CALL}
            for key in sorted(keys):
                groups.setdefault(key, []).append(t)
        return {name: rates(group) for name, group in sorted(groups.items())}

    def by_tag(self, variant: str | None = None) -> dict[str, dict[str, Rate]]:
        """Tag -> the rates of the trials whose case has it (``Case.tags``).

        A case with several tags counts for each; untagged cases are not
        counted here.
        """
        groups: dict[str, list[TrialResult]] = {}
        for t in self._select(variant):
            info = self.cases.get(t.case_id)
            for tag in sorted(set(info.tags)) if info is not None else ():
                groups.setdefault(tag, []).append(t)
        return {tag: rates(group) for tag, group in sorted(groups.items())}

    def failures(self, variant: str | None = None) -> list[TrialResult]:
        """The trials that did not pass, and those ending in a request error."""
        return [t for t in self._select(variant) if t.state != "passed"]

    @property
    def errors(self) -> int:
        """Trials that ended in a failed model request (state ``"error"``).

        Those whose first request failed measured nothing and are left
        out of the rates; a later failure keeps what the first step showed.
        """
        return sum(t.error is not None for t in self.trials)

    def totals(self, variant: str | None = None) -> dict[str, float]:
        """Steps, latency (seconds) and tokens: means, p50/p95 and sums."""
        trials = self._select(variant)
        latencies = sorted(t.latency for t in trials) or [0.0]
        steps = [t.steps for t in trials] or [0]
        return {
            "trials": len(trials),
            "errors": sum(t.error is not None for t in trials),
            "steps_mean": statistics.fmean(steps),
            "latency_mean": statistics.fmean(latencies),
            "latency_p50": latencies[len(latencies) // 2],
            "latency_p95": latencies[int((len(latencies) - 1) * 0.95)],
            "input_tokens": sum(t.usage.input_tokens for t in trials),
            "output_tokens": sum(t.usage.output_tokens for t in trials),
        }

    # --- comparing -----------------------------------------------------------

    def compare(
        self,
        other: EvalReport | None = None,
        *,
        metric: str = "passed",
        alpha: float = 0.05,
        names: tuple[str, str] | None = None,
    ) -> Comparison:
        """Compare paired by case: with ``other``, or this run's two variants.

        ``names=("vague", "precise")`` names the two sides (this report,
        then ``other``) in the verdict; without it a report is named by its
        one variant or ``meta["label"]``, else "this" and "other". See
        :mod:`dsh_nb.evals.compare` for the per-case rule (majority of
        trials) and the test (McNemar's exact).
        """
        if names is not None and not (
            isinstance(names, tuple)
            and len(names) == 2
            and all(isinstance(n, str) and n for n in names)
            and names[0] != names[1]
        ):
            raise ValueError(
                f"names= takes two different names, ('A', 'B'), not {names!r}"
            )
        order = {case_id: n for n, case_id in enumerate(self.cases)}
        if other is None:
            pair = self.variants or ()
            if len(pair) != 2:
                raise ValueError(
                    "compare() with no argument compares the two variants of a "
                    f"variants= run; this report has {len(pair)}. Pass another "
                    "report, or compare r.variant('A') with r.variant('B')"
                )
            a, b = pair
            shown = pair if names is None else names
            return compare_trials(
                shown[0],
                self._select(a),
                shown[1],
                self._select(b),
                metric=metric,
                alpha=alpha,
                order=order,
            )
        if not isinstance(other, EvalReport):
            raise TypeError(f"compare() takes an EvalReport, not {other!r}")
        a_name, b_name = self._label("this"), other._label("other")
        if names is not None:
            a_name, b_name = names
        if a_name == b_name:
            a_name, b_name = f"{a_name} (this)", f"{b_name} (other)"
        return compare_trials(
            a_name,
            self.trials,
            b_name,
            other.trials,
            metric=metric,
            alpha=alpha,
            order=order,
        )

    def _label(self, fallback: str) -> str:
        names = self.variants or ()
        if len(names) > 1:
            raise ValueError(
                "this report holds several variants; compare one of them: "
                "report.variant(NAME).compare(other)"
            )
        return names[0] if names else str(self.meta.get("label") or fallback)

    # --- saving --------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The whole report as plain JSON (what :meth:`save` writes)."""
        return {
            "format": FORMAT,
            "meta": self.meta,
            "variants": None if self.variants is None else list(self.variants),
            "cases": [c.to_json() for c in self.cases.values()],
            "trials": [t.to_json() for t in self.trials],
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the report as one JSON file, redacted of registered secrets.

        As ``%tool_log --save`` does: a 401 body quoting the key, or a tool
        result holding a token, is stored as ``[secret]``.
        """
        from dsh_nb.tools.audit.secrets import redact_value

        data = redact_value(self.to_json())
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvalReport:
        """Read :meth:`to_json`'s data; a wrong part is one ``ValueError``
        that says where (``trials[3]: 'passed' must be true or false``)."""
        from dsh_nb.evals import fields as f

        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise ValueError(f"not a saved evaluation report (format {FORMAT!r})")
        f.check_depth(data, f.MAX_DEPTH + 10)
        variants = data.get("variants")
        if variants is not None and not (
            isinstance(variants, list) and all(isinstance(v, str) for v in variants)
        ):
            raise ValueError("'variants' must be a list of strings or null")
        meta = f.optional_object(data, "meta") or {}
        cases = [
            _read(CaseInfo.from_json, item, f"cases[{index}]")
            for index, item in enumerate(f.list_of_objects(data, "cases"))
        ]
        trials = [
            _read(TrialResult.from_json, item, f"trials[{index}]")
            for index, item in enumerate(f.list_of_objects(data, "trials"))
        ]
        return cls(trials, cases={c.id: c for c in cases}, variants=variants, meta=meta)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvalReport:
        """Read a report :meth:`save` wrote; a malformed file is one
        ``ValueError`` naming it."""
        from dsh_nb.tools.audit.journalfile import not_regular

        name = os.fspath(path)
        what = not_regular(name)
        if what is not None:
            raise ValueError(f"{what}; pass a saved report")
        with open(name, encoding="utf-8") as fh:
            try:
                data = json.load(fh)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{name}: not JSON ({exc})") from None
            except RecursionError:
                raise ValueError(
                    f"{name}: not a saved report (nested too deep)"
                ) from None
        try:
            return cls.from_json(data)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None

    def to_pandas(self) -> Any:
        """One row per trial (needs pandas)."""
        try:
            import pandas as pd  # type: ignore[import-untyped]
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas") from None
        rows = []
        metrics = trial_metrics()
        for t in self.trials:
            info = self.cases.get(t.case_id)
            rows.append(
                {
                    "case_id": t.case_id,
                    "tags": list(info.tags) if info is not None else [],
                    "state": t.state,
                    "trial": t.trial,
                    "variant": t.variant,
                    **{m.name: m.value(t) for m in metrics},
                    "steps": t.steps,
                    "latency": t.latency,
                    "input_tokens": t.usage.input_tokens,
                    "output_tokens": t.usage.output_tokens,
                    "error": t.error,
                    "answered": t.answered,
                }
            )
        return pd.DataFrame(rows)

    # --- showing -------------------------------------------------------------

    def __repr__(self) -> str:
        return f"<EvalReport {len(self.trials)} trials, {len(self.cases)} cases>"

    def __str__(self) -> str:
        lines = [repr(self)]
        groups: list[tuple[str, dict[str, Rate]]] = (
            [(f"[{n}] ", s) for n, s in self.by_variant().items()]
            if self.variants and len(self.variants) > 1
            else [("", self.summary())]
        )
        for prefix, summary in groups:
            for metric, rate in summary.items():
                lines.append(f"{prefix}{metric}: {rate}")
        if self.errors:
            lines.append(
                f"request errors: {self.errors} of {len(self.trials)} trials "
                "(a trial whose first request failed is left out of the rates)"
            )
        if self.meta.get("stopped"):
            lines.append(str(self.meta["stopped"]))
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from dsh_nb.evals.reporthtml import report_html

        return report_html(self)


def _read(
    read: Callable[[Mapping[str, Any]], _T], item: Mapping[str, Any], where: str
) -> _T:
    try:
        return read(item)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
