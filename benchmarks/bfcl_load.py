"""Time ``bfcl.load`` against BFCL's own reader, and a ``Case``'s construction.

Issue 35's targets: loading a category takes at most 10 times what BFCL's
own reader takes for the same files in the same run, and building a
``Case`` stays under 50 µs. BFCL's reader is ``bfcl_eval.utils.load_file``
(``readlines``, then ``json.loads`` per line); its module imports BFCL's
heavy dependencies, so its five lines are repeated here, reading the same
two files (questions and possible answers) that ``bfcl.load`` reads. Each
figure is the median of ``--repeat`` cold loads (the tool cache cleared).
Needs ``pip install --no-deps bfcl-eval==2026.3.23``.

Run: ``python benchmarks/bfcl_load.py [--repeat N] [--category C ...]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import timeit
from importlib import resources
from pathlib import Path
from typing import Any

from dsh_nb.evals import Case, bfcl, call

__all__ = ["bench_bfcl_load", "bench_case", "main"]

TARGET_RATIO = 10.0
CASE_TARGET_US = 50.0
DEFAULT = ("simple_python", "multiple", "parallel", "irrelevance", "live_multiple")


def _bfcl_reader(path: Path) -> list[dict[str, Any]]:
    """``bfcl_eval.utils.load_file(path, use_lock=False)``, line for line."""
    result = []
    with open(path) as f:
        file = f.readlines()
        for line in file:
            content = json.loads(line)
            result.append(content)
    return result


def _median(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def bench_bfcl_load(
    repeat: int = 5, categories: tuple[str, ...] = DEFAULT
) -> dict[str, tuple[float, float]]:
    """Category -> (our seconds, BFCL's reader's seconds), cold, medians."""
    data = Path(str(resources.files("bfcl_eval"))) / "data"
    out = {}
    for category in categories:
        files = [data / f"BFCL_v4_{category}.json"]
        answers = data / "possible_answer" / f"BFCL_v4_{category}.json"
        if answers.exists():
            files.append(answers)

        def ours(category: str = category) -> None:
            bfcl._TOOLS.clear()
            bfcl.load(category)

        def theirs(files: list[Path] = files) -> None:
            for path in files:
                _bfcl_reader(path)

        ours()  # imports and first-use costs out of the figure
        out[category] = (_median(ours, repeat), _median(theirs, repeat))
    return out


def bench_case(number: int = 20_000) -> float:
    """Microseconds to build one ``Case`` with one expected call."""
    seconds = min(
        timeit.repeat(
            lambda: Case("Weather in Paris?", expect=call("weather", city="Paris")),
            number=number,
            repeat=5,
        )
    )
    return seconds / number * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--category", action="append", choices=bfcl.CATEGORIES)
    args = parser.parse_args(argv)
    categories = tuple(args.category or DEFAULT)
    print(f"{'category':<24}{'bfcl.load':>12}{'BFCL reader':>14}{'ratio':>8}")
    worst = 0.0
    for category, (ours, theirs) in bench_bfcl_load(args.repeat, categories).items():
        ratio = ours / theirs
        worst = max(worst, ratio)
        print(
            f"{category:<24}{ours * 1e3:>10.1f}ms{theirs * 1e3:>12.1f}ms{ratio:>7.1f}x"
        )
    verdict = "meets" if worst <= TARGET_RATIO else "misses"
    print(f"worst ratio {worst:.1f}x: {verdict} the target of {TARGET_RATIO:.0f}x")
    case_us = bench_case()
    verdict = "meets" if case_us <= CASE_TARGET_US else "misses"
    print(
        f"Case construction {case_us:.1f} us: {verdict} the {CASE_TARGET_US:.0f} us target"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
