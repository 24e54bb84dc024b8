"""Approvals on the kernel's stdin, in a real kernel driven as VS Code drives it.

VS Code, Colab and the classic Notebook cannot run here, so the test plays
them at the protocol level with ``jupyter_client`` (``kernel_harness``):
every ``execute_request`` has ``allow_stdin: true`` and VS Code's request
metadata (a ``cellId``, none of JupyterLab's keys); the prompt arrives as an
``input_request`` on the stdin channel and is answered with an
``input_reply``, as those frontends answer ``input()``. The same kernel
also plays a runner (``allow_stdin: false``, no metadata: headless) and
JupyterLab (its metadata: buttons).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from kernel_harness import KernelHarness, Reply
from test_kernel_approvals import CANCELLED, DENIED, RAN, SETUP

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
from mcpkit import client

VSCODE = {"cellId": "vscode-notebook-cell:/work/demo.ipynb#W2sZmlsZQ%3D%3D"}
LAB = {"cellId": "c-lab", "deletedCells": [], "recordTiming": False}
CALL = 'show(await dsh_nb.call("delete", path="a.txt"))'
ANSWERS = (
    "[y/yes/once = allow once, s/session = allow for this session, "
    "n/no/r/reject = reject]: "
)
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=1)


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(SETUP, timeout=60)
        yield harness


@pytest.fixture(autouse=True)
def auto(kernel: KernelHarness) -> None:
    kernel.run('use(frontend="auto")\nstate.clear_policy("delete", everything=True)')


def vscode(kernel: KernelHarness, code: str = CALL) -> str:
    """Run ``code`` as VS Code runs a cell; return the request's msg_id."""
    return kernel.execute_async(code, metadata=VSCODE, allow_stdin=True)


def audit(kernel: KernelHarness) -> list[list[Any]]:
    data = json.loads(kernel.run("audit(1)").stdout)
    last: list[list[Any]] = data["last"]
    return last


def lines(reply: Reply) -> list[str]:
    return reply.stdout.splitlines()


def asked(kernel: KernelHarness, msg_id: str) -> list[Mapping[str, Any]]:
    kernel.pump()
    return [m for m in kernel.input_requests if m["parent_header"]["msg_id"] == msg_id]


def test_y_allows_once_and_the_card_reads_as_after_a_click(
    kernel: KernelHarness,
) -> None:
    msg_id = vscode(kernel)
    request = kernel.wait_input(msg_id)
    prompt = request["content"]["prompt"]
    assert prompt == (
        "Approve tool call? delete: deleting is irreversible | path=a.txt " + ANSWERS
    )
    assert request["content"]["password"] is False

    def shown(mime: str) -> list[Any]:
        return [
            m["content"]["data"][mime]
            for m in kernel.messages(msg_id)
            if mime in m["content"].get("data", {})
        ]

    kernel.wait_for(
        lambda: any(
            c["status"] == "awaiting-approval"
            for c in shown("application/vnd.dsh.tool-card+json")
        ),
        what="the card awaiting approval",
    )
    assert any("input box" in text for text in shown("text/plain"))
    kernel.answer_input("y", request)
    reply = kernel.collect(msg_id, timeout=10).check()
    assert lines(reply) == [RAN]
    card = reply.data("application/vnd.dsh.tool-card+json")[-1]
    assert card["approval"] == "allowed-once"
    assert card["status"] == "done"
    assert not any("approval: " in t for t in reply.data("text/plain"))
    assert not kernel.buttons("Allow once", parent=msg_id, include_closed=True)
    assert audit(kernel) == [["delete", "allowed-once"]]
    assert len(asked(kernel, msg_id)) == 1


@pytest.mark.parametrize("word", ["yes", "ONCE", " y "])
def test_every_allow_word(kernel: KernelHarness, word: str) -> None:
    msg_id = vscode(kernel)
    kernel.answer_input(word, kernel.wait_input(msg_id))
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [RAN]


