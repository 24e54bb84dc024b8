"""The magics in a real ipykernel, driven over ZMQ as a notebook frontend does."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from kernel_harness import KernelHarness, Reply

from dsh_nb.cards import CARD_MIME

EXT = "dsh_nb"  # the public name; in-process tests load the module path

ADD = '''%%tool --timeout 5s
def add(a: int, b: int = 2) -> str:
    """Add two integers."""
    return str(a + b)
'''


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run(f"%load_ext {EXT}")
        yield harness


def _cards(reply: Reply) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(msg_type, display_id, card payload) for every card message."""
    return [
        (
            m["msg_type"],
            m["content"]["transient"]["display_id"],
            m["content"]["data"][CARD_MIME],
        )
        for m in reply.of_type("display_data", "update_display_data")
        if CARD_MIME in m["content"]["data"]
    ]


def test_load_keeps_jsonschema_unimported(kernel: KernelHarness) -> None:
    reply = kernel.run(
        "import sys; print('jsonschema' in sys.modules, 'tool' in get_ipython().magics_manager.magics['cell'])"
    )
    assert reply.stdout.strip() == "False True"


def test_define_and_call_sends_one_card_updated_in_place(kernel: KernelHarness) -> None:
    defined = kernel.run(ADD)
    [shown] = defined.of_type("display_data")
    assert shown["content"]["data"]["text/plain"].startswith(
        "tool 'add' registered (timeout 5s)"
    )
    reply = kernel.run('%call add {"a": 40}')
    cards = _cards(reply)
    # A sync body runs in a worker thread, so the card shows it running.
    assert [(kind, card["status"]) for kind, _, card in cards] == [
        ("display_data", "pending"),
        ("update_display_data", "running"),
        ("update_display_data", "done"),
    ]
    assert len({display_id for _, display_id, _ in cards}) == 1
    final = cards[-1][2]
    assert final["tool"] == "add" and final["isError"] is False
    assert final["result"]["content"] == [{"type": "text", "text": "42"}]
    bundle = reply.of_type("update_display_data")[-1]["content"]
    assert {"text/html", "text/plain", CARD_MIME} <= set(bundle["data"])
    assert bundle["metadata"][CARD_MIME]["meta"]["callId"] == final["callId"]
    assert reply.of_type("execute_result") == ()  # the card is the output


def test_a_slow_tool_shows_running(kernel: KernelHarness) -> None:
    kernel.run(
        "%%tool\nasync def nap(s: float) -> str:\n"
        "    import asyncio\n    await asyncio.sleep(s)\n    return 'rested'\n"
    )
    cards = _cards(kernel.run('%call nap {"s": 0.05}'))
    assert [card["status"] for _, _, card in cards] == ["pending", "running", "done"]
    assert len({display_id for _, display_id, _ in cards}) == 1


def test_redefine_and_call_forms(kernel: KernelHarness) -> None:
    kernel.run(ADD.replace("a + b", "a * b"))
    reply = kernel.run('%%call -o res add\n{"a": 6, "b": 7}\n')
    assert _cards(reply)[-1][2]["result"]["content"][0]["text"] == "42"
    assert kernel.run("print(res.text, res.is_error)").stdout == "42 False\n"
    kernel.run("import dsh_nb.notebook.extension as ext")
    direct = kernel.run("r = await ext.call('add', a=2, b=5); print(r.text)")
    assert direct.stdout == "10\n" and _cards(direct)[-1][2]["status"] == "done"


def test_bad_cells_fail_with_one_line(kernel: KernelHarness) -> None:
    reply = kernel.execute("%%tool\ndef f(a: type) -> str:\n    return ''\n")
    assert reply.status == "error"
    assert reply.content["ename"] == "UsageError"
    assert reply.content["traceback"] == []
    assert reply.stderr.startswith("UsageError: %%tool 'f': ")
    unknown = kernel.execute("%call ad {}")
    assert unknown.content["evalue"] == "unknown tool 'ad'; did you mean 'add'?"


def test_exports_arrive_as_json(kernel: KernelHarness) -> None:
    kernel.run(ADD)
    [result] = kernel.run("%tools --openai").of_type("execute_result")
    data = result["content"]["data"]
    assert "application/json" not in data  # JupyterLab would collapse it
    assert "add" in [t["function"]["name"] for t in json.loads(data["text/plain"])]
    assert data["text/html"].startswith('<pre class="dsh-JsonListing mathjax_ignore')


def test_dispatch_and_headless_policy(kernel: KernelHarness) -> None:
    kernel.run(ADD.replace("%%tool", "%%tool --ask"))
    kernel.run('%config DshConfig.headless_outcome = "allowed-once"')
    try:
        reply = kernel.run(
            "import dsh_nb.notebook.extension as ext\n"
            "msgs = await ext.dispatch([{'id': 'k1', 'type': 'function', "
            "'function': {'name': 'add', 'arguments': '{\"a\": 1, \"b\": 1}'}}])\n"
            "print(msgs)"
        )
    finally:
        kernel.run('%config DshConfig.headless_outcome = "unavailable"')
    assert reply.stdout == "[{'role': 'tool', 'tool_call_id': 'k1', 'content': '2'}]\n"
    final = _cards(reply)[-1][2]
    assert (final["callId"], final["status"], final["approval"]) == (
        "k1",
        "done",
        "allowed-once",
    )
    denied = kernel.run('%call add {"a": 1}')
    assert _cards(denied)[-1][2]["status"] == "denied"


def test_unload_and_load_again(kernel: KernelHarness) -> None:
    kernel.run(f"%unload_ext {EXT}")
    gone = kernel.execute("%tools")
    assert gone.status == "error" and "not found" in gone.content["evalue"]
    kernel.run(f"%load_ext {EXT}")
    assert kernel.run("%tools").result is not None
