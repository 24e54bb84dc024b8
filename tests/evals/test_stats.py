"""Wilson intervals and McNemar's exact test against worked values."""

from __future__ import annotations

import math

import pytest

from dsh_nb.evals.stats import Rate, mcnemar_exact, wilson


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # Worked by hand from the Wilson formula, z = 1.96.
        (5, 10, 0.236593, 0.763407),
        (0, 10, 0.0, 0.277533),
        (10, 10, 0.722467, 1.0),
        (1, 1, 0.206549, 1.0),
        (81, 263, 0.255289, 0.366210),
    ],
)
def test_wilson(k: int, n: int, low: float, high: float) -> None:
    rate = wilson(k, n)
    assert rate.value == k / n and rate.n == n and rate.successes == k
    assert math.isclose(rate.low, low, abs_tol=2e-5)
    assert math.isclose(rate.high, high, abs_tol=2e-5)


def test_wilson_edges() -> None:
    assert wilson(0, 0) == Rate(0.0, 0.0, 1.0, 0)
    assert str(wilson(0, 0)) == "- (n=0)"
    assert str(wilson(3, 4)) == "75% [30%, 95%] (3/4)"
    for bad in ((-1, 3), (4, 3), (1, -1)):
        with pytest.raises(ValueError):
            wilson(*bad)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),
        (0, 6, 0.03125),
        (6, 0, 0.03125),
        (1, 5, 0.21875),
        (3, 3, 1.0),
        (0, 12, 2 / 4096),
        (2, 10, 2 * (1 + 12 + 66) / 4096),
    ],
)
def test_mcnemar_exact(b: int, c: int, p: float) -> None:
    assert math.isclose(mcnemar_exact(b, c), p, rel_tol=1e-12)


def test_mcnemar_large_counts_do_not_underflow() -> None:
    p = mcnemar_exact(4000, 6000)
    assert 0 < p < 1e-80
    assert mcnemar_exact(5000, 5000) == 1.0
