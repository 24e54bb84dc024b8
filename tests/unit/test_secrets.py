"""Registered secrets are redacted from text, values, logs and session logs."""

from __future__ import annotations

import logging
import secrets

import pytest

from dsh_nb.tools import Agent
from dsh_nb.tools.audit.secrets import (
    REDACTED,
    add_secret,
    clean_secret,
    redact,
    redact_value,
    secret_settings,
)


def _key() -> str:
    return "sk-" + secrets.token_urlsafe(18)


def test_a_secret_is_redacted_until_undone() -> None:
    key = _key()
    undo = add_secret(key + "\n")  # as read from a file
    try:
        assert redact(f"Illegal header value b'Bearer {key}\\n'") == (
            f"Illegal header value b'Bearer {REDACTED}\\n'"
        )
        assert redact("nothing here") == "nothing here"
    finally:
        undo()
        undo()  # idempotent
    assert redact(key) == key


def test_short_values_and_non_strings_are_not_secrets() -> None:
    add_secret("unused")()
    add_secret(None)()
    assert redact("unused") == "unused"


def test_a_secret_inside_another_is_replaced_whole() -> None:
    short, long = _key(), None
    long = short + "-extended-part"
    undos = [add_secret(short), add_secret(long)]
    try:
        assert redact(f"a {long} b {short}") == f"a {REDACTED} b {REDACTED}"
    finally:
        for undo in undos:
            undo()


def test_values_are_redacted_deeply_and_kept_when_clean() -> None:
    key = _key()
    undo = add_secret(key)
    try:
        clean = {"a": [1, "x"], "b": ("y",)}
        assert redact_value(clean) is clean
        dirty = {"text": [f"k={key}"], key: ("z", key)}
        assert redact_value(dirty) == {
            "text": [f"k={REDACTED}"],
            REDACTED: ("z", REDACTED),
        }
    finally:
        undo()


def test_secret_settings_take_headers_and_env_by_name() -> None:
    token, other = _key(), _key()
    undo = secret_settings(
        {
            "Authorization": f"Bearer {token}",
            "GITHUB_TOKEN": other,
            "PATH": "/usr/bin/x",
        }
    )
    try:
        assert (
            redact(f"{token} {other} /usr/bin/x") == f"{REDACTED} {REDACTED} /usr/bin/x"
        )
    finally:
        undo()
    assert redact(token) == token


def test_clean_secret_drops_surrounding_whitespace() -> None:
    assert clean_secret("  sk-abc\r\n") == "sk-abc"


def test_log_records_and_session_logs_are_redacted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = _key()
    undo = add_secret(key)
    try:
        with caplog.at_level(logging.INFO):
            logging.getLogger("dsh_nb.anything").info("key=%s", key)
            try:
                raise ValueError(key)
            except ValueError:
                logging.getLogger("elsewhere").exception("failed")
        assert key not in caplog.text and caplog.text.count(REDACTED) == 2
        agent = Agent("a")
        agent.session.append("note", {"text": f"the key {key}"})
        assert key not in agent.session.to_jsonl()
        assert f"the key {REDACTED}" in agent.session.to_jsonl()
    finally:
        undo()
