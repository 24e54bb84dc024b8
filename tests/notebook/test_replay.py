"""``replay``: a saved session log re-renders the cards the calls showed live."""

from __future__ import annotations

from pathlib import Path

from ipshell import EXT, run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.cards import CARD_MIME
from dsh_nb.notebook.replay import Replay, replay
from dsh_nb.tools.audit.session import SessionLog

TOOLS = '''%%tool
from dsh_nb.tools.definition import tool
from dsh_nb.tools.presentation import TerminalCallView, TerminalResultView

def _call(args):
    return TerminalCallView(title="$ " + args["cmd"])

def _result(args, result):
    return TerminalResultView(output=result.content[0]["text"], exit_code=result.meta["exitCode"])

@tool(present_call=_call, present_result=_result)
def run_cmd(cmd: str) -> dict:
    """Pretend to run a command."""
    return {"content": [{"type": "text", "text": "ran " + cmd}], "meta": {"exitCode": 3}}
'''

ADD = '''%%tool
def add(a: int, b: int = 2) -> str:
    """Add two integers."""
    return str(a + b)
'''

CALLS = [
    '%call run_cmd {"cmd": "ls"}',
    '%call add {"a": 1}',
    '%call add {"a": "one"}',
    '%call add {"a": 5}',
]


def _live_session(ip: InteractiveShell, path: Path) -> list[dict[str, object]]:
    run(ip, "%config DshConfig.trace = False")
    run(ip, TOOLS)
    run(ip, ADD)
    finals = []
    for i, code in enumerate(CALLS):
        if i == 3:
            run(ip, "%tool_policy deny add")
        finals.extend(run(ip, code).final_cards().values())
    assert run(ip, f"%tool_log --save {path}").error is None
    return finals


