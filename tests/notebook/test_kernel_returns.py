"""Plain classes' methods and ``%%tool`` functions through ``%call`` in a kernel.

A real ipykernel, driven over ZMQ: the classes are defined in a cell as a
notebook would, their bound methods registered with ``@tool``, and each
``%call`` card must show the method's JSON (an empty success for a setter),
with the structured content beside it where the return annotation has a
schema. A ``%%tool`` cell returning a dict works the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from kernel_harness import KernelHarness, Reply
from plainapi import CALLS, SOURCE

from dsh_nb.cards import CARD_MIME

REGISTER = """
from dsh_nb import registry, tool
thermostat, feed = Thermostat(), Feed()
for method in (thermostat.set_target, thermostat.get_state, thermostat.history,
               feed.post, feed.latest):
    registry().register(tool(method))
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run("%load_ext dsh_nb")
        harness.run(SOURCE)
        harness.run(REGISTER)
        yield harness


def _final_card(reply: Reply) -> Mapping[str, Any]:
    cards = [
        m["content"]["data"][CARD_MIME]
        for m in reply.of_type("display_data", "update_display_data")
        if CARD_MIME in m["content"]["data"]
    ]
    assert cards, reply.stdout + reply.stderr
    return cards[-1]


def test_each_method_answers_with_its_json(kernel: KernelHarness) -> None:
    for name, args, text, _ in CALLS:
        card = _final_card(kernel.run(f"%call {name} {json.dumps(args)}"))
        assert (card["status"], card["isError"]) == ("done", False), card
        expected = [{"type": "text", "text": text}] if text else []
        assert card["result"]["content"] == expected, name
    state = kernel.run("print(thermostat.target, len(feed.posts))")
    assert state.stdout == "22.5 1\n"  # the setter and the post really ran


def test_bound_result_carries_the_structured_content(kernel: KernelHarness) -> None:
    kernel.run('%%call -o res history\n{"last": 1}\n')
    reply = kernel.run("print(res.text, res.meta['structuredContent'])")
    assert reply.stdout == "[22.5] {'result': [22.5]}\n"


def test_a_tool_cell_returning_a_dict(kernel: KernelHarness) -> None:
    kernel.run(
        "%%tool\n"
        "def summarize(values: list[float]) -> dict[str, float]:\n"
        '    """Mean and total of some numbers."""\n'
        "    return {'mean': sum(values) / len(values), 'total': sum(values)}\n"
    )
    card = _final_card(kernel.run('%call summarize {"values": [1, 2, 3]}'))
    assert card["isError"] is False
    assert card["result"]["content"] == [
        {"type": "text", "text": '{"mean":2.0,"total":6.0}'}
    ]
    reply = kernel.run("print(registry().get('summarize').output_schema)")
    assert reply.stdout == (
        "{'type': 'object', 'additionalProperties': {'type': 'number'}}\n"
    )
