"""Time BFCL grading: the 400 ``simple_python`` possible answers, graded.

The issue's target: grading them takes under 1 s, so a report re-grades from
a recording at once. Prints the load time too (each case's tools are built
and their schemas checked once), and the grading time of every single-turn
AST category. Needs ``pip install --no-deps bfcl-eval==2026.3.23``.

Run: ``python benchmarks/bfcl_grading.py [--repeat N] [--category C ...]``
"""

from __future__ import annotations

import argparse
import statistics
import time

from dsh_nb.evals import bfcl, grade

__all__ = ["bench_bfcl_grading", "main"]

TARGET_S = 1.0


def bench_bfcl_grading(
    repeat: int = 5, categories: tuple[str, ...] | None = None
) -> dict[str, float]:
    """Median seconds to grade each AST category's possible answers."""
    figures: dict[str, float] = {}
    for category in categories or bfcl.CATEGORIES:
        if category.endswith("irrelevance"):
            continue
        start = time.perf_counter()
        cases = bfcl.load(category)
        loaded = time.perf_counter() - start
        answers = [(c.expect, bfcl.reference_calls(c)) for c in cases]
        runs = []
        for _ in range(repeat):
            start = time.perf_counter()
            passed = sum(grade(expect, calls).passed for expect, calls in answers)
            runs.append(time.perf_counter() - start)
        figures[category] = statistics.median(runs)
        print(
            f"{category:24} {len(cases):5} cases  load {loaded:6.2f} s  "
            f"grade {figures[category] * 1e3:7.2f} ms  "
            f"({figures[category] / len(cases) * 1e6:5.1f} us a case, "
            f"{passed} pass)"
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--category", action="append", choices=bfcl.CATEGORIES, help="(repeatable)"
    )
    args = parser.parse_args()
    categories = tuple(args.category or ()) or None
    if categories and "simple_python" not in categories:
        categories = ("simple_python", *categories)
    figures = bench_bfcl_grading(args.repeat, categories)
    simple = figures["simple_python"]
    verdict = "under" if simple < TARGET_S else "OVER"
    print(
        f"grading the 400 simple_python answers: {simple * 1e3:.2f} ms "
        f"({verdict} the {TARGET_S:.0f} s target)"
    )


if __name__ == "__main__":
    main()
