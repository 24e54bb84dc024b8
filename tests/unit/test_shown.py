"""shown(): the one repr of a user's value that is bounded and never raises.

Every place that names a value a user handed us (a journal line, a card, a
spec error, a JSON error, a rejected setting) goes through it, so these
tests hold each guarantee its callers rely on, and then each caller.
"""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stderr
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from traitlets import Int
from traitlets.config import Config

from dsh_nb.notebook.transactional import TransactionalConfigurable
from dsh_nb.tools import ToolDefinitionError, define_tool
from dsh_nb.tools.jsonvalue import NotJsonError, snapshot_json
from dsh_nb.tools.shown import shown


class RaisingRepr:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __repr__(self) -> str:
        raise self.exc


class Says:
    """A value whose repr is the text it was given."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


@pytest.mark.parametrize(
    "exc",
    [RuntimeError("no"), SystemExit(3), KeyboardInterrupt(), GeneratorExit()],
)
def test_a_raising_repr_is_contained(exc: BaseException) -> None:
    assert shown(RaisingRepr(exc)) == "<unprintable RaisingRepr>"
    assert shown({"a": [RaisingRepr(exc)]}) == "{'a': [<unprintable RaisingRepr>]}"


def test_depth_and_size_are_bounded() -> None:
    deep: Any = {}
    cur = deep
    for _ in range(10_000):
        cur["a"] = {}
        cur = cur["a"]
    assert shown(deep) == "{'a': {'a': {'a': {'a': {...}}}}}"
    assert len(shown("x" * 10_000_000)) <= 80
    assert len(shown(list(range(10_000)))) <= 80
    assert shown(list(range(20))) == "[0, 1, 2, 3, 4, 5, 6, 7, ...]"


def test_a_huge_int_is_named_not_printed() -> None:
    assert sys.get_int_max_str_digits() > 0
    assert shown(10**10_000) == "<unprintable int>"


def test_a_dict_keeps_the_order_it_was_written_in() -> None:
    assert shown({"b": 1, "a": 2}) == "{'b': 1, 'a': 2}"


def test_a_long_repr_is_cut_to_the_limit() -> None:
    assert shown(Says("y" * 500)) == "y" * 77 + "..."
    assert shown(Says("y" * 500), 60) == "y" * 57 + "..."
    assert shown(Says("short"), 60) == "short"


def test_a_limit_too_small_or_not_an_int_still_gives_a_name() -> None:
    assert shown(Says("abcdefghijkl"), 0) == "abcde..."
    assert shown(Says("abc"), "ten") == "abc"  # type: ignore[arg-type]


def test_lone_surrogates_are_escaped_as_repr_escapes_them() -> None:
    assert shown("\ud800") == "'\\ud800'"  # repr escapes it already
    text = shown(Says("half \ud83d of it, café"))
    assert text == "half \\ud83d of it, café"
    text.encode("utf-8")  # always encodes


@given(st.text(max_size=300), st.integers(min_value=-5, max_value=200))
def test_any_repr_text_is_bounded_and_encodes(text: str, limit: int) -> None:
    out = shown(Says(text), limit)
    assert len(out) <= max(limit, 8)
    out.encode("utf-8")


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=12)
            | st.dictionaries(st.text(max_size=5), inner, max_size=12)
        ),
        max_leaves=60,
    )
)
def test_any_json_value_is_bounded(value: object) -> None:
    assert len(shown(value)) <= 80


# --- its callers -----------------------------------------------------------------


def test_a_spec_error_names_a_hostile_value_without_raising_it() -> None:
    with pytest.raises(ToolDefinitionError, match="<unprintable RaisingRepr>"):
        define_tool(
            name="t",
            description="",
            parameters={"a": {"type": "string", "enum": RaisingRepr(SystemExit(1))}},
            execute=lambda args: "",
        )


def test_a_json_error_names_a_non_string_key_in_bounded_text() -> None:
    key = Says("k" * 1_000)
    with pytest.raises(NotJsonError) as info:
        snapshot_json({"a": {key: 1}})
    message = str(info.value)
    assert "$.a has a non-string key " + "k" * 77 + "..." in message


class Settings(TransactionalConfigurable):
    size = Int(3, help="a size").tag(config=True)


def test_a_rejected_setting_is_named_in_60_characters() -> None:
    settings = Settings()
    err = io.StringIO()
    with redirect_stderr(err):
        settings.update_config(Config({"Settings": {"size": Says("v" * 200)}}))
    assert settings.size == 3
    line = err.getvalue().strip()
    assert line.startswith("Settings.size: rejected " + "v" * 57 + "...: ")
    assert line.endswith("keeping 3")