@pytest.mark.parametrize("word", ["n", "no", "r", "reject", "", "\x04"])
def test_every_reject_word_and_an_empty_line(kernel: KernelHarness, word: str) -> None:
    msg_id = vscode(kernel)
    kernel.answer_input(word, kernel.wait_input(msg_id))
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [DENIED]
    assert audit(kernel) == [["delete", "rejected"]]


def test_s_allows_for_the_session(kernel: KernelHarness) -> None:
    first = vscode(kernel)
    kernel.answer_input("s", kernel.wait_input(first))
    assert lines(kernel.collect(first, timeout=10).check()) == [RAN]
    rules = kernel.run(
        "print(json.dumps([e['data'] for e in state.agent.session.events "
        "if e['type'] == 'approval/rule'][-1]))"
    ).stdout
    assert json.loads(rules)["scope"] == "session"
    again = vscode(kernel)
    assert lines(kernel.collect(again, timeout=10).check()) == [RAN]
    assert asked(kernel, again) == []  # allowed for the session: not asked


def test_bad_answers_ask_again_three_times_then_reject(kernel: KernelHarness) -> None:
    msg_id = vscode(kernel)
    for n, word in enumerate(["maybe", "\x1b[2Jq", "yess", "nah"]):
        request = kernel.wait_input(msg_id, after=n)
        if n:
            assert request["content"]["prompt"].startswith("'")
            assert "is not one of the answers (y, s, n)" in request["content"]["prompt"]
        kernel.answer_input(word, request)
    reply = kernel.collect(msg_id, timeout=10).check()
    assert lines(reply) == [DENIED]
    prompts = [m["content"]["prompt"] for m in asked(kernel, msg_id)]
    assert len(prompts) == 4
    assert prompts[1].startswith("'maybe' is not one of the answers")
    assert prompts[2].startswith("'[U+001B][2Jq' is not one")  # never raw ESC
    assert audit(kernel) == [["delete", "rejected"]]


def test_a_bad_answer_then_a_good_one(kernel: KernelHarness) -> None:
    msg_id = vscode(kernel)
    kernel.answer_input("what?", kernel.wait_input(msg_id))
    kernel.answer_input("yes", kernel.wait_input(msg_id, after=1))
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [RAN]


def test_controls_in_arguments_are_shown_bounded_on_one_line(
    kernel: KernelHarness,
) -> None:
    code = 'show(await dsh_nb.call("delete", path="x\\n\\u202eevil\\x1b" + "z" * 500))'
    msg_id = vscode(kernel, code)
    request = kernel.wait_input(msg_id)
    prompt = request["content"]["prompt"]
    assert "\n" not in prompt and "\x1b" not in prompt and "\u202e" not in prompt
    assert "x[U+000A][U+202E]evil[U+001B]" in prompt
    assert len(prompt) < 500
    kernel.answer_input("n", request)
    kernel.collect(msg_id, timeout=10).check()


def test_the_timeout_cancels_a_waiting_prompt(kernel: KernelHarness) -> None:
    kernel.run("use(frontend='auto', timeout=0.5)")
    started = time.monotonic()
    msg_id = vscode(kernel)
    kernel.wait_input(msg_id)
    reply = kernel.collect(msg_id, timeout=10).check()
    elapsed = time.monotonic() - started
    print(f"0.5 s approval timeout on stdin -> cell reply after {elapsed:.2f} s")
    assert lines(reply) == [CANCELLED]
    assert 0.5 <= elapsed < 5.0
    assert audit(kernel) == [["delete", "cancelled"]]


def test_an_interrupt_cancels_and_a_late_answer_reaches_nothing(
    kernel: KernelHarness,
) -> None:
    msg_id = vscode(kernel)
    stale = kernel.wait_input(msg_id)
    kernel.interrupt()
    reply = kernel.collect(msg_id, timeout=10).check()
    assert lines(reply) == [CANCELLED]
    assert audit(kernel) == [["delete", "cancelled"]]
    assert kernel.run("print(1 + 1)").stdout == "2\n"
    kernel.answer_input("y", stale)  # typed into the old box, too late
    after = vscode(kernel)
    fresh = kernel.wait_input(after)
    time.sleep(0.3)
    kernel.answer_input("n", fresh)
    assert lines(kernel.collect(after, timeout=10).check()) == [DENIED]


