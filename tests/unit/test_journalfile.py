"""Journal files: read with their client tags; tailed through partial lines,
truncation and rotation."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from dsh_nb.tools.audit.journalfile import (
    JournalTail,
    parse_line,
    read_journal,
    read_objects,
)
from dsh_nb.tools.audit.session import SessionLog


def _line(call_id: str, agent: str | None = None) -> str:
    event: dict[str, object] = {"type": "tool/call", "data": {"callId": call_id}}
    if agent is not None:
        event["agent"] = agent
    return json.dumps(event) + "\n"


def _ids(events: object) -> list[str]:
    return [e.data["callId"] for e in events]  # type: ignore[attr-defined]


def test_parse_keeps_the_client_and_freezes_the_data() -> None:
    event = parse_line('{"type": "tool/call", "data": {"a": [1]}, "agent": "s-1"}')
    assert (event.type, event.agent) == ("tool/call", "s-1")
    with pytest.raises(TypeError):
        event.data["a"].append(2)  # type: ignore[attr-defined]
    for bad, why in [
        ("[]", "must be an object"),
        ('{"data": {}}', "string type"),
        ('{"type": "t", "data": 1}', "data must be an object"),
        ("nope", "not JSON"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_line(bad, "f:3")


def test_read_skips_a_last_line_still_being_written(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(_line("a", "claude") + "\n" + _line("b") + '{"type": "tool/ca')
    events = read_journal(path)
    assert _ids(events) == ["a", "b"] and events[0].agent == "claude"
    path.write_text(_line("a") + "broken\n" + _line("b"))
    with pytest.raises(ValueError, match=r"j\.jsonl:2: not JSON"):
        read_journal(path)


def test_tail_reads_whole_lines_only_and_survives_rotation(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(_line("old"))
    tail = JournalTail(path)
    assert tail.poll().events == ()  # what was there before is not new
    with path.open("a") as fh:
        fh.write(_line("one")[:10])
    assert tail.poll().events == ()
    with path.open("a") as fh:
        fh.write(_line("one")[10:] + "garbage\n")
    read = tail.poll()
    assert _ids(read.events) == ["one"] and read.bad_lines == 1
    # Truncated.
    path.write_text("")
    assert "truncated" in tail.poll().notes[0]
    with path.open("a") as fh:
        fh.write(_line("two"))
    assert _ids(tail.poll().events) == ["two"]
    # Rotated: the old file's last lines first, then the new file.
    with path.open("a") as fh:
        fh.write(_line("three"))
    os.rename(path, tmp_path / "j.jsonl.1")
    assert _ids(tail.poll().events) == ["three"]
    path.write_text(_line("four"))
    read = tail.poll()
    assert _ids(read.events) == ["four"] and "replaced" in read.notes[0]
    # Gone, then back.
    os.remove(path)
    os.remove(tmp_path / "j.jsonl.1")
    tail.close()
    tail = JournalTail(path, from_start=True)
    assert tail.poll().events == ()
    path.write_text(_line("five"))
    assert _ids(tail.poll().events) == ["five"]
    tail.close()


def test_tail_reads_what_came_after_it_was_made_before_its_first_poll(
    tmp_path: Path,
) -> None:
    # A follow's first poll runs when the kernel's loop gets to it; a line
    # written between the magic and that poll is new, not old.
    path = tmp_path / "j.jsonl"
    path.write_text(_line("old"))
    tail = JournalTail(path)
    with path.open("a") as fh:
        fh.write(_line("early"))
    assert _ids(tail.poll().events) == ["early"]
    tail.close()
    missing = tmp_path / "later.jsonl"
    tail = JournalTail(missing)
    missing.write_text(_line("first"))  # appears before the first poll
    assert _ids(tail.poll().events) == ["first"]
    tail.close()


@pytest.mark.parametrize(
    ("text", "why"),
    [("oops\n", r"not JSON \("), ("[1]\n", "an event must be an object")],
)
def test_every_jsonl_reader_names_the_file_and_line_of_a_bad_line(
    tmp_path: Path, text: str, why: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(f"\n{_line('c1')}{text}", encoding="utf-8")
    where = f"{path}:3: "
    for read in (read_objects, SessionLog.read_jsonl, read_journal):
        with pytest.raises(ValueError, match=f"^{re.escape(where)}{why}"):
            read(path)


def test_read_objects_skips_blank_lines_and_keeps_order(tmp_path: Path) -> None:
    path = tmp_path / "ok.jsonl"
    path.write_text(_line("a") + "\n  \n" + _line("b"), encoding="utf-8")
    assert read_objects(path) == [json.loads(_line("a")), json.loads(_line("b"))]
