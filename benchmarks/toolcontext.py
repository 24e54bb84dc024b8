"""The cost of a tool that talks: 10,000 progress reports, 10,000 printed lines.

Run: ``python benchmarks/toolcontext.py``. Prints, per row, the wall time
of one call whose body reports progress 10,000 times in a tight loop (or
prints 10,000 lines, or logs them), and what reached the door: how many
progress reports and lines a hearer was told, and how many journal events
the call left. Rows:

* ``progress x10k, no door``: a bare ``registry.execute`` (journal only);
* ``progress x10k, door``: through the runner with a hearer, as the MCP
  server's and the notebook's calls are (throttled to ~10 reports/s);
* ``progress x10k, sync thread``: the same from a sync body on a worker
  thread (each report that goes out hops to the loop);
* ``print x10k, door``: a body that prints 10,000 lines (bounded to
  ``MAX_LINES`` lines and one "… N more lines");
* ``baseline``: the same body doing nothing, for the per-call floor.

The numbers are for reading, not asserting: the tests check the bounds.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

import _common  # noqa: F401 - puts this folder last on sys.path

from dsh_nb.tools import Agent, ToolContext, ToolExecutionInput, ToolRegistry, tool
from dsh_nb.tools.runner import CallRunner, DoorCall

N = 10_000


class Door:
    """A hearer that counts what it is told."""

    def __init__(self) -> None:
        self.progress_seen = 0
        self.lines = 0

    def progress(self, ctx: Any, report: Any) -> None:
        self.progress_seen += 1

    def log(self, ctx: Any, line: Any) -> None:
        self.lines += 1


@tool
async def reports(ctx: ToolContext) -> str:
    for i in range(N):
        await ctx.progress(i, N)
    return "ok"


@tool
def reports_sync(ctx: ToolContext) -> str:
    for i in range(N):
        ctx.progress(i, N)
    return "ok"


@tool
def prints() -> str:
    for i in range(N):
        print(f"line {i}")
    return "ok"


@tool
async def nothing() -> str:
    return "ok"


async def one(
    registry: ToolRegistry, name: str, door: Door | None
) -> tuple[float, int]:
    agent = Agent("bench")
    started = time.perf_counter()
    if door is None:
        await registry.execute(
            ToolExecutionInput(call_id="c", name=name, arguments={}, agent=agent)
        )
    else:
        await CallRunner(registry, talk=door).run(
            DoorCall(name=name, arguments={}), agent=agent
        )
    return time.perf_counter() - started, len(agent.session.events)


async def main() -> None:
    inline = ToolRegistry()
    threaded = ToolRegistry(sync_tools="thread")
    for registry in (inline, threaded):
        for t in (reports, reports_sync, prints, nothing):
            registry.register(t)
    rows = [
        ("baseline (empty body), door", inline, "nothing", True),
        ("progress x10k, no door", inline, "reports", False),
        ("progress x10k, door", inline, "reports", True),
        ("progress x10k, sync thread, door", threaded, "reports_sync", True),
        ("print x10k, door", inline, "prints", True),
    ]
    print(f"{'row':36} {'median ms':>10} {'told':>12} {'journal':>8}")
    for label, registry, name, with_door in rows:
        times = []
        door = None
        events = 0
        for _ in range(7):
            door = Door() if with_door else None
            took, events = await one(registry, name, door)
            times.append(took)
        told = "-" if door is None else f"{door.progress_seen}p/{door.lines}l"
        median = statistics.median(times) * 1000
        print(f"{label:36} {median:10.2f} {told:>12} {events:8d}")
    per = statistics.median(times) / N * 1e6
    print(f"\nlast row per line: {per:.2f} µs")


if __name__ == "__main__":
    asyncio.run(main())
