"""Shared tools and timing for the benchmark scripts (not a test)."""

from __future__ import annotations

import asyncio
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from dsh_nb.tools import (
    Accept,
    Agent,
    Allow,
    ToolExecutionInput,
    ToolRegistry,
    tool,
)

# benchmarks/mcp.py is named like the MCP SDK, and a script run from this
# folder has the folder first on sys.path, so ``import mcp`` (here, or inside
# openai-agents) would find the script. Every script imports this module
# first; it moves the folder to the end of the path once, for all of them.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.append(str(_HERE))


@dataclass
class Address:
    street: str
    city: str
    zip: str


@dataclass
class Prefs:
    theme: Literal["light", "dark"]
    lang: str


ADD_ARGS: dict[str, Any] = {"a": 1, "b": 2}
PROFILE_ARGS: dict[str, Any] = {
    "name": "Ada",
    "age": 36,
    "email": "ada@example.org",
    "tags": ["math", "engines"],
    "active": True,
    "score": 9.5,
    "address": {"street": "1 Loop Rd", "city": "London", "zip": "N1"},
    "prefs": {"theme": "dark", "lang": "en"},
    "notes": "first programmer",
    "priority": "high",
}


def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


async def add_async(a: int, b: int) -> str:
    """Add two integers, on the loop: ``add``'s async twin."""
    return str(a + b)


def profile(
    name: str,
    age: int,
    email: str,
    tags: list[str],
    active: bool,
    score: float,
    address: Address,
    prefs: Prefs,
    notes: str,
    priority: Literal["low", "high"],
) -> str:
    """Store a 10-field profile."""
    return f"{name} {age} {address.city} {prefs.theme}"


def full_registry(
    extra_tools: int = 0, *, sync_tools: Literal["inline", "thread"] = "inline"
) -> ToolRegistry:
    """Our pipeline with the brief's listener set around both tools."""
    registry = ToolRegistry(sync_tools=sync_tools)
    registry.register(tool(add))
    registry.register(tool(add_async))
    registry.register(tool(profile))
    for i in range(extra_tools):
        registry.register(tool(name=f"filler_{i}")(add))
    add_listeners(registry)
    return registry


def add_listeners(registry: ToolRegistry) -> None:
    """3 pre-execute listeners, 1 guard, 1 wrapper, 1 post, 2 observers."""
    for _ in range(3):
        registry.on_pre_execute(lambda ex, next_: next_())
    registry.guard(lambda ex: None)

    async def wrapper(ex: Any, next_: Callable[[], Awaitable[Any]]) -> Any:
        return await next_()

    registry.on_execute(wrapper)
    registry.on_post_execute(lambda ex, result, next_: next_())
    registry.on_result(lambda ex, result: None)
    registry.on_result(lambda ex, result: None)
    assert Allow and Accept  # the listeners above delegate to these defaults


def kernel_registry(
    *, sync_tools: Literal["inline", "thread"] = "inline"
) -> tuple[ToolRegistry, Agent]:
    """The same listener set as the notebook's registry runs it: traced, journaled.

    A trace observer that keeps each call's records (as the live card
    does), and calls made by an agent inside an open turn, so the core
    writes ``tool/call`` and ``tool/result`` to its session log. With
    ``sync_tools="thread"`` sync bodies run in a worker thread, as the
    notebook's registry runs them.
    """
    registry = full_registry(sync_tools=sync_tools)
    kept: list[Any] = [None]

    def keep_trace(ex: Any, result: Any, records: Any) -> None:
        kept[0] = records

    registry.on_trace(keep_trace)
    agent = Agent("notebook")
    agent.session.start_turn()
    return registry, agent


def notebook_registry() -> tuple[ToolRegistry, Agent, Callable[[], None]]:
    """The notebook's own registry, built by the code ``%load_ext`` runs.

    ``KernelState(None, DshConfig())`` installed with no IPython shell: its
    policy table, depth check, ``running`` wrapper, timeout policy,
    approval service, trace observer and worker threads, plus the brief's
    listener set and both tools. Calls are made by its agent in an open
    turn; the card (``LiveCall``) is not part of the call. Returns the
    registry, the agent and the state's dispose.
    """
    from dsh_nb.notebook.config import DshConfig
    from dsh_nb.notebook.state import KernelState

    state = KernelState(None, DshConfig())
    state.install()
    registry = state.registry
    registry.register(tool(add))
    registry.register(tool(add_async))
    registry.register(tool(profile))
    add_listeners(registry)
    state.agent.session.start_turn()
    return registry, state.agent, state.dispose


@dataclass(frozen=True, eq=False)
class Case:
    """One row to time: ``call()`` is one call (its awaitable if ``is_async``)."""

    peer: str
    tool: str
    call: Callable[[], Any]
    is_async: bool
    note: str = ""


