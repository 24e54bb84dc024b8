"""How long a diff card takes to render, and how big its HTML is.

Run: ``python benchmarks/render.py [--quick]``. For files of 100 to 100,000
lines, with 1% of the lines changed (spread evenly) and with every line
rewritten, it prints the median wall time of ``render_card`` (all four MIME
parts) and the size of the ``text/html`` part, first with the default
``CardLimits`` (2,000 rows per card, 2 MB per file), then with the limits
lifted so every row is drawn and the growth with size shows.

Targets (issue 4): a 10,000-line file with 1% changed in <= 30 ms, a
2,000-line full rewrite in <= 50 ms, growing linearly.
"""

from __future__ import annotations

import platform
import statistics
import sys
import time

from dsh_nb.cards import CardLimits, CardModel, render_card
from dsh_nb.tools.presentation import DiffResultView, FileDiff

SIZES = (100, 1_000, 2_000, 10_000, 100_000)
UNLIMITED = CardLimits(max_diff_lines=10**9, max_diff_bytes=10**12)
TARGETS = {(10_000, "1%", "default"): 30.0, (2_000, "rewrite", "default"): 50.0}


def source(n: int) -> str:
    """Return ``n`` lines that look like code, each unique, some repeated."""
    out = []
    for i in range(n):
        if i % 10 == 9:
            out.append("\n")
        elif i % 10 == 8:
            out.append("    return result\n")
        else:
            out.append(f"    value_{i} = compute(value_{i - 1}, {i % 7}, 'key_{i}')\n")
    return "".join(out)


def change_one_percent(text: str) -> str:
    lines = text.splitlines(keepends=True)
    for k in range(0, len(lines), 100):
        lines[k + 3 if k + 3 < len(lines) else k] = f"    edited_{k} = 0\n"
    return "".join(lines)


def rewrite(text: str) -> str:
    return "".join(
        f"    other_{i} = transform({i}, 'v{i}')\n"
        for i in range(len(text.splitlines()))
    )


def measure(
    model: CardModel, limits: CardLimits, runs: int
) -> tuple[float, float, int]:
    """Return median wall ms, median CPU ms and the HTML size in bytes.

    CPU time is shown too because wall time on a shared machine includes
    waiting for a core.
    """
    wall, cpu = [], []
    size = 0
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        card = render_card(model, limits=limits)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        size = len(card.data["text/html"].encode())
    return statistics.median(wall) * 1000, statistics.median(cpu) * 1000, size


def main() -> None:
    quick = "--quick" in sys.argv
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(
        f"{'lines':>8} {'change':>8} {'limits':>9} {'wall ms':>9} {'cpu ms':>8} "
        f"{'html bytes':>12}"
    )
    failed = []
    for limits_name, limits in (("default", CardLimits()), ("unlimited", UNLIMITED)):
        for n in SIZES:
            if quick and n > 10_000:
                continue
            old = source(n)
            for change, new in (
                ("1%", change_one_percent(old)),
                ("rewrite", rewrite(old)),
            ):
                model = CardModel(
                    tool="edit",
                    result=DiffResultView(
                        diffs=[FileDiff(path="/src/mod.py", old_text=old, new_text=new)]
                    ),
                )
                runs = 3 if n >= 100_000 else 7
                ms, cpu, size = measure(model, limits, runs)
                target = TARGETS.get((n, change, limits_name))
                mark = ""
                if target is not None:
                    verdict = "ok" if ms <= target else "MISSED"
                    cpu_verdict = "ok" if cpu <= target else "MISSED"
                    mark = (
                        f"  target <= {target:g} ms: wall {verdict}, cpu {cpu_verdict}"
                    )
                    if ms > target:
                        failed.append((n, change))
                print(
                    f"{n:>8,} {change:>8} {limits_name:>9} {ms:>9.1f} {cpu:>8.1f} "
                    f"{size:>12,}{mark}"
                )
    if failed:
        print(f"missed wall-time targets (check the machine's load): {failed}")


if __name__ == "__main__":
    main()
