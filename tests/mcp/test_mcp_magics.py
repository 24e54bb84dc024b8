"""``%tools serve`` / ``%tools connect`` line mistakes are one-line UsageErrors."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

sys.path.insert(0, str(Path(__file__).parents[1] / "notebook"))
from ipshell import fresh_shell, run


@pytest.fixture
def ip() -> Iterator[InteractiveShell]:
    yield from fresh_shell()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%tools serve --stop", "this kernel is not serving"),
        ("%tools serve --port 70000", "--port must be 0..65535"),
        ("%tools connect time", "needs a server: --url URL, or -- COMMAND"),
        ("%tools connect time --url http://x -- cmd", "needs a server"),
        ("%tools connect --close nope", "no connection 'nope' (open: none)"),
        ("%tools connect t --url http://x --header nocolon", "--header must be"),
        ("%tools connect 'bad name' -- cmd", "connection name must be"),
        ("%tools connect t -- 'unclosed", "No closing quotation"),
    ],
)
def test_line_mistakes(ip: InteractiveShell, line: str, message: str) -> None:
    cell = run(ip, line)
    assert isinstance(cell.error, UsageError), cell.error
    assert message in str(cell.error)
    assert "Traceback" not in cell.stdout + cell.stderr


def test_the_tools_table_still_works(ip: InteractiveShell) -> None:
    cell = run(ip, "%tools")
    assert cell.error is None
