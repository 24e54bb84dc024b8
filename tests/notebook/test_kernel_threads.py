"""Sync tools run off the kernel's loop, in a real ipykernel (issue 10 item 7).

A sync tool that sleeps 1 s under a 200 ms timeout settles as TOOL_TIMEOUT
on time, its print lands in its own cell, the card says the body may still
be running, and another cell's call completes while it sleeps.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kernel_harness import KernelHarness

from dsh_nb.cards import CARD_MIME

NAP = '''%%tool --timeout 200ms
def nap(s: float) -> str:
    """Sleep in the body, ignoring the signal."""
    import time
    print("napping")
    time.sleep(s)
    return "rested"
'''

DOZE = '''%%tool
def doze(s: float) -> str:
    """Sleep in the body, with no timeout of its own."""
    import time
    time.sleep(s)
    return "rested"
'''

ADD = '''%%tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)
'''


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run("%load_ext dsh_nb\nimport asyncio, time, dsh_nb")
        harness.run(NAP)
        harness.run(DOZE)
        harness.run(ADD)
        yield harness


def test_a_sync_timeout_settles_on_time(kernel: KernelHarness) -> None:
    reply = kernel.run(
        "t0 = time.perf_counter()\n"
        'r = await dsh_nb.call("nap", s=1.0)\n'
        "elapsed = time.perf_counter() - t0\n"
        "print(r.error.code, elapsed < 0.6)"
    )
    # What the body printed is in its card, not loose in the cell.
    assert reply.stdout.splitlines() == ["TOOL_TIMEOUT True"]
    final = [
        m["content"]["data"][CARD_MIME]
        for m in reply.of_type("update_display_data")
        if CARD_MIME in m["content"]["data"]
    ][-1]
    assert final["status"] == "timed-out"
    assert final["talk"]["lines"][0]["text"] == "napping"
    texts = [block["text"] for block in final["result"]["content"]]
    assert texts[0] == "Error: tool call timed out after 200ms"
    assert "may still be running in a worker thread" in texts[-1]


def test_another_cells_call_completes_while_a_body_sleeps(
    kernel: KernelHarness,
) -> None:
    kernel.run(
        'slow = asyncio.ensure_future(dsh_nb.call("doze", s=1.5))\n'
        "t0 = time.perf_counter()"
    )
    other = kernel.run(
        'r = await dsh_nb.call("add", a=1, b=2)\n'
        "print(r.text, slow.done(), time.perf_counter() - t0 < 1.0)"
    )
    assert other.stdout.strip() == "3 False True"
    late = kernel.run("r = await slow\nprint(r.text, time.perf_counter() - t0 > 1.4)")
    assert late.stdout.strip() == "rested True"
