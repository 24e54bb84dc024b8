"""Journals, recordings and session logs are read only from regular files.

A FIFO at the path blocked every reader (``open`` waits for a writer), and
a link to ``/dev/zero`` read until ``MemoryError``. Each reader runs in a
child process with a memory limit and a timeout, so a reader that blocks
or reads forever fails the test instead of the machine.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_nb.tools.audit.journalfile import (
    JournalTail,
    NotRegularFileError,
    open_regular,
    read_journal,
    scan_journal,
)

READERS = {
    "read_journal": (
        "from dsh_nb.tools.audit.journalfile import read_journal as f; f(PATH)"
    ),
    "scan_journal": (
        "from dsh_nb.tools.audit.journalfile import scan_journal as f; f(PATH)"
    ),
    "session log": (
        "from dsh_nb.tools.audit.session import SessionLog; SessionLog.read_jsonl(PATH)"
    ),
    "eval recording": (
        "from dsh_nb.evals.recording import Recording; Recording.load(PATH)"
    ),
    "follow's tail": (
        "from dsh_nb.tools.audit.journalfile import JournalTail;"
        "t = JournalTail(PATH, from_start=True); r = t.poll();"
        "print(r.notes); t.close()"
    ),
}


def _limit() -> None:
    # 1 GiB of address space: /dev/zero read whole ends in MemoryError fast.
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def _special(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / "journal.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("kind", ["fifo", "zero"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_reader_refuses_a_file_that_is_not_regular(
    tmp_path: Path, kind: str, reader: str
) -> None:
    path = _special(tmp_path, kind)
    code = READERS[reader].replace("PATH", repr(str(path)))
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=20,
            preexec_fn=_limit,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{reader} blocked on a {kind}")
    said = done.stdout + done.stderr
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    assert f"is {what}, not a regular file" in said, said
    assert "MemoryError" not in said


def test_open_regular_names_the_kind_and_reads_a_regular_file(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError, match=r"'.*pipe' is a FIFO"):
        open_regular(fifo)
    with pytest.raises(IsADirectoryError, match="is a folder"):
        open_regular(tmp_path)
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "missing")
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"type": "x", "data": {}}\n')
    with open_regular(plain) as fh:
        assert fh.read() == b'{"type": "x", "data": {}}\n'
    assert [e.type for e in read_journal(plain)] == ["x"]


def test_a_tail_says_once_that_a_fifo_is_refused_and_reads_the_file_later(
    tmp_path: Path,
) -> None:
    path = tmp_path / "live.jsonl"
    os.mkfifo(path)
    tail = JournalTail(path, from_start=True)
    first = tail.poll()
    assert first.events == () and len(first.notes) == 1
    assert "is a FIFO (named pipe), not a regular file" in first.notes[0]
    assert tail.poll().notes == ()  # checked every poll, said once
    path.unlink()
    path.write_text('{"type": "tool/call", "data": {"callId": "c1"}}\n')
    later = tail.poll()
    assert [e.data["callId"] for e in later.events] == ["c1"]
    tail.close()


def test_bad_lines_are_skipped_and_counted_not_the_end(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    path.write_bytes(
        b'{"type": "a", "data": {}}\n'
        b"not json\n"
        + f'{{"type": "deep", "data": {{"x": {deep}}}}}\n'.encode()
        + b"\xff\xfe broken utf-8\n"
        b'{"type": "b", "data": {}}\n'
        b'{"type": "partial'
    )
    read = scan_journal(path)
    assert [e.type for e in read.events] == ["a", "b"]
    assert read.bad_lines == 3  # the unfinished last line is not counted
    with pytest.raises(ValueError, match=r"mixed\.jsonl:2: not JSON"):
        read_journal(path)


def test_a_follow_survives_a_line_nested_past_the_parser(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("")
    tail = JournalTail(path, from_start=True)
    assert tail.poll().events == ()
    deep = "[" * 100_000 + "]" * 100_000
    with path.open("a") as fh:
        fh.write(f'{{"type": "deep", "data": {{"x": {deep}}}}}\n')
        fh.write('{"type": "after", "data": {}}\n')
    read = tail.poll()
    assert [e.type for e in read.events] == ["after"]
    assert read.bad_lines == 1
    tail.close()
