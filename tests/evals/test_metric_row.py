"""A new metric is one row of the metric table: every view picks it up."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dsh_nb.evals import CaseInfo, EvalReport, TrialResult
from dsh_nb.evals.metrics import METRIC_TABLE, Metric, PairRule

ROW = Metric(
    name="one_step",
    label="one <step>",
    value=lambda t: t.steps == 1,
    pairs=PairRule(
        text="a case passes when any of its trials took one step",
        passes=lambda good, seen: good > 0,
    ),
)


@pytest.fixture
def one_step() -> Iterator[Metric]:
    METRIC_TABLE[ROW.name] = ROW
    try:
        yield ROW
    finally:
        del METRIC_TABLE[ROW.name]


def trial(case_id: str, n: int, steps: int, variant: str) -> TrialResult:
    return TrialResult(
        case_id=case_id,
        trial=n,
        variant=variant,
        selected=True,
        args_valid_first_try=True,
        args_correct=True,
        recovered=None,
        passed=True,
        steps=steps,
        latency=0.1,
    )


def report() -> EvalReport:
    cases = {
        f"c{i}": CaseInfo(id=f"c{i}", prompt="p", expect="e", expected=("add",))
        for i in range(8)
    }
    # Variant A answers every case in one step; B in two, in every trial.
    trials = [
        trial(c, n, steps, v)
        for c in cases
        for n in (1, 2)
        for v, steps in (("A", 1), ("B", 2))
    ]
    return EvalReport(trials, cases=cases, variants=("A", "B"))


def test_a_new_row_reaches_every_view(one_step: Metric) -> None:
    r = report()
    a, b = r.summary("A")["one_step"], r.summary("B")["one_step"]
    assert (a.successes, a.n, b.successes, b.n) == (16, 16, 0, 16)
    assert r.by_tool("B")["add"]["one_step"].successes == 0
    compared = r.compare(metric="one_step")
    assert (compared.only_a, compared.only_b, compared.better) == (8, 0, "A")
    assert ROW.pairs is not None and compared.rule == ROW.pairs.text
    html = r._repr_html_()
    assert "one &lt;step&gt;" in html and "one <step>" not in html
    frame = r.to_pandas()
    assert frame.groupby("variant")["one_step"].all().to_dict() == {
        "A": True,
        "B": False,
    }


def test_without_the_row_nothing_knows_it() -> None:
    r = report()
    assert "one_step" not in r.summary()
    with pytest.raises(ValueError, match="metric must be one of"):
        r.compare(metric="one_step")
    assert "one_step" not in r.to_pandas().columns


def test_a_row_that_does_not_pair_is_not_compared(one_step: Metric) -> None:
    assert METRIC_TABLE["recovered"].pairs is None
    with pytest.raises(ValueError, match=r"metric must be one of .*'one_step'"):
        report().compare(metric="recovered")
