"""A tool talks back in a real kernel: its card's progress bar and log lines,
a question answered by a click and on the kernel's stdin, and a request to
the model (``ctx.sample``) after an approval.

One ipykernel for the module (``kernel_harness``); the cells ``await``
calls through the kernel's runner, and the test reads the card's JSON
payload and HTML fallback as the kernel sent them, clicks the form's
widgets the way a browser does, and answers ``input_request`` on the stdin
channel as VS Code does. The model is the replay server on loopback,
reached by the official openai client that ``%config DshChat`` configures.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
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
from dsh_nb.tools import SamplingUnavailable
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

@tool
async def summarise(text: str, ctx: ToolContext) -> str:
    try:
        said = await ctx.sample("Summarise: " + text, system="One line.", max_tokens=20)
    except SamplingUnavailable as exc:
        return "unavailable: " + str(exc)
    return "model: " + said

reg.register(work)
reg.register(pick)
reg.register(summarise)

import os
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import Turn

model = ReplayServer(
    lambda r: Turn(text="summary of " + r.body["messages"][-1]["content"])
).start()
os.environ["DSH_TEST_MODEL_KEY"] = model.token
get_ipython().run_line_magic("config", f"DshChat.base_url = {model.openai_url!r}")
%config DshChat.api_key_env = "DSH_TEST_MODEL_KEY"
%config DshChat.model = "replayed"

def use(frontend, headless="unavailable"):
    state.config.frontend = frontend
    state.config.headless_outcome = headless
    ipywidgets.Widget._control_comm = None

def events(*kinds):
    print(json.dumps([(e["type"], e["data"]) for e in state.agent.session.events
                      if e["type"] in kinds]))
"""

VSCODE = {"cellId": "vscode-notebook-cell:/work/talk.ipynb#W2sZmlsZQ%3D%3D"}
SUMMARISE = (
    'r = await dsh_nb.call("summarise", text="notes"); print(r.content[0]["text"])'
)


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(SETUP, timeout=120)
        yield harness


def journal(kernel: KernelHarness, *kinds: str) -> list[Any]:
    args = ", ".join(repr(k) for k in kinds)
    out: list[Any] = json.loads(kernel.run(f"events({args})").stdout)
    return out


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


def test_a_question_is_answered_on_the_kernels_stdin(kernel: KernelHarness) -> None:
    # VS Code's request: input allowed, no widget manager's metadata.
    kernel.run('use("auto")')
    msg_id = kernel.execute_async(
        'r = await dsh_nb.call("pick"); print(r.content[0]["text"])',
        metadata=VSCODE,
        allow_stdin=True,
    )
    request = kernel.wait_input(msg_id)
    assert "Which file?" in request["content"]["prompt"]
    assert "b.csv" in request["content"]["prompt"]
    kernel.answer_input("b.csv", request)
    reply = kernel.collect(msg_id, timeout=30).check()
    assert reply.stdout.strip() == "accept:b.csv"
    assert journal(kernel, "tool/answer")[-1][1]["content"] == {"value": "b.csv"}


def sample_lines(card: dict[str, Any]) -> list[tuple[str, str]]:
    lines = card.get("talk", {}).get("lines", [])
    return [
        (line["level"], line["text"]) for line in lines if line["source"] == "sample"
    ]


def test_a_sample_goes_to_the_chat_model_after_an_approval(
    kernel: KernelHarness,
) -> None:
    kernel.run('use("interactive")')
    before = len(journal(kernel, "approval/asked"))
    msg_id = kernel.execute_async(SUMMARISE)
    kernel.click(kernel.find_button("Allow once", parent=msg_id, timeout=30))
    reply = kernel.collect(msg_id, timeout=30).check()
    assert reply.stdout.strip() == "model: summary of Summarise: notes"
    card = last_card(reply)
    assert card["status"] == "done" and "approval" not in card  # the call was not asked
    assert sample_lines(card) == [
        ("info", "asks the model (replayed): Summarise: notes"),
        ("info", "the model answered: summary of Summarise: notes"),
    ]
    assert (
        "the model answered: summary of Summarise: notes" in reply.data("text/html")[-1]
    )
    asked = journal(kernel, "approval/asked")
    assert len(asked) == before + 1
    assert asked[-1][1]["toolName"] == "summarise:sample"
    assert asked[-1][1]["reason"] == "asks the model 'replayed': \"Summarise: notes\""
    assert journal(kernel, "approval/decided")[-1][1]["outcome"] == "allowed-once"
    sampled = journal(kernel, "tool/sample", "tool/sampled")[-2:]
    assert [kind for kind, _ in sampled] == ["tool/sample", "tool/sampled"]
    assert sampled[0][1]["prompt"] == "Summarise: notes"
    assert sampled[1][1]["text"] == "summary of Summarise: notes"
    sent = json.loads(kernel.run("print(json.dumps(model.requests[-1].body))").stdout)
    assert sent["model"] == "replayed" and sent["max_tokens"] == 20
    assert sent["messages"][0] == {"role": "system", "content": "One line."}


def test_a_rejected_sample_is_an_error_the_tool_sees(kernel: KernelHarness) -> None:
    kernel.run('use("interactive")')
    requests = int(kernel.run("print(len(model.requests))").stdout)
    msg_id = kernel.execute_async(SUMMARISE)
    kernel.click(kernel.find_button("Reject", parent=msg_id, timeout=30))
    reply = kernel.collect(msg_id, timeout=30).check()
    why = 'the model request of tool "summarise" was rejected'
    assert reply.stdout.strip() == "unavailable: " + why
    assert ("warning", why) in sample_lines(last_card(reply))
    assert int(kernel.run("print(len(model.requests))").stdout) == requests


