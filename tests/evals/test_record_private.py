"""``run_eval(record=...)`` writes a private file, as ``serve --journal`` does.

Issue 34 §2.6: ``record=`` overwrote anything, followed links and wrote
0644 files that hold prompts and tool results. Now a link (dangling or
not), a FIFO, a folder or a file others may read is refused with an error
naming the path and the fix, before anything is written; a new recording
is 0600. The official openai client against the loopback replay server.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import responder as rsp
from evalkit import sdk_client

from dsh_nb.evals import run_eval
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.tools.audit.privatefile import PrivateFileError

REFUSALS = {
    "symlink": "is a symbolic link",
    "dangling": "is a symbolic link",
    "shared": "run chmod 600",
    "fifo": "not a regular file",
    "folder": "not a regular file",
}


async def _record(server: ReplayServer, path: Path) -> object:
    return await run_eval(
        rsp.cases(),
        model="replay-model",
        client=sdk_client("openai", server),
        provider="openai",
        registry=rsp.registry(),
        trials=1,
        record=str(path),
        progress=False,
    )


@pytest.mark.parametrize("kind", sorted(REFUSALS))
async def test_record_refuses_what_is_not_a_private_file(
    server: ReplayServer, tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "run.jsonl"
    victim = tmp_path / "victim.txt"
    if kind == "symlink":
        victim.write_text("precious\n")
        path.symlink_to(victim)
    elif kind == "dangling":
        path.symlink_to(victim)
    elif kind == "shared":
        path.write_text("kept\n")
        path.chmod(0o644)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(PrivateFileError, match=REFUSALS[kind]) as raised:
        await _record(server, path)
    assert str(path) in str(raised.value)
    assert server.requests == []  # refused before the model was asked
    if kind == "symlink":
        assert victim.read_text() == "precious\n"
    if kind == "dangling":
        assert not victim.exists()
    if kind == "shared":
        assert path.read_text() == "kept\n"


async def test_a_new_recording_is_private(server: ReplayServer, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _record(server, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text().startswith("{")
