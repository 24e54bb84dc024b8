"""``%%chat`` in an in-process shell against the loopback replay server."""

from __future__ import annotations

import pytest
from chatkit import TOOLS, configure
from ipshell import EXT, run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.cards import CARD_MIME
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn


def texts(cell: object) -> list[str]:
    return [o["data"].get("text/plain", "") for o in cell.outputs]  # type: ignore[attr-defined]


def test_chat_streams_text_cards_and_footer(
    ip: InteractiveShell, server: ReplayServer
) -> None:
    run(ip, TOOLS)
    configure(ip, server)
    server.add(
        Turn(
            text="Adding.",
            tool_calls=(ToolCallSpec(name="add", arguments='{"a": 2, "b": 3}'),),
            chunk=2,
        ),
        Turn(text="The sum is **5**.", reasoning="easy", chunk=4, input_tokens=20),
    )
    cell = run(ip, "%%chat\nWhat is 2 + 3?")
    assert cell.error is None, cell.error
    assert cell.result.result is None  # no Out[]
    finals = cell.final_cards()
    import json

    with open("/tmp/finals.json", "w") as fh:
        json.dump(
            [
                dict(o["data"], transient=o["transient"], update=o["update"])
                for o in cell.outputs
            ],
            fh,
            default=str,
            indent=1,
        )
    assert [(c["tool"], c["status"]) for c in finals.values()] == [("add", "done")]
    shown = texts(cell)
    assert shown[0] == "Adding." or shown[0].startswith(
        "Ad"
    )  # first delta displayed at once
    # The final state of each streamed display is the whole text.
    by_id: dict[str, str] = {}
    for o in cell.outputs:
        did = (o["transient"] or {}).get("display_id")
        html = o["data"].get("text/html", "")
        if did and html and CARD_MIME not in o["data"] and "Reasoning" not in html:
            by_id[did] = html
    assert list(by_id.values()) == [
        "<p>Adding.</p>\n",
        "<p>The sum is <strong>5</strong>.</p>\n",
    ]
    reasoning = [
        o
        for o in cell.outputs
        if "text/html" in o["data"] and "reasoning" in o["data"]["text/html"]
    ]
    assert reasoning and "<details" in reasoning[-1]["data"]["text/html"]
    assert "open" not in reasoning[-1]["data"]["text/html"]  # folded by default
    assert shown[-1] == "2 steps · 30 in · 10 out tokens · 1 reasoning"
    # The conversation goes on in the next cell.
    server.add(Turn(text="Still here."))
    run(ip, "%%chat\nAnd now?")
    assert len(server.requests[-1].body["messages"]) == 6  # system + 4 + 1
    server.add(Turn(text="Fresh."))
    run(ip, "%%chat --new\nHello")
    assert [m["role"] for m in server.requests[-1].body["messages"]] == [
        "system",
        "user",
    ]


def test_a_new_conversation_keeps_the_sdk_client_until_a_setting_changes(
    ip: InteractiveShell, server: ReplayServer
) -> None:
    configure(ip, server)
    magics = ip.magics_manager.registry["ChatMagics"]
    server.add(Turn(text="one"), Turn(text="two"), Turn(text="three"))
    assert run(ip, "%%chat --new\nhi").error is None
    first = magics.conversation
    assert run(ip, "%%chat --new\nhi again").error is None
    # A new conversation (its history starts over) on the same client: the
    # SDK client is built once per endpoint and key, not once per --new.
    assert magics.conversation is not first
    assert [m["role"] for m in server.requests[-1].body["messages"]] == [
        "system",
        "user",
    ]
    assert magics.conversation.client is first.client
    # A changed endpoint builds a new one, and the request goes there.
    run(ip, f'%config DshChat.base_url = "{server.openai_url}/"')
    assert run(ip, "%%chat\nand now").error is None
    assert magics.conversation.client is not first.client
    assert str(magics.conversation.client.base_url) == server.openai_url + "/"
    assert len(server.requests) == 3


