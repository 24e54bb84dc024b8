"""Lone surrogates become [U+XXXX] where text leaves."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_nb.tools import SessionLog, ToolDefinitionError, define_tool
from dsh_nb.tools.jsonvalue import FrozenDict, FrozenList, snapshot_json
from dsh_nb.tools.surrogates import (
    MAX_DEPTH,
    escape_surrogates,
    escape_tree,
    first_surrogate,
    has_surrogate,
)

# Any code point, surrogates included (hypothesis leaves Cs out by default).
any_text = st.text(st.characters(exclude_categories=()), max_size=12)
trees = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), any_text),
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(any_text, kids, max_size=4)
    ),
    max_leaves=15,
)


def encodes(value: Any) -> bool:
    """What jupyter_client's packer does with a message."""
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    return True


def test_each_surrogate_becomes_a_marker() -> None:
    assert escape_surrogates("a\ud800b") == "a[U+D800]b"
    assert escape_surrogates("\ud83d\ude00") == "[U+D83D][U+DE00]"
    assert escape_surrogates("\U0001f600 ok") == "\U0001f600 ok"
    plain = "plain ascii"
    assert escape_surrogates(plain) is plain


def test_escape_tree_keeps_clean_values_and_frozen_types() -> None:
    clean = snapshot_json({"a": ["x", {"b": 1}]})
    assert escape_tree(clean) is clean
    dirty = snapshot_json({"k\udc80": ["x\ud800", {"b": "\udfff"}], "n": 1})
    out = escape_tree(dirty)
    assert out == {"k[U+DC80]": ["x[U+D800]", {"b": "[U+DFFF]"}], "n": 1}
    assert type(out) is FrozenDict and type(out["k[U+DC80]"]) is FrozenList
    assert escape_tree(("\ud800", 1)) == ("[U+D800]", 1)
    assert escape_tree({"a": "\ud800"}) == {"a": "[U+D800]"}


def test_escape_tree_is_bounded_in_depth() -> None:
    value: Any = "\ud800"
    for _ in range(MAX_DEPTH + 50):
        value = [value]
    out = escape_tree(value)
    for _ in range(MAX_DEPTH):
        out = out[0]
    assert out == f"[nested deeper than {MAX_DEPTH} levels]"


def test_first_surrogate_names_the_path() -> None:
    assert first_surrogate({"t": "\ud83d"}) == "$.t"
    assert first_surrogate({"a": [1, {"b": "x\udc00"}]}) == "$.a[1].b"
    assert first_surrogate({"ok": 1, "k\ud800": 2}) == "$ (a key)"
    assert first_surrogate({"t": "\U0001f600"}) is None
    deep: Any = "\ud800"
    for _ in range(10_000):
        deep = {"a": deep}
    assert first_surrogate(deep) == "$" + ".a" * 10_000


@given(any_text)
def test_escaped_text_always_encodes(text: str) -> None:
    out = escape_surrogates(text)
    out.encode("utf-8")
    assert not has_surrogate(out)
    if not has_surrogate(text):
        assert out == text


@given(trees)
def test_escaped_trees_always_encode(value: Any) -> None:
    out = escape_tree(value)
    assert encodes(out)
    assert first_surrogate(out) is None
    assert (first_surrogate(value) is None) == (out == value)


@given(trees)
def test_session_log_events_always_write(value: Any) -> None:
    log = SessionLog()
    log.append("tool/call", {"arguments": value, "name\ud800": "x"})
    line = log.to_jsonl()
    assert line.encode("utf-8") and not has_surrogate(line)
    data = json.loads(line)["data"]
    assert data["name[U+D800]"] == "x"
    assert json.dumps(data["arguments"]) == json.dumps(escape_tree(value))


def test_a_tool_name_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="lone surrogate"):
        define_tool(
            name="half\ud83d",
            description="",
            parameters={},
            execute=lambda args: "",
        )
