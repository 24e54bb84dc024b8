"""Median µs per tool call: dsh_nb's full pipeline next to its peers.

Run: ``python benchmarks/compare.py`` (peers come from the ``[bench]`` extra:
langchain-core, mcp, openai-agents; Node and npm for the TypeScript row).
Prints a markdown table and writes it, with the machine, to
``benchmarks/RESULTS.md``.

Rows, each for the same ``add(a, b)`` and 10-field nested ``profile`` tools:

- dsh_nb, the full pipeline: validation, lossless-JSON snapshots, 3
  pre-execute listeners, 1 guard, 1 execute wrapper, 1 post-execute listener
  and 2 result observers (``_common.full_registry``);
- langchain-core ``StructuredTool.invoke``;
- the MCP SDK server's ``call_tool``;
- openai-agents ``FunctionTool.on_invoke_tool`` with a minimal ``ToolContext``
  (its input is a JSON string, so its time includes ``json.loads``);
- the published TypeScript reference, ``@deepseek-ai/dsh-tools``, installed
  into a temporary folder and driven by ``ts_reference/bench.mjs`` under
  Node with the same listener set;
- a plain Python call of the same function (no validation at all).

A row whose library or runtime is missing is printed with a note, not
measured. The target is dsh_nb at most 0.1x langchain-core per call.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import functools
import json
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _common import (
    ADD_ARGS,
    PROFILE_ARGS,
    Address,
    Case,
    Prefs,
    add,
    full_registry,
    interleaved,
    langchain_tools,
    mcp_server,
    ours,
    profile,
    table,
)

HERE = Path(__file__).parent
TS_PACKAGE = "@deepseek-ai/dsh-tools"
TS_VERSION = "0.1.0-rc.8"
OURS = "dsh_nb full pipeline"
LANGCHAIN = "langchain-core StructuredTool.invoke"
TOOLS = (("add", ADD_ARGS), ("profile", PROFILE_ARGS))
FUNCTIONS: dict[str, Callable[..., Any]] = {"add": add, "profile": profile}
Row = tuple[str, str, "float | None", str]
NOTES = (
    "- dsh_nb: `await registry.execute(...)` with the arguments as a dict: "
    "validation, both lossless-JSON snapshots and freezes, 3 pre-execute "
    "listeners, 1 guard, 1 execute wrapper, 1 post-execute listener and 2 "
    "result observers; the event loop is already running.",
    "- langchain-core: `StructuredTool.invoke(dict)`, pydantic validation and "
    "the callback manager (no callbacks registered).",
    "- MCP SDK: the server object's `call_tool(name, dict)` in process, pydantic "
    "validation and result conversion; no transport, no session.",
    "- openai-agents: `on_invoke_tool(ToolContext, json_str)`, so it also "
    "parses JSON; tracing disabled.",
    "- TypeScript reference: `ToolRuntime.execute` from a cordis `Context` with "
    "the system-prompt plugin, the same listener set, under Node (see "
    "`ts_reference/bench.mjs`).",
    "- The machine is a shared 2-core VM whose speed drifts: on 2026-11-30 the "
    "same row measured up to 2x apart within an hour. The Python rows are timed "
    "round-robin, so the ratios between them hold; compare absolute numbers only "
    "within one run.",
)


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _run(
    cmd: list[str], timeout: float, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, check=False, **kwargs
    )


# -- Python peers ---------------------------------------------------------------
# Each returns the cases to time, or rows saying why a peer is missing.

Missing = list[Row]


def ours_cases() -> tuple[list[Case], Missing]:
    registry = full_registry()
    return [
        Case(OURS, name, ours(registry, name, args), True) for name, args in TOOLS
    ], []


def langchain_cases() -> tuple[list[Case], Missing]:
    tools = langchain_tools()
    if tools is None:
        return [], [
            (LANGCHAIN, name, None, "langchain-core not installed") for name, _ in TOOLS
        ]
    note = f"langchain-core {_version('langchain-core')}"
    return [
        Case(LANGCHAIN, name, functools.partial(tools[name].invoke, args), False, note)
        for name, args in TOOLS
    ], []


def mcp_cases() -> tuple[list[Case], Missing]:
    label = "MCP SDK server call_tool"
    server = mcp_server()
    if server is None:
        return [], [(label, name, None, "mcp not installed") for name, _ in TOOLS]
    note = f"mcp {_version('mcp')}, in-process (no transport)"
    return [
        Case(label, name, functools.partial(server.call_tool, name, args), True, note)
        for name, args in TOOLS
    ], []


def openai_agents_cases() -> tuple[list[Case], Missing]:
    label = "openai-agents FunctionTool.on_invoke_tool"
    try:
        import agents
        from agents import function_tool
        from agents.tool_context import ToolContext
    except ImportError:
        return [], [
            (label, name, None, "openai-agents not installed") for name, _ in TOOLS
        ]
    agents.set_tracing_disabled(True)  # no exporter, no network
    cases: list[Case] = []
    for name, args in TOOLS:
        fn = FUNCTIONS[name]
        tool = function_tool(fn)
        payload = json.dumps(args)
        # The smallest valid context: no run context object, the call's identity.
        context = ToolContext(
            context=None, tool_name=name, tool_call_id="c1", tool_arguments=payload
        )
        expected = fn(**_bound(name))
        got = asyncio.run(_settle(tool.on_invoke_tool(context, payload)))
        if got != expected:
            raise RuntimeError(
                f"openai-agents {name} returned {got!r}, not {expected!r}"
            )
        note = f"openai-agents {_version('openai-agents')}; input is a JSON string"
        call = functools.partial(tool.on_invoke_tool, context, payload)
        cases.append(Case(label, name, call, True, note))
    return cases, []


async def _settle(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _bound(name: str) -> dict[str, Any]:
    """The arguments a plain call gets: nested objects already built."""
    if name == "add":
        return dict(ADD_ARGS)
    return {
        **PROFILE_ARGS,
        "address": Address(**PROFILE_ARGS["address"]),
        "prefs": Prefs(**PROFILE_ARGS["prefs"]),
    }


def plain_cases() -> tuple[list[Case], Missing]:
    return [
        Case(
            "plain Python call",
            name,
            functools.partial(FUNCTIONS[name], **_bound(name)),
            False,
            "no validation, no pipeline",
        )
        for name, _ in TOOLS
    ], []


def python_rows(rounds: int, batch_ms: float) -> list[Row]:
    """Every Python row, timed round-robin (``_common.interleaved``)."""
    cases: list[Case] = []
    missing: list[Row] = []
    for build in (
        ours_cases,
        langchain_cases,
        mcp_cases,
        openai_agents_cases,
        plain_cases,
    ):
        more, absent = build()
        cases += more
        missing += absent
    timed = interleaved(cases, rounds=rounds, batch_ms=batch_ms)
    rows: list[Row] = [
        (c.peer, c.tool, us, c.note) for c, us in zip(cases, timed, strict=True)
    ]
    return rows + missing


# -- the TypeScript reference -----------------------------------------------------


def ts_rows(root: Path | None, batch: int) -> tuple[list[Row], str | None]:
    """Measure the reference under Node; returns rows and its Node version."""
    label = f"TypeScript reference {TS_PACKAGE}"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or (npm is None and root is None):
        note = "Node.js/npm not found: row skipped"
        print(note)
        return [(label, name, None, note) for name, _ in TOOLS], None
    node_version = _run([node, "--version"], 30).stdout.strip()
    temp: str | None = None
    try:
        if root is None:
            assert npm is not None
            listed = _run([npm, "view", TS_PACKAGE, "versions", "--json"], 120)
            if listed.returncode != 0 or TS_VERSION not in listed.stdout:
                note = (
                    f"{TS_PACKAGE}@{TS_VERSION} is not published/reachable: row skipped"
                )
                print(note)
                return [(label, name, None, note) for name, _ in TOOLS], node_version
            temp = tempfile.mkdtemp(prefix="dsh-ts-reference-")
            root = Path(temp)
            (root / "package.json").write_text('{"private": true}\n')
            print(f"installing {TS_PACKAGE}@{TS_VERSION} into {root} ...")
            installed = _run(
                [
                    npm,
                    "install",
                    "--no-audit",
                    "--no-fund",
                    f"{TS_PACKAGE}@{TS_VERSION}",
                ],
                600,
                cwd=root,
            )
            if installed.returncode != 0:
                note = f"npm install failed: {installed.stderr.strip()[-200:]}"
                print(note)
                return [(label, name, None, note) for name, _ in TOOLS], node_version
        env = {**os.environ, "DSH_TS_ROOT": str(root), "BATCH": str(batch)}
        ran = _run([node, str(HERE / "ts_reference" / "bench.mjs")], 900, env=env)
        if ran.returncode != 0:
            note = f"bench.mjs failed: {ran.stderr.strip()[-300:]}"
            print(note)
            return [(label, name, None, note) for name, _ in TOOLS], node_version
        out = json.loads(ran.stdout.strip().splitlines()[-1])
        note = f"{out['version']} on Node {out['node']}"
        return [
            (label, name, float(out[name]), note) for name, _ in TOOLS
        ], node_version
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)


# -- the report ----------------------------------------------------------------------


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe_machine(node_version: str | None) -> list[str]:
    load = (
        ", ".join(f"{x:.2f}" for x in os.getloadavg())
        if hasattr(os, "getloadavg")
        else "n/a"
    )
    return [
        f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores",
        f"- OS: {platform.system()} {platform.release()} ({platform.machine()})",
        f"- Python: {platform.python_implementation()} {platform.python_version()}",
        f"- Node: {node_version or 'not available'}",
        f"- dsh_nb {_version('dsh_nb') or '(source tree)'}",
        f"- load average at start (1, 5, 15 min): {load}",
    ]


def verdict(rows: list[Row]) -> list[str]:
    lines = []
    for name, _ in TOOLS:
        mine = next((us for p, t, us, _ in rows if p == OURS and t == name), None)
        peer = next((us for p, t, us, _ in rows if p == LANGCHAIN and t == name), None)
        if mine is None or peer is None:
            lines.append(f"- `{name}`: langchain-core not measured; target not checked")
            continue
        ratio = mine / peer
        status = "met" if ratio <= 0.1 else "NOT met"
        lines.append(
            f"- `{name}`: dsh_nb {mine:.1f} µs = {ratio:.3f}x langchain-core "
            f"{peer:.1f} µs (target <= 0.1x: {status})"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=61, help="round-robin rounds (median)"
    )
    parser.add_argument(
        "--batch-ms", type=float, default=5.0, help="length of one timed batch"
    )
    parser.add_argument("--no-ts", action="store_true", help="skip the TypeScript row")
    parser.add_argument(
        "--ts-root",
        type=Path,
        help="a folder already holding node_modules/@deepseek-ai/dsh-tools",
    )
    parser.add_argument(
        "--output", type=Path, default=HERE / "RESULTS.md", help="where to write"
    )
    args = parser.parse_args()
    rounds = args.rounds
    rows = python_rows(rounds, args.batch_ms)
    node_version = None
    if args.no_ts:
        rows += [
            (f"TypeScript reference {TS_PACKAGE}", n, None, "skipped (--no-ts)")
            for n, _ in TOOLS
        ]
    else:
        ts, node_version = ts_rows(args.ts_root, 500)
        rows += ts
    rendered = table(rows)
    machine = describe_machine(node_version)
    target = verdict(rows)
    print("\n".join(machine))
    print()
    print(rendered)
    print()
    print("\n".join(target))
    # Sections other scripts wrote (benchmarks/models.py) are kept.
    kept = ""
    if args.output.exists():
        old = args.output.read_text(encoding="utf-8")
        marker = old.find("\n<!-- written by ")
        kept = old[marker:] if marker != -1 else ""
    args.output.write_text(
        "\n".join(
            [
                "# Per-call cost next to the peers",
                "",
                "Written by `python benchmarks/compare.py`: µs per call. The Python "
                f"rows are timed round-robin, {rounds} rounds of one batch of each "
                f"row (about {args.batch_ms:g} ms of sequential calls), so a noisy "
                "neighbour slows every row alike; each row reports its median. "
                "The TypeScript row is the median of its own rounds under Node. "
                "`× ours` is the row's time over dsh_nb's for the same tool. "
                "Each peer runs the same two functions from `benchmarks/_common.py`.",
                "",
                "## Machine",
                "",
                *machine,
                "",
                "## Results",
                "",
                rendered,
                "",
                "## Target: dsh_nb at most 0.1x langchain-core per call",
                "",
                *target,
                "",
                "## What each row includes",
                "",
                *NOTES,
                "",
            ]
        )
        + kept
    )
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