def test_no_key_no_base_url_says_what_to_set(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cell = run(ip, "%%chat\nhi")
    assert cell.error is not None
    assert type(cell.error).__name__ == "UsageError"
    assert str(cell.error).startswith(
        "no API key: set the OPENAI_API_KEY environment variable"
    )
    assert "\n" not in str(cell.error)


def test_key_is_never_printed(ip: InteractiveShell, server: ReplayServer) -> None:
    configure(ip, server)
    server.add(ApiErrorTurn := Turn(text="ok"))
    del ApiErrorTurn
    cell = run(ip, "%%chat\nhi")
    log = run(ip, "%tool_log")
    cfg = run(ip, "%config DshChat")
    for c in (cell, log, cfg):
        blob = repr(c.outputs) + c.stdout + c.stderr
        assert server.token not in blob


def test_usage_errors(ip: InteractiveShell, server: ReplayServer) -> None:
    configure(ip, server)
    assert "needs a message" in str(run(ip, "%%chat\n").error)
    assert "--max-steps must be 1" in str(run(ip, "%%chat --max-steps 0\nhi").error)
    run(ip, '%config DshChat.model = ""')
    assert "no model" in str(run(ip, "%%chat\nhi").error)


def test_max_steps_flag(ip: InteractiveShell, server: ReplayServer) -> None:
    run(ip, TOOLS)
    configure(ip, server)
    call = (ToolCallSpec(name="add", arguments='{"a": 1}'),)
    server.add(Turn(tool_calls=call), Turn(tool_calls=call))
    cell = run(ip, "%%chat --max-steps 1\nloop")
    assert any("Stopped after 1 steps" in t for t in texts(cell))
    assert len(server.requests) == 1


def test_anthropic_provider_through_dshchat(
    ip: InteractiveShell, server: ReplayServer
) -> None:
    run(ip, TOOLS)
    run(ip, '%config DshChat.provider = "anthropic"')
    run(ip, f'%config DshChat.base_url = "{server.url}"')
    run(ip, '%config DshChat.api_key_env = "REPLAY_KEY"')
    run(ip, '%config DshChat.model = "claude-sonnet-5"')
    server.add(
        Turn(tool_calls=(ToolCallSpec(name="add", arguments='{"a": 2, "b": 3}'),)),
        Turn(text="5"),
    )
    cell = run(ip, "%%chat\n2 + 3?")
    assert cell.error is None, cell.error
    assert [c["status"] for c in cell.final_cards().values()] == ["done"]
    assert server.requests[0].path == "/v1/messages"
    assert (
        server.requests[1].body["messages"][-1]["content"][0]["type"] == "tool_result"
    )


def test_without_autoawait_there_is_one_line(
    ip: InteractiveShell, server: ReplayServer
) -> None:
    configure(ip, server)
    run(ip, "%autoawait off")
    try:
        cell = run(ip, "%%chat\nhi")
    finally:
        run(ip, "%autoawait on")
    assert type(cell.error).__name__ == "UsageError"
    assert "needs a running event loop" in str(cell.error)


def test_a_rejected_chat_setting_keeps_the_old_one_and_never_breaks_reload(
    ip: InteractiveShell,
) -> None:
    run(ip, '%config DshChat.provider = "anthropic"')
    bad = run(ip, '%config DshChat.provider = "bogus"')
    [line] = bad.stderr.strip().splitlines()
    assert line.startswith("DshChat.provider: rejected 'bogus'")
    assert line.endswith("keeping 'anthropic'")
    assert ip.config.DshChat["provider"] == "anthropic"  # struck from the shell's
    reloaded = run(ip, f"%reload_ext {EXT}")
    assert reloaded.error is None and reloaded.stderr == ""
    shown = run(ip, "%config DshChat.provider")
    assert shown.error is None
    assert "anthropic" in repr(shown.result) + shown.stdout