TWO_CALLS = """
msgs = await ext.dispatch({"role": "assistant", "tool_calls": [
    {"id": "t1", "type": "function",
     "function": {"name": "delete", "arguments": '{"path": "first.txt"}'}},
    {"id": "t2", "type": "function",
     "function": {"name": "delete", "arguments": '{"path": "second.txt"}'}},
]})
print(json.dumps([m["content"] for m in msgs]))
"""


def test_two_prompts_of_one_model_step_are_asked_in_order(
    kernel: KernelHarness,
) -> None:
    msg_id = vscode(kernel, TWO_CALLS)
    first = kernel.wait_input(msg_id)
    assert "path=first.txt" in first["content"]["prompt"]
    time.sleep(0.5)
    assert len(asked(kernel, msg_id)) == 1  # the second waits its turn
    kernel.answer_input("y", first)
    second = kernel.wait_input(msg_id, after=1)
    assert "path=second.txt" in second["content"]["prompt"]
    kernel.answer_input("n", second)
    reply = kernel.collect(msg_id, timeout=10).check()
    contents = json.loads(reply.stdout)
    assert contents[0] == "deleted first.txt"
    assert "rejected" in contents[1]


async def _call_ping(url: str, token: str) -> str:
    async with client(url, token) as c:
        result = await c.call_tool("ping", {})
        return str(result.content[0].text)  # type: ignore[union-attr]


def test_the_loop_serves_mcp_and_tasks_while_a_prompt_waits(
    kernel: KernelHarness,
) -> None:
    serve = kernel.execute_async(
        "reg.register(ToolDefinition(name='ping', description='Ping.', "
        "parameters={'type': 'object', 'properties': {}}, "
        "execute=lambda args, ex: 'pong'))\n"
        "ticks = []\n"
        "async def _tick():\n"
        "    while True:\n"
        "        ticks.append(time.monotonic()); await asyncio.sleep(0.05)\n"
        "import time\n"
        "ticker = asyncio.ensure_future(_tick())\n"
        "%tools serve"
    )
    kernel.collect(serve, timeout=60).check()
    runtime = kernel.tmp / "runtime"
    kernel.wait_for(lambda: list(runtime.glob("dsh-mcp-*.json")), timeout=20)
    entry = json.loads(next(runtime.glob("dsh-mcp-*.json")).read_text())
    msg_id = vscode(kernel)
    request = kernel.wait_input(msg_id)
    before = time.monotonic()
    served = _POOL.submit(lambda: asyncio.run(_call_ping(entry["url"], entry["token"])))
    kernel.wait_for(served.done, timeout=60, what="the MCP call")
    assert served.result() == "pong"
    time.sleep(0.5)
    kernel.answer_input("y", request)
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [RAN]
    span = kernel.run(
        f"print(sum(1 for t in ticks if t > time.monotonic() - "
        f"{time.monotonic() - before + 0.2}))"
    ).stdout
    print(f"background task ticked {span.strip()} times while the prompt waited")
    assert int(span) >= 5
    kernel.run("ticker.cancel()\n%tools serve --stop")


def test_a_runner_gets_the_headless_outcome_without_a_prompt(
    kernel: KernelHarness,
) -> None:
    reply = kernel.execute(CALL, timeout=10).check()  # allow_stdin false
    assert json.loads(reply.stdout)[0] is True
    assert asked(kernel, reply.msg_id) == []
    assert audit(kernel) == [["delete", "unavailable"]]


def test_jupyterlab_gets_buttons_not_stdin(kernel: KernelHarness) -> None:
    msg_id = kernel.execute_async(CALL, metadata=LAB, allow_stdin=True)
    kernel.click(kernel.find_button("Allow once", parent=msg_id))
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [RAN]
    assert asked(kernel, msg_id) == []


def test_frontend_stdin_forces_stdin_and_headless_where_input_is_refused(
    kernel: KernelHarness,
) -> None:
    kernel.run('use(frontend="stdin")')
    msg_id = kernel.execute_async(CALL, metadata=LAB, allow_stdin=True)
    kernel.answer_input("y", kernel.wait_input(msg_id))
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [RAN]
    reply = kernel.execute(CALL, timeout=10).check()
    assert json.loads(reply.stdout)[0] is True
    assert audit(kernel) == [["delete", "unavailable"]]