def test_headless_a_sample_gets_the_headless_outcome(kernel: KernelHarness) -> None:
    kernel.run('use("headless")')
    out = kernel.run(SUMMARISE, timeout=30).check().stdout.strip()
    assert out.startswith('unavailable: the model request of tool "summarise" was')
    assert "DshConfig.headless_outcome" in out
    kernel.run('use("headless", headless="allowed-once")')
    out = kernel.run(SUMMARISE, timeout=30).check().stdout.strip()
    assert out == "model: summary of Summarise: notes"


def test_a_policy_row_for_the_sample_decides_without_asking(
    kernel: KernelHarness,
) -> None:
    kernel.run('use("headless")')  # nobody to ask: only the row can allow
    kernel.run("%tool_policy allow summarise:sample")
    try:
        out = kernel.run(SUMMARISE, timeout=30).check().stdout.strip()
        assert out == "model: summary of Summarise: notes"
        kernel.run("%tool_policy deny summarise:sample")
        out = kernel.run(SUMMARISE, timeout=30).check().stdout.strip()
        assert out == (
            'unavailable: the model request of tool "summarise" is denied '
            "by %tool_policy"
        )
    finally:
        kernel.run("%tool_policy --clear summarise:sample")


def test_without_a_model_the_tool_hears_what_to_set(kernel: KernelHarness) -> None:
    kernel.run('use("headless", headless="allowed-once")')
    kernel.run('%config DshChat.model = ""')
    try:
        out = kernel.run(SUMMARISE, timeout=30).check().stdout.strip()
    finally:
        kernel.run('%config DshChat.model = "replayed"')
    assert out.startswith("unavailable: ")
    assert "%config DshChat.model = 'NAME'" in out


def test_a_sample_allowed_for_the_session_on_stdin(kernel: KernelHarness) -> None:
    kernel.run('use("auto")')
    msg_id = kernel.execute_async(SUMMARISE, metadata=VSCODE, allow_stdin=True)
    request = kernel.wait_input(msg_id)
    prompt = request["content"]["prompt"]
    assert prompt.startswith("Approve tool call? summarise:sample: asks the model")
    assert "Summarise: notes" in prompt
    kernel.answer_input("s", request)
    reply = kernel.collect(msg_id, timeout=30).check()
    assert reply.stdout.strip() == "model: summary of Summarise: notes"
    try:
        # The session's rule answers the next sample: nobody is asked.
        kernel.run('use("headless")')
        out = kernel.run(SUMMARISE, timeout=30).check().stdout.strip()
        assert out == "model: summary of Summarise: notes"
        rule = journal(kernel, "approval/rule")[-1][1]
        assert (rule["toolName"], rule["rule"]) == ("summarise:sample", "allow")
    finally:
        kernel.run("%tool_policy --clear summarise:sample")


SAMPLER = Path(__file__).resolve().parents[1] / "mcp" / "sampling_server.py"


def test_a_connected_servers_sample_and_question_are_in_its_calls_card(
    kernel: KernelHarness,
) -> None:
    kernel.run('use("interactive")')
    kernel.run(
        "import sys\n"
        f'conn = await dsh_nb.connect_mcp("sdk", command=[sys.executable, {str(SAMPLER)!r}])',
        timeout=120,
    ).check()
    try:
        msg_id = kernel.execute_async(
            'r = await dsh_nb.call("sdk_summarise", text="q3"); '
            'print(r.content[0]["text"])'
        )
        allow = kernel.find_button("Allow once", parent=msg_id, timeout=60)
        kernel.click(allow)
        reply = kernel.collect(msg_id, timeout=60).check()
        assert reply.stdout.strip() == "dsh_nb said: summary of Summarise: q3"
        card = last_card(reply)
        assert card["tool"] == "sdk_summarise" and card["status"] == "done"
        assert sample_lines(card) == [
            ("info", "asks the model (replayed): Summarise: q3"),
            ("info", "the model answered: summary of Summarise: q3"),
        ]
        asked = journal(kernel, "approval/asked")[-1][1]
        assert asked["toolName"] == "sdk_summarise:sample"
        sent = json.loads(
            kernel.run("print(json.dumps(model.requests[-1].body))").stdout
        )
        assert sent["messages"][0] == {
            "role": "system",
            "content": "Answer in one line.",
        }

        # Refused: the server hears why, as the MCP error the client sent.
        msg_id = kernel.execute_async(
            'r = await dsh_nb.call("sdk_summarise", text="q4"); '
            'print(r.content[0]["text"])'
        )
        kernel.click(kernel.find_button("Reject", parent=msg_id, timeout=60))
        said = kernel.collect(msg_id, timeout=60).check().stdout.strip()
        assert said == (
            'refused: the model request of tool "sdk_summarise" was rejected'
        )

        # No model configured: the server hears what to set.
        kernel.run('%config DshChat.model = ""')
        try:
            said = (
                kernel.run(
                    'r = await dsh_nb.call("sdk_summarise", text="q5"); '
                    'print(r.content[0]["text"])',
                    timeout=60,
                )
                .check()
                .stdout.strip()
            )
        finally:
            kernel.run('%config DshChat.model = "replayed"')
        assert said.startswith('refused: tool "sdk_summarise" asked the model, but')
        assert "%config DshChat.model = 'NAME'" in said

        # A question from the stdio server: its form is under its call's card
        # too (the server's request arrives in the connection's own task).
        msg_id = kernel.execute_async(
            'r = await dsh_nb.call("sdk_who"); print(r.content[0]["text"])'
        )
        kernel.click(kernel.find_button("Answer", parent=msg_id, timeout=60))
        said = kernel.collect(msg_id, timeout=60).check().stdout.strip()
        assert said == "accept: ada"
    finally:
        kernel.run("await conn.close()", timeout=60)