def interleaved(
    cases: list[Case],
    *,
    rounds: int = 61,
    batch_ms: float = 5.0,
    clock: Callable[[], float] = time.perf_counter,
    samples: list[list[float]] | None = None,
) -> list[float]:
    """Median µs per call of each case, timed round-robin.

    ``samples``, when given, receives every case's per-round figures (one
    list per case, rounds in order), for ratios taken round by round.

    Each round times one short batch of every case in turn, so a noisy
    neighbour on a shared machine slows every row alike and the ratios
    between rows hold even when the absolute numbers drift. Batch sizes
    are calibrated first (best of three timings, so one pause cannot
    shrink a batch) so each batch takes about ``batch_ms``. With
    ``clock=time.process_time`` a batch counts only this process's CPU
    time, so time spent descheduled on a busy machine does not count.
    """

    async def batch(case: Case, n: int) -> float:
        call = case.call
        start = clock()
        if case.is_async:
            for _ in range(n):
                await call()
        else:
            for _ in range(n):
                call()
        return clock() - start

    async def fastest(case: Case, n: int) -> float:
        # The best of three: one garbage-collector pass (100 ms once the
        # SDKs are imported) inside a calibration batch once made a row's
        # batch a single call, so it timed one cache-cold call per batch.
        return min([await batch(case, n) for _ in range(3)])

    async def run() -> list[float]:
        sizes = []
        for case in cases:
            n = 16
            while (took := await fastest(case, n)) < batch_ms / 4000 and n < 1 << 20:
                n *= 2
            sizes.append(max(1, round(n * batch_ms / 1000 / max(took, 1e-9))))
        timed: list[list[float]] = [[] for _ in cases]
        for _ in range(rounds):
            for case, n, out in zip(cases, sizes, timed, strict=True):
                out.append(await batch(case, n) / n * 1e6)
        if samples is not None:
            samples[:] = timed
        return [statistics.median(s) for s in timed]

    return asyncio.run(run())


def paired_ratio(over: list[float], under: list[float]) -> tuple[float, float, float]:
    """Median and quartiles of ``over[i] / under[i]``, round by round.

    Two rows timed next to each other in each round see the same machine,
    so their per-round ratio cancels the VM's speed drift (up to 2x within
    a run), which a ratio of two medians taken over the run does not.
    """
    ratios = sorted(a / b for a, b in zip(over, under, strict=True))
    q1, q2, q3 = statistics.quantiles(ratios, n=4)
    return q2, q1, q3


def ours(
    registry: ToolRegistry,
    name: str,
    args: dict[str, Any],
    agent: Agent | None = None,
) -> Callable[[], Any]:
    call = ToolExecutionInput(call_id="c1", name=name, arguments=args, agent=agent)
    return lambda: registry.execute(call)


def yardstick() -> int:
    """A fixed pure-Python workload: a machine-speed reference in the same run.

    Dict, str and call traffic like a tool call's, no I/O. The VM's speed
    drifts up to 2x within an hour, so a per-call cost is best compared
    across runs in yardsticks (its time over this one's).
    """
    total = 0
    for i in range(60):
        record = {"i": i, "text": str(i)}
        total += len(record["text"]) + abs(record["i"])
    return total


def machine() -> str:
    return (
        f"{platform.python_implementation()} {platform.python_version()} on "
        f"{platform.machine()}, {platform.system()} {platform.release()}"
    )


def langchain_tools() -> dict[str, Any] | None:
    """StructuredTool versions of the same two tools, or None."""
    try:
        from langchain_core.tools import StructuredTool
    except ImportError:
        return None
    return {
        "add": StructuredTool.from_function(add),
        "profile": StructuredTool.from_function(profile),
    }


def mcp_server() -> Any | None:
    """An MCP SDK server with the same two tools, or None."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError:
        try:
            from mcp.server.fastmcp import FastMCP as MCPServer
        except ImportError:
            return None
    server = MCPServer("bench")
    server.tool()(add)
    server.tool()(profile)
    return server


def table(rows: list[tuple[str, str, float | None, str]]) -> str:
    """Format (peer, tool, µs, note) rows with ratios to ours."""
    ours_by_tool = {t: us for peer, t, us, _ in rows if peer == "dsh_nb full pipeline"}
    lines = [
        "| implementation | tool | median µs/call | × ours | note |",
        "|---|---|---:|---:|---|",
    ]
    for peer, name, us, note in rows:
        if us is None:
            lines.append(f"| {peer} | {name} | – | – | {note} |")
            continue
        base = ours_by_tool.get(name)
        ratio = f"{us / base:.2f}" if base else "–"
        lines.append(f"| {peer} | {name} | {us:.1f} | {ratio} | {note} |")
    return "\n".join(lines)