def test_frontend_interactive_keeps_buttons_in_vscode(kernel: KernelHarness) -> None:
    kernel.run('use(frontend="interactive")')
    msg_id = vscode(kernel)
    kernel.click(kernel.find_button("Reject", parent=msg_id))
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [DENIED]
    assert asked(kernel, msg_id) == []


def test_a_stdin_prompt_answered_in_code(kernel: KernelHarness) -> None:
    """``pending_approvals()`` answers a stdin prompt as it answers buttons."""
    code = (
        "asyncio.get_running_loop().call_later(0.5, lambda: "
        "[p.approve() for p in dsh_nb.pending_approvals()])\n" + CALL
    )
    msg_id = vscode(kernel, code)
    kernel.wait_input(msg_id)
    assert lines(kernel.collect(msg_id, timeout=10).check()) == [RAN]
    assert audit(kernel) == [["delete", "allowed-once"]]


ASK_ROWS = """
from dsh_nb.notebook.asking import ask_person
from dsh_nb.cards.question import Question, Choice
got = await ask_person(Question(text="How many rows?", parse=int))
print(json.dumps([got.action, got.value]))
"""
ASK_COLOUR = """
from dsh_nb.notebook.asking import ask_person
from dsh_nb.cards.question import Question, Choice
q = Question(text="Colour?", choices=(
    Choice(value="red", label="red", words=("r", "red")),
    Choice(value="blue", label="blue", words=("b", "blue"))))
got = await ask_person(q)
print(json.dumps([got.action, got.value]))
"""


def test_ask_person_on_stdin_parses_and_asks_again(kernel: KernelHarness) -> None:
    msg_id = vscode(kernel, ASK_ROWS)
    first = kernel.wait_input(msg_id)
    assert first["content"]["prompt"] == "How many rows? "
    kernel.answer_input("many", first)
    again = kernel.wait_input(msg_id, after=1)
    assert again["content"]["prompt"].startswith("invalid literal for int()")
    kernel.answer_input("12", again)
    assert json.loads(kernel.collect(msg_id, timeout=10).check().stdout) == [
        "accept",
        12,
    ]


def test_ask_person_with_buttons_in_jupyterlab(kernel: KernelHarness) -> None:
    msg_id = kernel.execute_async(ASK_COLOUR, metadata=LAB, allow_stdin=True)
    kernel.click(kernel.find_button("Blue", parent=msg_id))
    reply = kernel.collect(msg_id, timeout=10).check()
    assert json.loads(reply.stdout) == ["accept", "blue"]
    assert asked(kernel, msg_id) == []


def test_ask_person_headless_and_timeout(kernel: KernelHarness) -> None:
    reply = kernel.execute(ASK_COLOUR, timeout=10).check()
    assert json.loads(reply.stdout) == ["unavailable", None]
    kernel.run("use(frontend='auto', timeout=0.3)")
    msg_id = vscode(kernel, ASK_COLOUR)
    kernel.wait_input(msg_id)
    assert json.loads(kernel.collect(msg_id, timeout=10).check().stdout) == [
        "cancel",
        None,
    ]


def test_a_call_outliving_its_cell_is_not_asked_on_stdin(
    kernel: KernelHarness,
) -> None:
    """The input box shows under a running cell only: a later ask is headless."""
    started = vscode(
        kernel,
        "async def _late():\n"
        "    await asyncio.sleep(0.5)\n"
        "    return await dsh_nb.call('delete', path='late.txt')\n"
        "late = asyncio.ensure_future(_late())",
    )
    kernel.collect(started, timeout=10).check()
    time.sleep(1.5)
    reply = kernel.run("print(json.dumps([late.done(), late.result().is_error]))")
    assert json.loads(reply.stdout) == [True, True]
    assert asked(kernel, started) == []
    assert audit(kernel) == [["delete", "unavailable"]]
