"""Fixtures the unit tests share: a bare registry and two agents.

A module that needs a registry set up otherwise (a timeout policy
installed, an approval service) or an agent inside a turn overrides the
fixture by name in that module.
"""

from __future__ import annotations

import pytest

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.registry import ToolRegistry


@pytest.fixture
def registry() -> ToolRegistry:
    """A fresh registry with no tools, listeners or approval service."""
    return ToolRegistry()


@pytest.fixture
def agent() -> Agent:
    """The caller most tests speak for."""
    return Agent("alice")


@pytest.fixture
def other() -> Agent:
    """A second caller, for what one agent must not see of another's."""
    return Agent("bob")
