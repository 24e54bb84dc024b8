"""A chat's messages plus its session log replay the conversation's cards."""

from __future__ import annotations

from pathlib import Path

from chatkit import TOOLS, configure
from ipshell import fresh_shell, run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.cards import CARD_MIME
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn


def test_replay_after_a_restart(server: ReplayServer, tmp_path: Path) -> None:
    shells = fresh_shell()
    ip: InteractiveShell = next(shells)
    run(ip, TOOLS)
    configure(ip, server)
    server.add(
        Turn(
            text="Two sums.",
            tool_calls=(
                ToolCallSpec(name="add", arguments='{"a": 2, "b": 3}'),
                ToolCallSpec(name="add", arguments='{"a": 1,'),
            ),
        ),
        Turn(text="5, and one call was broken."),
    )
    live = run(ip, "%%chat\nAdd things")
    assert live.error is None
    live_cards = list(live.final_cards().values())
    log, saved = tmp_path / "session.jsonl", tmp_path / "chat.json"
    run(ip, f"%tool_log --save {log}")
    run(
        ip,
        "import json\nfrom dsh_nb.notebook.magics.chat import kernel_chat\n"
        f"json.dump(kernel_chat().messages, open({str(saved)!r}, 'w'))",
    )
    next(shells, None)  # unload: the kernel "restarts"

    for ip in fresh_shell():
        run(ip, TOOLS)
        cell = run(
            ip,
            f"import dsh_nb\n_ = dsh_nb.replay({str(log)!r}, messages={str(saved)!r})",
        )
        assert cell.error is None, cell.error
        plain = [o["data"].get("text/plain") for o in cell.outputs]
        assert plain[0] == "you: Add things"
        assert plain[1] == "model: Two sums."
        assert plain[-1] == "model: 5, and one call was broken."
        cards = [o["data"][CARD_MIME] for o in cell.outputs if CARD_MIME in o["data"]]
        assert (
            [(c["callId"], c["status"]) for c in cards]
            == [(c["callId"], c["status"]) for c in live_cards]
            == [("call_01", "done"), ("call_02", "error")]
        )
        assert cards[0]["result"] == live_cards[0]["result"]
        assert len(ip.user_ns["_"]) == 2  # the Replay: the two cards


def test_replay_pairs_reused_call_ids_in_order(
    server: ReplayServer, tmp_path: Path
) -> None:
    # Some servers number calls per response ("call_0" every time).
    for ip in fresh_shell():
        run(ip, TOOLS)
        configure(ip, server)
        server.add(
            Turn(
                tool_calls=(
                    ToolCallSpec(name="add", arguments='{"a": 1}', call_id="call_0"),
                )
            ),
            Turn(
                tool_calls=(
                    ToolCallSpec(name="add", arguments='{"a": 2}', call_id="call_0"),
                )
            ),
            Turn(text="1 then 2"),
        )
        run(ip, "%%chat\ncount")
        log = tmp_path / "s.jsonl"
        run(ip, f"%tool_log --save {log}")
        cell = run(
            ip,
            "import dsh_nb\nfrom dsh_nb.notebook.magics.chat import kernel_chat\n"
            f"_ = dsh_nb.replay({str(log)!r}, messages=kernel_chat())",
        )
        results = [
            o["data"][CARD_MIME]["result"]
            for o in cell.outputs
            if CARD_MIME in o["data"]
        ]
        assert [r["content"][0]["text"] for r in results] == ["1", "2"]
