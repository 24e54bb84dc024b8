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


@pytest.fixture(scope="module")
def ip() -> Iterator[InteractiveShell]:
    """One shell for the module: a line mistake changes nothing in it."""
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
        ("%tools connect t --", "nothing after '--'"),
        ("%tools serve --port x", "argument --port: invalid int value: 'x'"),
        ("%tools serve -- cmd", "%tools serve takes no '-- COMMAND'"),
        ("%tools -- cmd", "only %tools connect takes '-- COMMAND ARGS...'"),
        ("%tools --json serve", "%tools serve takes no --json"),
        ("%tools serve --nope", "unrecognized arguments: --nope"),
        ("%tools bogus", "invalid choice: 'bogus' (choose from 'serve', 'connect'"),
    ],
)
def test_line_mistakes(ip: InteractiveShell, line: str, message: str) -> None:
    cell = run(ip, line)
    assert isinstance(cell.error, UsageError), cell.error
    assert message in str(cell.error)
    assert "Traceback" not in cell.stdout + cell.stderr


def test_the_help_lists_each_sub_commands_options(ip: InteractiveShell) -> None:
    """The sub-commands are argparse sub-parsers: ``%tools?`` shows them all."""
    doc = ip.magics_manager.magics["line"]["tools"].__doc__
    for usage in (
        "%tools serve [--port PORT] [--stop]",
        "%tools connect [--url URL] [--header 'NAME: VALUE'] [--close] NAME",
        "%tools export [--force] [FILE.py] [NAME ...]",
    ):
        assert usage in doc, doc
    assert "the connection's name; its tools become NAME_tool" in doc


def test_the_tools_table_still_works(ip: InteractiveShell) -> None:
    cell = run(ip, "%tools")
    assert cell.error is None
