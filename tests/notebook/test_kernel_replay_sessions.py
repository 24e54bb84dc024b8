"""``dsh_nb.replay`` of a server's journal in a real kernel: one group a session.

Two sessions of one client (two runs of one agent) stay two groups, each
under a header naming its client and its session, in the order the
sessions first called; the kernel shows them as a notebook would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from kernel_harness import KernelHarness
from test_replay import _server_journal

from dsh_nb.cards import CARD_MIME


@pytest.fixture(scope="module")
def kernel() -> Iterator[KernelHarness]:
    with KernelHarness() as harness:
        harness.run("%load_ext dsh_nb")
        yield harness


def test_two_sessions_of_one_client_are_two_groups(
    kernel: KernelHarness, tmp_path: Path
) -> None:
    path = tmp_path / "server.jsonl"
    _server_journal(path)  # s-1, s-3: claude-code; s-2 another client
    reply = kernel.run(
        f"import dsh_nb, json\n_r = dsh_nb.replay({str(path)!r})\n"
        "print(json.dumps([[g.session, g.client, len(g.cards)] for g in _r.sessions]))"
    )
    shown = [
        m["content"]["data"]
        for m in reply.of_type("display_data")
        if "text/plain" in m["content"]["data"]
    ]
    order = [
        d[CARD_MIME]["result"]["content"][0]["text"]
        if CARD_MIME in d
        else d["text/plain"]
        for d in shown
    ]
    assert order == [
        "client claude-code · session s-1 · 2 calls",
        "2",
        "5",
        "client <img src=x onerror=alert(1)> · session s-2 · 1 call",
        "3",
        "client claude-code · session s-3 · 1 call",
        "4",
    ]
    html = "".join(d.get("text/html", "") for d in shown if CARD_MIME not in d)
    assert "<img" not in html and "&lt;img src=x" in html
    assert json.loads(reply.stdout) == [
        ["s-1", "claude-code", 2],
        ["s-2", "<img src=x onerror=alert(1)>", 1],
        ["s-3", "claude-code", 1],
    ]
