"""Fixtures shared by the in-process notebook tests."""

from __future__ import annotations

from collections.abc import Iterator

import comm
import pytest
from chatkit import KEY_ENV
from ipshell import fresh_shell
from IPython.core.interactiveshell import InteractiveShell
from widgetcomm import RecordingComm

from dsh_nb.models.replay_server import ReplayServer


@pytest.fixture
def ip() -> Iterator[InteractiveShell]:
    """A fresh IPython shell with dsh_nb loaded, torn down after the test."""
    yield from fresh_shell()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReplayServer]:
    """A loopback model server whose key is in the environment, as for a user."""
    with ReplayServer() as srv:
        monkeypatch.setenv(KEY_ENV, srv.token)
        yield srv


@pytest.fixture
def recording_comms(monkeypatch: pytest.MonkeyPatch) -> None:
    """Give every widget the test makes a comm that records what it sends."""
    monkeypatch.setattr(comm, "create_comm", RecordingComm)
