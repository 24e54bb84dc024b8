"""Fixtures of the reliability suites."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fuzzkit import close_loops


@pytest.fixture(scope="module", autouse=True)
def _close_fuzz_loop() -> Iterator[None]:
    """Close the event loop ``fuzzkit.run`` kept for the module, if any."""
    yield
    close_loops()
