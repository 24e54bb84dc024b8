"""A tool talks back in a real kernel: its card's progress bar and log lines,
and a question answered by a click.

One ipykernel for the module (``kernel_harness``); the cells ``await``
calls through the kernel's runner, and the test reads the card's JSON
payload and HTML fallback as the kernel sent them, and clicks the form's
widgets the way a browser does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from kernel_harness import KernelHarness, Reply

CARD = "application/vnd.dsh.tool-card+json"

SETUP = """
%load_ext dsh_nb
import asyncio, json, logging
from typing import Literal
import dsh_nb, ipywidgets
from dsh_nb import tool, ToolContext
from dsh_nb.notebook import extension as ext

state = ext.current_state()
reg = dsh_nb.registry()

@tool
async def work(steps: int, ctx: ToolContext) -> str:
    for i in range(1, steps + 1):
        await ctx.progress(i, steps, f"step {i}")
        await asyncio.sleep(0.15)
    print("printed by the tool")
    logging.getLogger("work.tool").warning("a warning record")
    for i in range(12):
        ctx.log(f"line {i}")
    return "worked"

@tool
async def pick(ctx: ToolContext) -> str:
    answer = await ctx.ask("Which file?", type=Literal["a.csv", "b.csv"])
    return f"{answer.action}:{answer.value}"

reg.register(work)
reg.register(pick)

def use(frontend):
    state.config.frontend = frontend
    ipywidgets.Widget._control_comm = None
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(SETUP, timeout=120)
        yield harness


def last_card(reply: Reply) -> dict[str, Any]:
    cards = reply.data(CARD)
    assert cards, reply.text
    card: dict[str, Any] = cards[-1]
    return card


def test_progress_and_log_lines_land_in_the_card_not_the_cell(
    kernel: KernelHarness,
) -> None:
    reply = kernel.run(
        'r = await dsh_nb.call("work", steps=3); print(r.content[0]["text"])',
        timeout=60,
    ).check()
    assert reply.stdout.strip() == "worked"  # the tool's print is not here
    card = last_card(reply)
    assert card["status"] == "done"
    talk = card["talk"]
    assert talk["progress"] == {"progress": 3.0, "total": 3.0, "message": "step 3"}
    texts = [(line["source"], line["text"]) for line in talk["lines"]]
    assert ("stdout", "printed by the tool") in texts
    assert ("logging", "a warning record") in texts
    assert ("log", "line 11") in texts
    # Every update of the card while it ran carried the bar as it stood.
    seen = [c["talk"]["progress"]["progress"] for c in reply.data(CARD) if "talk" in c]
    assert seen == sorted(seen) and seen[0] < 3.0
    html = reply.data("text/html")[-1]
    assert "dsh-ToolCard-progress" in html and "width:100.0%" in html
    assert "log (14 lines)" in html  # folded: more than a few lines
    assert "printed by the tool" in html


def test_a_question_is_a_form_answered_by_a_click(kernel: KernelHarness) -> None:
    kernel.run('use("interactive")')
    msg_id = kernel.execute_async(
        'r = await dsh_nb.call("pick"); print(r.content[0]["text"])'
    )
    # One choice: the person channel's buttons, one per answer.
    choice = kernel.find_button("B.csv", parent=msg_id, timeout=30)
    kernel.click(choice)
    reply = kernel.collect(msg_id, timeout=30).check()
    assert reply.stdout.strip() == "accept:b.csv"
    events = json.loads(
        kernel.run(
            "print(json.dumps([e['type'] for e in state.agent.session.events"
            " if e['type'] in ('tool/ask', 'tool/answer')]))"
        ).stdout
    )
    assert events[-2:] == ["tool/ask", "tool/answer"]


def test_headless_a_question_is_declined(kernel: KernelHarness) -> None:
    kernel.run('use("headless")')
    reply = kernel.run(
        'r = await dsh_nb.call("pick"); print(r.content[0]["text"])', timeout=30
    ).check()
    assert reply.stdout.strip() == "decline:None"
