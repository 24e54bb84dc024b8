"""Fixtures shared by the in-process notebook tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ipshell import fresh_shell
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture
def ip() -> Iterator[InteractiveShell]:
    """A fresh IPython shell with dsh_nb loaded, torn down after the test."""
    yield from fresh_shell()
