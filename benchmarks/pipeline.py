"""Per-call cost of the full pipeline, next to langchain-core and the MCP SDK.

Run: ``python benchmarks/pipeline.py``. Prints median µs per call for an
``add(a, b)`` tool and a 10-field nested-object tool through validation,
materialisation, 3 pre-execute listeners, 1 guard, 1 wrapper, 1
post-execute listener and 2 observers; the peers where installed; and how
the per-call cost changes from 1 to 1,000 registered tools.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import (
    ADD_ARGS,
    PROFILE_ARGS,
    add,
    full_registry,
    langchain_tools,
    machine,
    mcp_server,
    measure,
    measure_async,
    ours,
    table,
)

from dsh_nb.tools import ToolRegistry, tool


def main() -> None:
    registry = full_registry()
    rows: list[tuple[str, str, float | None, str]] = []
    for name, args in (("add", ADD_ARGS), ("profile", PROFILE_ARGS)):
        rows.append(
            (
                "dsh_nb full pipeline",
                name,
                measure_async(ours(registry, name, args)),
                "",
            )
        )
    bare = ToolRegistry()
    bare.register(tool(add))
    rows.append(
        ("dsh_nb, no listeners", "add", measure_async(ours(bare, "add", ADD_ARGS)), "")
    )

    lc = langchain_tools()
    for name, args in (("add", ADD_ARGS), ("profile", PROFILE_ARGS)):
        if lc is None:
            rows.append(
                ("langchain-core StructuredTool.invoke", name, None, "not installed")
            )
        else:
            t = lc[name]
            rows.append(
                (
                    "langchain-core StructuredTool.invoke",
                    name,
                    measure(lambda t=t, a=args: t.invoke(a)),
                    "",
                )
            )
    server = mcp_server()
    for name, args in (("add", ADD_ARGS), ("profile", PROFILE_ARGS)):
        if server is None:
            rows.append(("MCP SDK call_tool", name, None, "not installed"))
        else:
            rows.append(
                (
                    "MCP SDK call_tool",
                    name,
                    measure_async(lambda n=name, a=args: server.call_tool(n, a)),
                    "",
                )
            )
    rows.append(
        ("plain Python call", "add", measure(lambda: add(1, 2)), "no validation")
    )
    print(f"machine: {machine()}")
    print(table(rows))
    print()
    print("per-call cost of `add` by number of registered tools:")
    for count in (1, 10, 100, 1000):
        reg = full_registry(extra_tools=count - 1)
        print(f"  {count:>5} tools: {measure_async(ours(reg, 'add', ADD_ARGS)):.1f} µs")


if __name__ == "__main__":
    main()
