"""Fixtures: the official SDK clients against a loopback responder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from responder import Responder

from dsh_nb.models.replay_server import ReplayServer


@pytest.fixture
def responder() -> Responder:
    return Responder()


@pytest.fixture
def server(responder: Responder) -> Iterator[ReplayServer]:
    with ReplayServer(responder) as srv:
        yield srv
