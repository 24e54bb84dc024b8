"""The forms of a registered secret that ``redact`` catches, and deep values."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator

import pytest

from dsh_nb.tools.audit.secrets import (
    REDACTED,
    add_secret,
    redact,
    redact_edges,
    redact_value,
)

KEY = "sk-test-Zq8xV2pLm4Nw7Rt0Yb5Kc3"


@pytest.fixture
def key() -> Iterator[str]:
    undo = add_secret(KEY)
    yield KEY
    undo()


@pytest.mark.parametrize("prefix", ["", "u:", "ab:", "user:", "x"])
def test_base64_at_every_offset_is_redacted(key: str, prefix: str) -> None:
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        blob = encode((prefix + key + "!").encode()).decode()
        out = redact(f"Authorization: Basic {blob}")
        assert REDACTED in out
        # What is left of the blob is the prefix's part and a few edge
        # characters: the key cannot be read back from it.
        left = out.split(" ")[-1].replace(REDACTED, "")
        assert len(left) <= len(encode(prefix.encode())) + 4, out


def test_hex_is_redacted(key: str) -> None:
    for hexed in (key.encode().hex(), key.encode().hex().upper()):
        assert redact(f"dump {hexed}.") == f"dump {REDACTED}."
    assert binascii.hexlify(b"no secret here").decode() in redact(
        binascii.hexlify(b"no secret here").decode()
    )


def test_the_pieces_of_a_key_at_a_flush_edge(key: str) -> None:
    assert redact_edges("the key: " + key[:10]) == "the key: " + REDACTED
    assert redact_edges(key[10:] + "\n") == REDACTED + "\n"
    assert redact_edges(key[5:20]) == REDACTED  # the middle of three flushes
    assert redact_edges("ordinary text") == "ordinary text"
    assert redact_edges("ends in sk-") == "ends in sk-"  # 3 characters: kept


@pytest.mark.parametrize("depth", [600, 5_000])
def test_a_deep_value_is_redacted_without_recursion(key: str, depth: int) -> None:
    value: object = {"k": key}
    for _ in range(depth):
        value = [value]
    out = redact_value(value)
    for _ in range(depth):
        assert isinstance(out, list)
        out = out[0]
    assert out == {"k": REDACTED}


def test_an_unchanged_value_is_the_same_object(key: str) -> None:
    value = {"a": [1, "two", {"b": ("c", None)}]}
    assert redact_value(value) is value
    loop: list[object] = ["x"]
    loop.append(loop)
    assert redact_value(loop) is loop
    changed = redact_value({"a": [key, 1], "b": (key,)})
    assert changed == {"a": [REDACTED, 1], "b": (REDACTED,)}
