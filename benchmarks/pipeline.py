"""Per-call cost of the full pipeline, next to pydantic and the SDKs' tools.

Run: ``python benchmarks/pipeline.py``. Prints median µs per call (rows timed
round-robin in this process's CPU time, so machine noise hits them alike)
for an ``add(a, b)`` tool and a 10-field nested-object tool through
validation, materialisation, 3 pre-execute listeners, 1 guard, 1 wrapper, 1
post-execute listener and 2 observers, on a bare registry and on one set up
as the notebook's (a trace observer, calls by an agent, so the core also
traces and journals); the same with sync bodies in a worker thread, as the
notebook runs them; the notebook's own registry (``KernelState``, built
without a shell) with the same listeners; the peers where installed; and
how the per-call cost changes from 1 to 1,000 registered tools. The CPU
clock counts every thread of the process, so the worker-thread rows
include the worker's time, not the wait for it. The ``hop`` rows time the
thread hop alone for the same body: dsh_nb's ``run_sync`` next to
``loop.run_in_executor``, ``asyncio.to_thread``, anyio and Starlette
(``_threadhop.py``). ``add_async`` is ``add``'s async twin (it runs on
the loop on every registry), for the guards printed last.

Both tools are signature tools (``@tool def add(a: int, b: int)``), so our
rows include the pydantic validation and conversion ``@tool`` builds; their
notes say so. Beside them, in the same run: pydantic's ``validate_call`` on
the same functions (validation alone, no pipeline), openai-agents'
``FunctionTool.on_invoke_tool`` (its input is a JSON string), the MCP SDK
server's ``call_tool`` and langchain-core.
"""

from __future__ import annotations

import argparse
import time

from _common import (
    ADD_ARGS,
    PROFILE_ARGS,
    Case,
    add,
    full_registry,
    interleaved,
    kernel_registry,
    langchain_tools,
    machine,
    mcp_server,
    notebook_registry,
    ours,
    paired_ratio,
    table,
    yardstick,
)
from _threadhop import OURS as HOP
from _threadhop import thread_hop_cases
from compare import openai_agents_cases

from dsh_nb.tools import ToolRegistry, tool

