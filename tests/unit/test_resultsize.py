"""A huge result is kept as a bounded copy by the journal and the card."""

from __future__ import annotations

import asyncio

import pytest

from dsh_nb.cards import CARD_MIME, CardModel, render_card
from dsh_nb.tools import Agent, ToolExecutionInput, ToolRegistry, define_tool
from dsh_nb.tools.audit.resultsize import bound_content, content_size
from dsh_nb.tools.jsonvalue import FrozenDict
from dsh_nb.tools.presentation import GenericResultView


def test_content_that_fits_is_returned_as_is() -> None:
    content = (FrozenDict({"type": "text", "text": "small"}),)
    kept, total = bound_content(content, 100)
    assert kept is content and total is None


def test_a_big_text_block_is_cut_and_the_size_recorded() -> None:
    content = [{"type": "text", "text": "x" * 1000}, {"type": "text", "text": "y"}]
    kept, total = bound_content(content, 100)
    assert total == content_size(content) > 1000
    assert kept[0] == {"type": "text", "text": "x" * (100 - 12)}  # keys count
    assert kept[-1]["text"].startswith(f"[dsh_nb kept 100 of {total:,} bytes")
    assert len(kept) == 2


def test_multibyte_text_is_cut_on_a_character_boundary() -> None:
    kept, total = bound_content([{"type": "text", "text": "\u00e9" * 100}], 51)
    assert total is not None
    text = kept[0]["text"]
    assert len(text.encode()) <= 51 and set(text) == {"\u00e9"}


def test_the_journal_keeps_a_bounded_copy_and_the_caller_the_whole() -> None:
    big = "z" * 50_000
    registry = ToolRegistry()
    registry.register(
        define_tool(
            name="big", description="d", parameters={}, execute=lambda args: big
        )
    )
    agent = Agent("a")
    agent.session.max_result_bytes = 1_000
    result = asyncio.run(
        registry.execute(
            ToolExecutionInput(call_id="c1", name="big", arguments={}, agent=agent)
        )
    )
    assert result.content[0]["text"] == big
    (event,) = [e for e in agent.session.events if e["type"] == "tool/result"]
    kept = event["data"]["result"]["content"]
    assert content_size(kept) < 1_200 and event["data"]["resultBytes"] > 50_000
    assert "the caller received it whole" in kept[-1]["text"]


def test_the_card_json_is_bounded_with_a_visible_marker() -> None:
    text = "line\n" * 100_000
    model = CardModel(
        tool="t", result=GenericResultView(content=[{"type": "text", "text": text}])
    )
    card = render_card(model)
    block = card.data[CARD_MIME]["result"]["content"][0]
    assert len(block["text"]) == 200_000
    assert block["truncated"] == {
        "shown": 200_000,
        "total": 500_000,
        "unit": "characters",
    }
    assert "300,000 of 500,000 characters not shown" in block["notice"]
    many = CardModel(
        tool="t",
        result=GenericResultView(
            content=[{"type": "text", "text": "a" * 1000}] * 10_000
        ),
    )
    blocks = render_card(many).data[CARD_MIME]["result"]["content"]
    assert len(blocks) == 401
    assert blocks[-1]["notice"] == "truncated: 9,600 more content blocks not shown"


def test_the_bound_lives_on_the_session_and_refuses_a_bad_value() -> None:
    session = Agent("a").session
    session.max_result_bytes = 2_048
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="max_result_bytes must be a positive int"):
            session.max_result_bytes = bad  # type: ignore[assignment]
    assert session.max_result_bytes == 2_048
