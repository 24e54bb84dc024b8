"""The two statistics a tool evaluation needs: a rate and a paired test.

A rate over n trials is reported with its Wilson score interval (95%),
which stays inside [0, 1] and means something at 0/n and n/n, where the
normal approximation does not. Two variants run on the same cases are
compared with McNemar's exact test: a two-sided binomial test with p = 1/2
over the cases where exactly one variant passed (the discordant pairs),
so cases both pass or both fail say nothing about which is better.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["Z95", "Rate", "mcnemar_exact", "wilson"]

#: The normal quantile of a two-sided 95% interval.
Z95: Final = 1.959963984540054


@dataclass(frozen=True, slots=True)
class Rate:
    """A proportion with its Wilson 95% interval.

    ``value`` is successes / ``n``; ``low`` and ``high`` bound it. With
    ``n == 0`` nothing is known: ``value`` is 0 and the interval is [0, 1].
    """

    value: float
    low: float
    high: float
    n: int

    @property
    def successes(self) -> int:
        """How many of the ``n`` trials counted (``value * n``)."""
        return round(self.value * self.n)

    def to_json(self) -> dict[str, Any]:
        """``{"value", "low", "high", "n"}``."""
        return {"value": self.value, "low": self.low, "high": self.high, "n": self.n}

    def __str__(self) -> str:
        if self.n == 0:
            return "- (n=0)"
        return (
            f"{self.value:.0%} [{self.low:.0%}, {self.high:.0%}] "
            f"({self.successes}/{self.n})"
        )


def wilson(successes: int, n: int, z: float = Z95) -> Rate:
    """The Wilson score interval of ``successes`` out of ``n``."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n; got {successes} of {n}")
    if n == 0:
        return Rate(0.0, 0.0, 1.0, 0)
    p = successes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    # Exact at the ends: the interval touches 0 (or 1) when p does.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Rate(p, low, high, n)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value for the discordant counts.

    ``only_a`` cases passed under A alone, ``only_b`` under B alone. With
    no discordant case the two cannot be told apart: p = 1.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError(f"counts must be >= 0; got {only_a}, {only_b}")
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    # Exact integers, then one division: no float underflow for large n.
    # Each binomial comes from the one before (C(n, i+1) = C(n, i)(n-i)/(i+1),
    # exact): a sum of math.comb calls took 8.7 s for 10,000 discordant cases.
    term = tail = 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        tail += term
    p: float = 2 * tail / 2**n
    return min(1.0, p)