TOOLS = (("add", ADD_ARGS), ("profile", PROFILE_ARGS))
TWIN = "add_async"
LANGCHAIN = "langchain-core StructuredTool.invoke"
OURS = "dsh_nb full pipeline"
SIGNATURE = {
    "add": "signature tool: @tool def add(a: int, b: int), pydantic strict",
    "profile": "signature tool: 10 fields, 2 dataclasses, Literal",
}
TRACED = "dsh_nb, kernel-style registry"
THREAD = "dsh_nb, kernel-style, sync tool in worker thread"
NOTEBOOK = "dsh_nb, the notebook's registry (KernelState)"
YARDSTICK = "yardstick"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=61, help="round-robin rounds (median)"
    )
    rounds = parser.parse_args().rounds
    registry = full_registry()
    kernel, agent = kernel_registry()
    bare = ToolRegistry()
    bare.register(tool(add))
    cases = [Case(OURS, n, ours(registry, n, a), True, SIGNATURE[n]) for n, a in TOOLS]
    cases += [
        Case(TRACED, n, ours(kernel, n, a, agent), True, "trace + journal")
        for n, a in TOOLS
    ]
    threaded, threaded_agent = kernel_registry(sync_tools="thread")
    cases += [
        Case(THREAD, n, ours(threaded, n, a, threaded_agent), True, "+ thread hop")
        for n, a in TOOLS
    ]
    notebook, notebook_agent, dispose_notebook = notebook_registry()
    cases += [
        Case(
            NOTEBOOK,
            n,
            ours(notebook, n, a, notebook_agent),
            True,
            "+ its own hooks, timeout policy, worker thread; no card",
        )
        for n, a in TOOLS
    ]
    cases += [
        Case(peer, TWIN, ours(reg, TWIN, ADD_ARGS, who), True, "async twin of add")
        for peer, reg, who in (
            (OURS, registry, None),
            (THREAD, threaded, threaded_agent),
            (NOTEBOOK, notebook, notebook_agent),
        )
    ]
    cases.append(Case("dsh_nb, no listeners", "add", ours(bare, "add", ADD_ARGS), True))
    hop_cases, missing, dispose_hops = thread_hop_cases()
    cases += hop_cases
    cases += validate_call_cases()
    agents_cases, agents_missing = openai_agents_cases()
    cases += agents_cases
    missing += agents_missing
    lc = langchain_tools()
    for name, args in TOOLS:
        label = LANGCHAIN
        if lc is None:
            missing.append((label, name, None, "not installed"))
        else:
            invoke = lc[name].invoke
            cases.append(Case(label, name, lambda f=invoke, a=args: f(a), False))
    server = mcp_server()
    for name, args in TOOLS:
        if server is None:
            missing.append(("MCP SDK call_tool", name, None, "not installed"))
        else:
            call = server.call_tool
            cases.append(
                Case(
                    "MCP SDK call_tool",
                    name,
                    lambda n=name, a=args, c=call: c(n, a),
                    True,
                )
            )
    cases.append(
        Case("plain Python call", "add", lambda: add(1, 2), False, "no validation")
    )
    cases.append(Case(YARDSTICK, "", yardstick, False))
    try:
        per_round: list[list[float]] = []
        timed = interleaved(
            cases, rounds=rounds, clock=time.process_time, samples=per_round
        )
    finally:
        dispose_notebook()
        dispose_hops()
        if threaded.threads is not None:
            threaded.threads.shutdown(wait=False, cancel_futures=True)
    by_peer = {(c.peer, c.tool): us for c, us in zip(cases, timed, strict=True)}
    unit = by_peer.pop((YARDSTICK, ""))
    rows = [(c.peer, c.tool, by_peer[c.peer, c.tool], c.note) for c in cases[:-1]]
    rows += missing
    print(f"machine: {machine()}")
    print(table(rows))
    print(
        f"yardstick (_common.yardstick, fixed pure-Python work): {unit:.1f} µs; "
        f"dsh_nb in yardsticks, comparable across runs: "
        f"add {by_peer[OURS, 'add'] / unit:.2f}, "
        f"profile {by_peer[OURS, 'profile'] / unit:.2f}"
    )
    row = {(c.peer, c.tool): i for i, c in enumerate(cases)}
    for name, _ in TOOLS:
        traced, plain = by_peer[TRACED, name], by_peer[OURS, name]
        ratio, low, high = paired_ratio(
            per_round[row[TRACED, name]], per_round[row[OURS, name]]
        )
        print(
            f"{name}: kernel-style (trace + journal) {traced:.1f} µs = "
            f"{traced / plain:.2f}x bare {plain:.1f} µs; round by round "
            f"{ratio:.2f}x (quartiles {low:.2f}-{high:.2f}; target <= 1.3x); "
            f"{traced / unit:.2f} yardsticks"
        )
    for name, _ in TOOLS:
        hop, traced = by_peer[THREAD, name], by_peer[TRACED, name]
        whole, plain = by_peer[NOTEBOOK, name], by_peer[OURS, name]
        print(
            f"{name}: sync body in a worker thread {hop:.1f} µs = "
            f"{hop / plain:.2f}x bare (the thread hop: {hop - traced:+.1f} µs "
            f"over kernel-style); the notebook's registry {whole:.1f} µs = "
            f"{whole / plain:.2f}x bare"
        )
    hop = by_peer[HOP, "hop"]
    peers = ", ".join(
        f"{c.peer} {by_peer[c.peer, 'hop']:.1f} µs ({by_peer[c.peer, 'hop'] / hop:.2f}x)"
        for c in hop_cases[1:]
    )
    print(f"the thread hop alone: {HOP} {hop:.1f} µs; {peers}")
    guards(by_peer)
    print()
    print("per-call cost of `add` by number of registered tools:")
    counts = (1, 10, 100, 1000)
    scale = [
        Case(f"{count}", "add", ours(full_registry(count - 1), "add", ADD_ARGS), True)
        for count in counts
    ]
    scaled = interleaved(scale, rounds=max(1, rounds // 2), clock=time.process_time)
    for count, us in zip(counts, scaled, strict=True):
        print(f"  {count:>5} tools: {us:.1f} µs")


def guards(by_peer: dict[tuple[str, str], float]) -> None:
    """Print the issue 20 guards, each with its figures and whether it holds."""
    bare = by_peer[OURS, "add"]
    held = "met" if bare <= 25 else "MISSED"
    print(f"guard: bare pipeline add {bare:.1f} µs (<= 25 µs: {held})")
    lc = by_peer.get((LANGCHAIN, "add"))
    if lc is not None:
        held = "met" if bare <= 0.15 * lc else "MISSED"
        print(
            f"guard: bare add = {bare / lc:.3f}x langchain-core {lc:.1f} µs "
            f"(<= 0.15x: {held})"
        )
    kernel, plain = by_peer[NOTEBOOK, TWIN], by_peer[OURS, TWIN]
    held = "met" if kernel <= 2.5 * plain else "MISSED"
    print(
        f"guard: the notebook's registry, async tool {kernel:.1f} µs = "
        f"{kernel / plain:.2f}x bare {plain:.1f} µs (<= 2.5x: {held})"
    )
    hop = by_peer["asyncio.to_thread", "hop"]
    for peer in (THREAD, NOTEBOOK):
        extra = by_peer[peer, "add"] - by_peer[peer, TWIN]
        held = "met" if extra <= 1.5 * hop else "MISSED"
        print(
            f"guard: {peer}: sync add - async twin = {extra:+.1f} µs = "
            f"{extra / hop:.2f} asyncio.to_thread hops of {hop:.1f} µs "
            f"(<= 1.5: {held})"
        )


def validate_call_cases() -> list[Case]:
    """pydantic's own decorator on the same functions: validation, then call."""
    import pydantic
    from _common import profile

    out = []
    for name, fn, args in (("add", add, ADD_ARGS), ("profile", profile, PROFILE_ARGS)):
        checked = pydantic.validate_call(fn)
        out.append(
            Case(
                "pydantic validate_call",
                name,
                lambda c=checked, a=args: c(**a),
                False,
                f"pydantic {pydantic.VERSION}, lax; no pipeline",
            )
        )
    return out


if __name__ == "__main__":
    main()
