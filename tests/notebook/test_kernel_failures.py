"""A tool that raises, in a real kernel: its card, ``%debug`` and the journal.

The card carries the exception's type, message and traceback (dsh_nb's
frames collapsed), the model still reads only ``Error: <message>``, the
journal's ``tool/result`` keeps the type and a bounded, redacted
traceback, and ``%debug`` (scripted through a real IPython ``Pdb``) opens
at the tool's own frame, after ``%call`` and after ``%%chat`` alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from kernel_harness import KernelHarness, Reply

from dsh_nb.cards import CARD_MIME
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn

TOOL = '''%%tool
SECRET = "sk-test-" + "0123456789abcdef0123"

def _parse(text):
    return int(text + SECRET[:0])

def broken(text: str) -> int:
    """Parse a number, badly."""
    from dsh_nb.tools.audit.secrets import add_secret
    add_secret(SECRET)
    if text == "leak":
        raise RuntimeError(f"token {SECRET} refused")
    return _parse(text) * 2
'''

DEBUG = """
import io
from IPython.core.debugger import Pdb
script = io.StringIO("p text\\nwhere\\nq\\n")
get_ipython().InteractiveTB.pdb = Pdb(stdin=script, stdout=__import__("sys").stdout)
get_ipython().run_line_magic("debug", "")
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run("%load_ext dsh_nb")
        harness.run(TOOL)
        yield harness


def _card(reply: Reply) -> Mapping[str, Any]:
    cards = [
        m["content"]["data"][CARD_MIME]
        for m in reply.of_type("display_data", "update_display_data")
        if CARD_MIME in m["content"]["data"]
    ]
    assert cards, reply.stdout + reply.stderr
    return cards[-1]


def test_the_card_shows_type_message_and_traceback(kernel: KernelHarness) -> None:
    card = _card(kernel.run('%call broken {"text": "abc"}'))
    assert card["isError"] is True
    message = "invalid literal for int() with base 10: 'abc'"
    assert card["result"]["content"] == [{"type": "text", "text": f"Error: {message}"}]
    failure = card["failure"]
    assert (failure["type"], failure["message"]) == ("ValueError", message)
    text = failure["traceback"]
    assert "in broken" in text and "in _parse" in text
    assert "dsh_nb frames: the call's pipeline]" in text
    assert "/dsh_nb/" not in text.replace("dsh_nb frames", "")


def test_debug_opens_the_tools_frame_after_call(kernel: KernelHarness) -> None:
    kernel.run('%call broken {"text": "xyz"}')
    out = kernel.run(DEBUG).stdout
    assert "'xyz'" in out  # `p text` in _parse's frame
    tail = kernel.run(
        "import sys\ntb = sys.last_traceback\nwhile tb.tb_next: tb = tb.tb_next\n"
        "print(tb.tb_frame.f_code.co_name, type(sys.last_value).__name__)"
    )
    assert tail.stdout == "_parse ValueError\n"


def test_debug_opens_the_tools_frame_after_chat(kernel: KernelHarness) -> None:
    with ReplayServer() as server:
        server.add(
            Turn(tool_calls=(ToolCallSpec(name="broken", arguments='{"text": "qq"}'),)),
            Turn(text="The tool failed."),
        )
        kernel.run(
            "import os, sys\n"
            f"os.environ['REPLAY_KEY'] = {server.token!r}\n"
            f"%config DshChat.base_url = {server.openai_url!r}\n"
            "%config DshChat.api_key_env = 'REPLAY_KEY'\n"
            "%config DshChat.model = 'replay-model'\n"
            # Nothing left from an earlier cell: the chat must set them.
            "for name in ('last_type', 'last_value', 'last_traceback', 'last_exc'):\n"
            "    sys.__dict__.pop(name, None)"
        )
        chat = kernel.run("%%chat --new\nParse qq, please.", timeout=60)
        assert server.pending == 0
    card = _card(chat)
    assert (card["tool"], card["isError"]) == ("broken", True)
    assert card["failure"]["type"] == "ValueError"
    out = re.sub(r"\x1b\[[0-9;]*m", "", kernel.run(DEBUG).stdout)
    assert out.startswith("> ") and ")_parse()" in out.splitlines()[0], out
    assert "'qq'" in out  # `p text` in _parse's frame
    assert ")broken()" in out  # `where` lists the tool's own frame above it
    tail = kernel.run(
        "tb = sys.last_traceback\nwhile tb.tb_next: tb = tb.tb_next\n"
        "print(tb.tb_frame.f_code.co_name, type(sys.last_value).__name__,"
        " sys.last_value)"
    )
    assert tail.stdout == (
        "_parse ValueError invalid literal for int() with base 10: 'qq'\n"
    )


def test_the_journal_keeps_the_type_and_a_redacted_traceback(
    kernel: KernelHarness,
) -> None:
    card = _card(kernel.run('%call broken {"text": "leak"}'))
    assert "sk-test-" not in json.dumps(card)
    reply = kernel.run(
        "import json\nfrom dsh_nb.notebook import extension\n"
        "log = extension.current_state().agent.session\n"
        "event = [e for e in log.events if e['type'] == 'tool/result'][-1]\n"
        "print(json.dumps(event['data']))"
    )
    data = json.loads(reply.stdout)
    assert data["result"]["content"][0]["text"].startswith("Error: token ")
    exception = data["exception"]
    assert exception["type"] == "RuntimeError"
    assert "in broken" in exception["traceback"]
    saved = kernel.run("print(log.to_jsonl())").stdout
    assert '"RuntimeError"' in saved and "sk-test-0123" not in saved
