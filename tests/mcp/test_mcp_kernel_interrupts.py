"""``%tools serve`` in a real kernel: a tool's interrupt is an error result.

Issue 34 §2.2: a body raising KeyboardInterrupt (sync or async), or a return
whose ``str`` raises it, killed the kernel through ``%tools serve``. Each is
now an error result for the client; the kernel stays alive, still serves,
and still runs cells.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcpkit import ERAS, client

sys.path.insert(0, str(Path(__file__).parents[1] / "notebook"))
from kernel_harness import KernelHarness

HERE = str(Path(__file__).parent)
EXPECTED = {
    "kbi_sync": "Error: KeyboardInterrupt",
    "kbi_async": "Error: KeyboardInterrupt",
    "gen_exit": "Error: GeneratorExit",
    "gen_exit_sync": "Error: GeneratorExit",
    "kbi_str": "Error: KeyboardInterrupt",
    "listened": "Error: the call was interrupted (KeyboardInterrupt)",
}
SETUP = f"""
%load_ext dsh_nb
import sys
sys.path.insert(0, {HERE!r})
import dsh_nb, interrupting_tools as _it
reg = dsh_nb.registry()
for _name in {[*sorted(EXPECTED), "add"]!r}:
    reg.register(_it.registry.get(_name))
reg.on_pre_execute(_it.interrupting_listener)
"""

_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2)


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(SETUP, timeout=60)
        yield harness


def in_client(kernel: KernelHarness, coro_fn: Any, timeout: float = 90) -> Any:
    fut = _POOL.submit(lambda: asyncio.run(coro_fn()))
    kernel.wait_for(fut.done, timeout=timeout, what="the MCP client")
    return fut.result()


def test_served_interrupts_are_error_results_and_the_kernel_lives(
    kernel: KernelHarness,
) -> None:
    msg_id = kernel.execute_async("%tools serve")
    kernel.collect(msg_id, timeout=60).check()
    runtime = kernel.tmp / "runtime"
    kernel.wait_for(lambda: list(runtime.glob("dsh-mcp-*.json")), timeout=20)
    entry = json.loads(next(runtime.glob("dsh-mcp-*.json")).read_text())

    async def go() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for mode in ERAS:
            for name in EXPECTED:
                async with client(entry["url"], entry["token"], mode=mode) as c:
                    result = await c.call_tool(name, {})
                    seen[f"{mode}:{name}"] = (result.is_error, result.content[0].text)
            async with client(entry["url"], entry["token"], mode=mode) as c:
                done = await c.call_tool("add", {"a": 2, "b": 3})
                seen[f"{mode}:add"] = (done.is_error, done.content[0].text)
        return seen

    seen = in_client(kernel, go)
    for mode in ERAS:
        for name, text in EXPECTED.items():
            assert seen[f"{mode}:{name}"] == (True, text)
        assert seen[f"{mode}:add"] == (False, "5")
    assert kernel.is_alive()
    assert kernel.run("print(1 + 1)").stdout.strip() == "2"
    # A direct call of one of them from a cell is an error result too.
    reply = kernel.run("r = %call kbi_async {}\nprint(r.text)")
    assert reply.stdout.strip() == "Error: KeyboardInterrupt"