def test_replay_matches_the_live_cards(ip: InteractiveShell, tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    live = _live_session(ip, path)
    assert [c["status"] for c in live] == ["done", "done", "error", "denied"]
    assert live[0]["call"] == {"card": "terminal", "title": "$ ls"}
    assert live[0]["result"] == {
        "card": "terminal",
        "exitCode": 3,
        "outputSpans": [["ran ls", 0]],
        "outputStyles": [{}],
    }
    # A fresh kernel state with the same tools: only the log carries the calls.
    ip.run_cell(f"%reload_ext {EXT}")
    ip.run_cell("%config DshConfig.trace = False")
    run(ip, TOOLS)
    run(ip, ADD)
    ip.user_ns["path"] = str(path)
    cell = run(ip, "import dsh_nb\ncards = dsh_nb.replay(path)")
    assert cell.error is None
    shown = [o["data"][CARD_MIME] for o in cell.outputs]
    assert shown == live
    cards = ip.user_ns["cards"]
    assert isinstance(cards, Replay) and [c.data[CARD_MIME] for c in cards] == live
    shown_value, _ = ip.display_formatter.format(cards)  # what Out[] sends
    assert shown_value == {"text/plain": f"replayed 4 calls from {str(path)!r}"}
    assert all(o["metadata"][CARD_MIME]["meta"]["replayed"] for o in cell.outputs)


def test_replay_without_the_tools_falls_back_to_generic_cards(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    path = tmp_path / "session.jsonl"
    live = _live_session(ip, path)
    ip.run_cell(f"%reload_ext {EXT}")
    cards = replay(path, display=False)
    first = cards[0].data[CARD_MIME]
    assert first["status"] == "done"
    assert first["call"] == {
        "card": "generic",
        "title": "run_cmd",
        "kind": "other",
        "rawInput": {"cmd": "ls"},
    }
    assert first["result"] == {
        "card": "generic",
        "content": [{"type": "text", "text": "ran ls"}],
    }
    assert [c.data[CARD_MIME]["status"] for c in cards] == [c["status"] for c in live]


def test_replay_reads_status_and_approval_from_the_journal_alone(
    ip: InteractiveShell,
) -> None:
    def result(call_id: str, text: str, *, error: bool) -> dict[str, object]:
        return {
            "callId": call_id,
            "content": [{"type": "text", "text": text}],
            "isError": error,
        }

    log = SessionLog(
        [
            {
                "type": "tool/call",
                "data": {"callId": "a", "name": "x", "arguments": {}},
            },
            # Approval events are the seam's audit; replay does not read them.
            {
                "type": "approval/asked",
                "data": {"id": "q1", "toolName": "x", "callId": "a"},
            },
            {"type": "approval/decided", "data": {"id": "q1", "outcome": "allowed"}},
            {
                "type": "tool/result",
                "data": {
                    "callId": "a",
                    "result": result("a", "Error: no", error=True),
                    "status": "denied",
                    "stage": "approval",
                    "approval": "rejected",
                },
            },
            {
                "type": "tool/call",
                "data": {"callId": "b", "name": "x", "arguments": "{broken"},
            },
            {
                "type": "tool/result",
                "data": {
                    "callId": "b",
                    "result": {
                        **result("b", "Error: late", error=True),
                        "error": {"name": "ToolTimeoutError", "code": "TOOL_TIMEOUT"},
                    },
                    "status": "timeout",
                    "stage": "execute",
                    "bodyRunning": True,
                },
            },
            {
                "type": "tool/call",
                "data": {"callId": "c", "name": "x", "arguments": {"q": 1}},
            },
            {
                "type": "tool/call",
                "data": {"callId": "d", "name": "x", "arguments": {}},
            },
            {
                "type": "tool/result",  # a log from before the core's journal
                "data": {"callId": "d", "result": result("d", "Error: x", error=True)},
            },
            {
                "type": "tool/call",
                "data": {"callId": "e", "name": "x", "arguments": {}},
            },
            {"type": "tool/cancelled", "data": {"callId": "e", "reason": "cancelled"}},
        ]
    )
    cards = [c.data[CARD_MIME] for c in replay(log, display=False)]
    assert [(c["callId"], c["status"]) for c in cards] == [
        ("a", "denied"),
        ("b", "timed-out"),
        ("c", "pending"),
        ("d", "error"),
        ("e", "cancelled"),
    ]
    assert cards[0]["approval"] == "rejected"
    assert cards[1]["call"]["rawInput"] == "{broken"
    assert "may still be running" in cards[1]["result"]["content"][-1]["text"]
    assert "result" not in cards[2]


def _call_lines(count: int, status: str = "done") -> list[str]:
    import json

    lines = []
    for i in range(count):
        call = {"callId": f"c{i}", "name": "add", "arguments": {"a": i}}
        result = {
            "callId": f"c{i}",
            "result": {
                "callId": f"c{i}",
                "content": [{"type": "text", "text": str(i)}],
                "isError": False,
            },
            "status": status,
            "stage": "execute",
        }
        lines.append(json.dumps({"type": "tool/call", "data": call}))
        lines.append(json.dumps({"type": "tool/result", "data": result}))
    return lines


def test_replay_skips_and_counts_bad_lines(tmp_path: Path) -> None:
    """Garbage, a 100,000-deep line and an unknown status are skipped and
    counted; they used to end the whole replay (ValueError, RecursionError)."""
    path = tmp_path / "bad.jsonl"
    good = _call_lines(2)
    unknown = _call_lines(1, status="exploded")[1].replace('"c0"', '"c1"')
    deep = '{"type": "tool/call", "data": {"x": ' + "[" * 100_000
    deep += "]" * 100_000 + "}}"
    lines = [good[0], "not json", deep, good[1], good[2], unknown, good[3]]
    path.write_text("\n".join(lines) + "\n")
    cards = replay(path, display=False)
    payloads = [card.data[CARD_MIME] for card in cards]
    assert [p["callId"] for p in payloads] == ["c0", "c1"]
    assert [p["status"] for p in payloads] == ["done", "done"]
    assert cards.skipped == 3
    summary = cards._repr_mimebundle_()["text/plain"]
    assert "3 lines skipped (not journal events)" in summary


def test_replay_draws_200_cards_and_says_how_many_more(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(_call_lines(450)) + "\n")
    cell = run(ip, f"import dsh_nb\ncards = dsh_nb.replay({str(path)!r})")
    assert cell.error is None
    assert len(cell.cards()) == 200
    notes = [
        o["data"]["text/plain"] for o in cell.outputs if CARD_MIME not in o["data"]
    ]
    assert any(
        "250 more calls not shown (the first 200 are); the returned list holds "
        "them all" in note
        for note in notes
    ), notes
    assert ip.user_ns["cards"][449].data[CARD_MIME]["callId"] == "c449"


def _server_journal(path: Path) -> None:
    """Real calls of three client sessions, interleaved, journaled as
    ``python -m dsh_nb serve --journal`` does: each line tagged with its
    session's id, each session opened by an ``mcp/session`` line naming
    its client. Two sessions are one client's (two runs of one agent), and
    the first session calls again after the others."""
    import asyncio
    import json

    from dsh_nb.tools import Agent, ToolExecutionInput, ToolRegistry, tool
    from dsh_nb.tools.audit.journal import turn
    from dsh_nb.tools.jsonvalue import to_plain

    @tool
    def add(a: int, b: int = 2) -> str:
        """Add two integers."""
        return str(a + b)

    registry = ToolRegistry()
    registry.register(add)
    lines: list[str] = []
    sessions = [
        ("s-1", "claude-code"),
        ("s-2", "<img src=x onerror=alert(1)>"),
        ("s-3", "claude-code"),
    ]
    agents = []
    for tag, client in sessions:
        agent = Agent(tag)
        agents.append(agent)
        lines.append(
            json.dumps(
                {
                    "type": "mcp/session",
                    "agent": tag,
                    "data": {"agent": tag, "client": client},
                }
            )
        )
        agent.session.on_append(
            lambda event, tag=tag: lines.append(
                json.dumps(dict(to_plain(event), agent=tag))
            )
        )

    async def calls() -> None:
        made = [0, 0, 0]
        for i, k in enumerate([0, 1, 2, 0]):
            made[k] += 1
            with turn(agents[k]):
                # Every session counts its own ids: two sessions' call-1 must
                # stay apart.
                await registry.execute(
                    ToolExecutionInput(
                        call_id=f"call-{made[k]}",
                        name="add",
                        arguments={"a": i},
                        agent=agents[k],
                    )
                )

    asyncio.run(calls())
    path.write_text("\n".join(lines) + "\n")


def test_replay_groups_a_servers_calls_by_session_labelled_by_client(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    path = tmp_path / "server.jsonl"
    _server_journal(path)
    run(ip, "import dsh_nb")
    cell = run(ip, f"_r = dsh_nb.replay({str(path)!r})\n_r")
    assert cell.error is None
    shown = [o["data"].get("text/plain", "") for o in cell.outputs]
    cards = cell.cards()
    # s-1's two calls together, then s-2's, then s-3's: sessions of one
    # client are not merged.
    assert [c["result"]["content"][0]["text"] for c in cards] == ["2", "5", "3", "4"]
    headers = [t for t in shown if t.startswith("client ")]
    assert headers == [
        "client claude-code · session s-1 · 2 calls",
        "client <img src=x onerror=alert(1)> · session s-2 · 1 call",
        "client claude-code · session s-3 · 1 call",
    ]
    html = "".join(o["data"].get("text/html", "") for o in cell.outputs)
    assert "<img" not in html and "&lt;img src=x" in html
    result = ip.user_ns["_r"]
    groups = [(g.session, g.client, len(g.cards)) for g in result.sessions]
    assert groups == [
        ("s-1", "claude-code", 2),
        ("s-2", "<img src=x onerror=alert(1)>", 1),
        ("s-3", "claude-code", 1),
    ]
    # By client, every session's cards.
    assert list(result.clients) == ["claude-code", "<img src=x onerror=alert(1)>"]
    assert [len(v) for v in result.clients.values()] == [3, 1]
    assert "replayed 4 calls" in cell.stdout
    assert "(2 clients: claude-code, <img" in cell.stdout
    assert "; 3 sessions)" in cell.stdout
