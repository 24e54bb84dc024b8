"""The benchmark scripts the closing notes quote must keep running.

One short round each: this checks that they work and print every row, not
how fast anything is (speed is never asserted in tests).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from processes import run_python

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
NUMBER_ROW = r"\| {peer} \| {tool} \| \d+\.\d \| \d+\.\d\d \|"


def run(*args: str) -> str:
    done = run_python(*args, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_pipeline_benchmark_prints_our_rows_and_the_scale_check() -> None:
    out = run(str(BENCHMARKS / "pipeline.py"), "--rounds", "2")
    for tool in ("add", "profile"):
        assert re.search(NUMBER_ROW.format(peer="dsh_nb full pipeline", tool=tool), out)
    assert re.search(NUMBER_ROW.format(peer="dsh_nb, no listeners", tool="add"), out)
    assert re.search(
        r"^yardstick \(.*\): \d+\.\d µs; .*add \d+\.\d\d, profile \d+\.\d\d$",
        out,
        re.M,
    ), out
    for count in (1, 10, 100, 1000):
        assert re.search(rf"^ +{count} tools: \d+\.\d µs$", out, re.M), out
    # A peer is either measured or named as missing, never silently dropped.
    for peer in ("langchain-core StructuredTool.invoke", "MCP SDK call_tool"):
        assert out.count(f"| {peer} |") == 2
    # The MCP SDK is a test dependency, so its row is measured: a script in
    # benchmarks/ named mcp.py must not shadow the package.
    assert re.search(NUMBER_ROW.format(peer="MCP SDK call_tool", tool="add"), out)


def test_compare_writes_a_results_table(tmp_path: Path) -> None:
    target = tmp_path / "RESULTS.md"
    out = run(
        str(BENCHMARKS / "compare.py"),
        "--rounds",
        "2",
        "--no-ts",
        "--output",
        str(target),
    )
    written = target.read_text()
    assert "## Machine" in written and "## Results" in written
    for tool in ("add", "profile"):
        assert re.search(
            NUMBER_ROW.format(peer="dsh_nb full pipeline", tool=tool), written
        )
        assert f"`{tool}`: " in written
        assert re.search(
            NUMBER_ROW.format(peer="MCP SDK server call_tool", tool=tool), written
        ), written
    assert "skipped (--no-ts)" in written
    assert f"wrote {target}" in out


def test_models_benchmark_prints_every_row() -> None:
    out = run(str(BENCHMARKS / "models.py"), "--rounds", "2")
    peers = [
        "bare SDK (hand-written step)",
        "dsh_nb Chat",
        "bare SDK, streamed",
        "dsh_nb Chat, streamed",
    ]
    # openai-agents is a [bench] peer, not a test dependency: without it the
    # row must say so, never print numbers it did not measure.
    if importlib.util.find_spec("agents") is None:
        assert re.search(
            r"^\| openai-agents Runner \|( - \|)+ not installed", out, re.M
        ), out
    else:
        peers.append("openai-agents Runner")
    for peer in peers:
        assert re.search(
            rf"^\| {re.escape(peer)} \| \d+\.\d\d \| \d+\.\d\d \| [+-]\d+\.\d\d \|",
            out,
            re.M,
        ), out
    assert re.search(r"^dsh_nb Chat adds -?\d+\.\d\d ms per step", out, re.M), out
    assert re.search(
        r"^dsh_nb Chat: \d+\.\d, \d+\.\d, \d+\.\d ms per step", out, re.M
    ), out


def test_the_standalone_server_benchmark_prints_both_ratios_and_throughputs() -> None:
    import os
    import shutil

    if not (shutil.which("nginx") or os.access("/usr/sbin/nginx", os.X_OK)):
        if os.environ.get("CI"):
            raise AssertionError("nginx is not installed: .ci/run installs it")
        import pytest

        pytest.skip("nginx is not installed")
    out = run(
        str(BENCHMARKS / "mcp.py"),
        *("--only", "standalone", "--calls", "3", "--rounds", "1"),
        *("--starts", "1", "--batches", "1", "--in-flight", "5"),
    )
    for unit in ("ms/call", "s"):
        assert f"| server | median {unit} | min {unit} | x the SDK |" in out
    assert (
        len(
            re.findall(
                r"^\| dsh_nb serve \| \d+\.\d\d \| \d+\.\d\d \| \d+\.\d\dx \|$",
                out,
                re.M,
            )
        )
        == 2
    )
    assert re.search(
        r"^dsh_nb serve: \d+\.\d\dx the SDK \(\w+ the <= 1\.2x target\)$", out, re.M
    )
    assert re.search(
        r"^dsh_nb serve: \d+\.\d\dx the SDK \(\w+ the <= 1\.5x target\)$", out, re.M
    )
    assert "### 20 concurrent calls (4 clients x 5 in flight) through nginx" in out
    for setup in ("1 process", "2 stateless processes"):
        assert re.search(
            rf"^- {setup}: \d+\.\d\d s \(median \d+\.\d\d s, \d+ calls/s\)$", out, re.M
        ), out


def test_evals_benchmark_prints_every_row() -> None:
    out = run(
        str(BENCHMARKS / "evals.py"),
        *("--trials", "40", "--report-trials", "60", "--rounds", "1"),
    )
    for row in ("bare SDK", "Chat alone", "run_eval"):
        assert re.search(
            rf"^\| {row} \| \d+\.\d\d \| \d+\.\d\d \| [+-]\d+\.\d\d \| \d+\.\d\d \| "
            r"\d+\.\d\d \|$",
            out,
            re.M,
        ), out
    assert re.search(r"^run_eval added wall time: [+-]\d+\.\d\d s", out, re.M), out
    assert re.search(r"^harness's own CPU per trial .*: -?\d+\.\d{3} ms$", out, re.M)
    assert re.search(r"^- harness's own CPU per trial: -?\d+\.\d{3} ms$", out, re.M)
    assert re.search(r"^## A report of 60 trials \(6 failures, 0 of them", out, re.M)
    assert re.search(r"^- saved JSON: \d+\.\d MB \(target < 50 MB: met\)", out, re.M)
    assert re.search(r"^- HTML: \d+\.\d\d MB \(target < 2 MB: met\)", out, re.M)


def test_bfcl_grading_benchmark_prints_the_simple_python_figure() -> None:
    out = run(str(BENCHMARKS / "bfcl_grading.py"), "--repeat", "1")
    assert re.search(r"^simple_python +400 cases .* 400 pass\)$", out, re.M), out
    assert re.search(r"^live_multiple +1053 cases ", out, re.M), out
    assert re.search(
        r"^grading the 400 simple_python answers: \d+\.\d\d ms \((under|OVER) the 1 s target\)$",
        out,
        re.M,
    ), out


def test_bfcl_load_benchmark_prints_each_ratio_and_the_case_cost() -> None:
    out = run(
        str(BENCHMARKS / "bfcl_load.py"),
        *("--repeat", "1", "--category", "simple_python", "--category", "multiple"),
    )
    for category in ("simple_python", "multiple"):
        row = rf"^{category} +\d+\.\dms +\d+\.\dms +\d+\.\dx$"
        assert re.search(row, out, re.M), out
    assert re.search(r"^worst ratio \d+\.\dx: (meets|misses) the target", out, re.M)
    assert re.search(r"^Case construction \d+\.\d us: (meets|misses)", out, re.M)


def test_load_benchmark_sets_the_load_against_import_ipywidgets() -> None:
    out = run(
        str(BENCHMARKS / "load.py"), "--kernels", "1", "--load-only", "--no-warm-up"
    )
    assert re.search(
        r"^  median: \d+\.\d ms \(target <= 150 ms: (OK|OVER)\)$", out, re.M
    )
    for label in ("round trip", "wall in kernel", "CPU in kernel"):
        assert re.search(
            rf"^  median {label}: %load_ext \d+\.\d ms, import ipywidgets "
            r"\d+\.\d ms \((OK|OVER)\)$",
            out,
            re.M,
        ), out
    assert "call overhead" not in out  # --load-only
