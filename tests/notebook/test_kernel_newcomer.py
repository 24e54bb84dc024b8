"""The newcomer's smaller finds (issue 29), each in a real kernel.

A ``%%tool`` on an untyped function warns in one readable line; a cell
with a ``def`` and a ``%call`` shows the card and no ``<LiveCall ...>``
under it; ``%call`` after ``%unload_ext dsh_nb`` in the same cell says
dsh_nb was unloaded (not a ``NameError`` naming a private helper);
``replay("missing.jsonl")`` is one clear line.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import KernelHarness

from dsh_nb.cards import CARD_MIME

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run("%load_ext dsh_nb")
        yield harness


def test_an_untyped_tool_warns_in_one_readable_line(kernel: KernelHarness) -> None:
    reply = kernel.run('%%tool\ndef echo(x):\n    """Echo."""\n    return x\n')
    lines = reply.stderr.splitlines()
    assert len(lines) == 1, reply.stderr
    assert lines[0].startswith("warning: @tool echo()")
    assert 'parameter "x" has no type annotation' in lines[0]
    assert "UserWarning" not in reply.stderr and ".py:" not in reply.stderr


def test_a_def_then_call_shows_no_livecall_repr(kernel: KernelHarness) -> None:
    kernel.run('%%tool\ndef echo(x: str) -> str:\n    """Echo."""\n    return x\n')
    reply = kernel.run('def helper():\n    return 1\n%call echo {"x": "hi"}')
    kernel.run("import asyncio\nawait asyncio.sleep(0.5)")
    kernel.pump(0.2)  # the call finishes after its cell; its card updates in place
    cards = [
        m["content"]["data"][CARD_MIME]
        for m in kernel.messages(reply.msg_id)
        if m["msg_type"] in ("display_data", "update_display_data")
        and CARD_MIME in m["content"]["data"]
    ]
    assert cards and cards[-1]["status"] == "done"
    shown = [str(m["content"]) for m in reply.of_type("execute_result")]
    assert not any("LiveCall" in s for s in shown), shown
    assert "LiveCall" not in reply.stdout


def test_call_after_unload_in_the_same_cell_says_so(kernel: KernelHarness) -> None:
    kernel.run('%%tool\ndef echo(x: str) -> str:\n    """Echo."""\n    return x\n')
    reply = kernel.execute('%unload_ext dsh_nb\n%call echo {"x": "hi"}', check=False)
    # IPython shows a UsageError as one line on stderr, with no traceback.
    assert reply.stderr.startswith("UsageError: dsh_nb was unloaded"), reply.outputs
    assert "NameError" not in reply.stderr and "__dsh_nb" not in reply.stderr
    after = kernel.run("print('__dsh_nb_call_magic__' in globals())")
    assert after.stdout == "False\n"  # nothing lingers once the cell is done


def test_replay_of_a_missing_file_is_one_clear_line(kernel: KernelHarness) -> None:
    reply = kernel.execute(
        "from dsh_nb import replay\nreplay('missing.jsonl')", check=False
    )
    assert reply.stderr.startswith(
        "UsageError: replay: no journal file 'missing.jsonl'"
    )
    assert reply.stderr.count("\n") == 1 and "Traceback" not in reply.stderr


def test_notebook_checkpoints_are_ignored_by_git() -> None:
    checked = subprocess.run(
        ["git", "check-ignore", "-q", "notebooks/.ipynb_checkpoints/x.ipynb"],
        cwd=REPO,
        check=False,
    )
    assert checked.returncode == 0
