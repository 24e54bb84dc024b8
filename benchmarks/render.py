"""How long a diff card takes to render, and how big its parts are.

Run: ``python benchmarks/render.py [--quick]``. For files of 100 to 100,000
lines, with 1% of the lines changed (spread evenly) and with every line
rewritten, it prints the median wall time of ``render_card`` (all four MIME
parts) and the size of the ``text/html`` part, first with the default
``CardLimits`` (2,000 rows per card, 2 MB per file), then with the limits
lifted so every row is drawn and the growth with size shows.

Targets (issue 4): a 10,000-line file with 1% changed in <= 30 ms, a
2,000-line full rewrite in <= 50 ms, growing linearly. Issue 10: that 1%
card totals <= 200 KB over all its MIME parts (the ``all parts`` column).
Issue 15: a 100 MB result makes a display message (data and metadata as
JSON) <= 2x the card's limits, taken as 4 parts x ``max_output_chars``;
and the process's RSS after ``del`` of the result comes back within 10 MB.
"""

from __future__ import annotations

import asyncio
import gc
import json
import platform
import statistics
import sys
import time

from dsh_nb.cards import CardLimits, CardModel, ToolCard, render_card
from dsh_nb.tools import Agent, ToolExecutionInput, ToolRegistry, define_tool
from dsh_nb.tools.audit.resultsize import DEFAULT_MAX_RESULT_BYTES, bound_result
from dsh_nb.tools.presentation import DiffResultView, FileDiff, GenericResultView

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


def total_bytes(card: ToolCard) -> int:
    """Bytes of every MIME part as the kernel sends them (JSON as JSON)."""
    return sum(
        len((v if isinstance(v, str) else json.dumps(v)).encode())
        for v in card.data.values()
    )


def measure(
    model: CardModel, limits: CardLimits, runs: int
) -> tuple[float, float, int, int]:
    """Return median wall ms, median CPU ms, HTML and all-parts bytes.

    CPU time is shown too because wall time on a shared machine includes
    waiting for a core.
    """
    wall, cpu = [], []
    size = total = 0
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        card = render_card(model, limits=limits)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        size = len(card.data["text/html"].encode())
        total = total_bytes(card)
    ms, cpu_ms = statistics.median(wall) * 1000, statistics.median(cpu) * 1000
    return ms, cpu_ms, size, total


def rss_mb() -> float:
    """This process's resident set size in MB (Linux /proc)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def huge_result(megabytes: int) -> None:
    """A result of ``megabytes`` MB through the pipeline, journal and card."""
    limits = CardLimits()
    registry = ToolRegistry()
    agent = Agent("bench")
    registry.register(
        define_tool(
            name="huge",
            description="d",
            parameters={},
            execute=lambda args: "x" * (megabytes * 1_000_000),
        )
    )
    gc.collect()
    before = rss_mb()
    result = asyncio.run(
        registry.execute(
            ToolExecutionInput(call_id="c1", name="huge", arguments={}, agent=agent)
        )
    )
    whole = len(result.content[0]["text"])
    kept, _ = bound_result(result, DEFAULT_MAX_RESULT_BYTES)  # what live.py does
    view = GenericResultView(content=kept.content)
    card = render_card(CardModel(tool="huge", result=view), limits=limits)
    data, metadata = card._repr_mimebundle_()
    message = len(json.dumps({"data": data, "metadata": metadata}).encode())
    events = agent.session.events  # the journal builds its bounded event on read
    during = rss_mb()
    del result, kept, view, card, data, metadata, events
    gc.collect()
    after = rss_mb()
    bound = 2 * 4 * limits.max_output_chars
    verdict = "ok" if message <= bound else "MISSED"
    back = "ok" if after - before <= 10 else "MISSED"
    print(
        f"{megabytes} MB result (returned whole: {whole:,} chars): display message "
        f"{message:,} bytes; target <= {bound:,} (2 x 4 parts x max_output_chars): "
        f"{verdict}"
    )
    print(
        f"RSS before {before:.1f} MB, with the result {during:.1f} MB, after del "
        f"{after:.1f} MB; target after - before <= 10 MB: {back}"
    )


def main() -> None:
    quick = "--quick" in sys.argv
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(
        f"{'lines':>8} {'change':>8} {'limits':>9} {'wall ms':>9} {'cpu ms':>8} "
        f"{'html bytes':>12} {'all parts':>11}"
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
                ms, cpu, size, total = measure(model, limits, runs)
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
                if (n, change, limits_name) == (10_000, "1%", "default"):
                    ok = "ok" if total <= 200_000 else "MISSED"
                    mark += f"; all parts <= 200,000 bytes: {ok}"
                print(
                    f"{n:>8,} {change:>8} {limits_name:>9} {ms:>9.1f} {cpu:>8.1f} "
                    f"{size:>12,} {total:>11,}{mark}"
                )
    if failed:
        print(f"missed wall-time targets (check the machine's load): {failed}")
    huge_result(100)


if __name__ == "__main__":
    main()
