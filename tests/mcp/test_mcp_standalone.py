"""``python -m dsh_nb serve``: a module's registry as its own MCP server.

Each test starts the server as a client or an operator would, in its own
process, and talks to it with the SDK's client over stdio or HTTP.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import types
from mcpkit import client as http_client
from servekit import (
    COLLECTED,
    HERE,
    TOOLS,
    env,
    error_code,
    http_server,
    journal,
    serve_argv,
    stdio,
)


def answers(*actions: str) -> tuple[list[str], object]:
    """An elicitation callback that answers ``actions`` in turn."""
    asked: list[str] = []
    todo = list(actions)

    async def on_elicit(ctx: object, params: types.ElicitRequestParams) -> object:
        asked.append(params.message)
        return types.ElicitResult(action=todo.pop(0))  # type: ignore[arg-type]

    return asked, on_elicit


async def test_stdio_serves_lists_calls_and_refuses_bad_arguments_without_jupyter(
    runtime: Path, tmp_path: Path
) -> None:
    blocked = tmp_path / "blocked.txt"
    argv = serve_argv(str(TOOLS), "--stdio", blocked=True)
    async with stdio(argv, runtime, extra_env={"DSH_BLOCKED_LOG": str(blocked)}) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert sorted(tools) == ["add", "delete_file", "shout", "where"]
        assert tools["add"].input_schema["required"] == ["a", "b"]
        done = await c.call_tool("add", {"a": 2, "b": 3})
        assert (done.is_error, done.content[0].text) == (False, "5")
        bad = await c.call_tool("add", {"a": "two"})
        assert bad.is_error and error_code(bad) == "INVALID_ARGS"
        assert '"a" must be an integer' in bad.content[0].text
        # A tool that prints to stdout does not corrupt the protocol.
        loud = await c.call_tool("shout", {"text": "hi"})
        assert loud.content[0].text == "HI"
        unknown = await c.call_tool("nope", {})
        assert unknown.is_error and error_code(unknown) == "UNKNOWN_TOOL"
        # This client declares no elicitation: an ask fails closed.
        denied = await c.call_tool("delete_file", {"path": "a"})
    assert denied.is_error
    assert "no approval channel is available" in denied.content[0].text
    assert not blocked.exists(), blocked.read_text()


def test_the_import_blocker_catches_a_path_that_needs_the_notebook(
    runtime: Path, tmp_path: Path
) -> None:
    # The check above can fail: a served module that imports the notebook.
    blocked = tmp_path / "blocked.txt"
    module = tmp_path / "needs_the_notebook.py"
    module.write_text(
        "import dsh_nb.notebook.live\n\n\ndef one() -> int:\n    return 1\n"
    )
    done = subprocess.run(
        [sys.executable, str(HERE / "no_jupyter.py"), "serve", str(module), "--stdio"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env(runtime, DSH_BLOCKED_LOG=str(blocked)),
        timeout=60,
    )
    assert done.returncode != 0
    assert "dsh_nb.notebook" in blocked.read_text().split()


def test_the_demo_runs_without_jupyter(runtime: Path, tmp_path: Path) -> None:
    # The demo's calls go through CallRunner with a printing view.
    blocked = tmp_path / "blocked.txt"
    done = subprocess.run(
        [sys.executable, str(HERE / "no_jupyter.py"), "demo"],
        capture_output=True,
        text=True,
        env=env(runtime, DSH_BLOCKED_LOG=str(blocked)),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert not blocked.exists(), blocked.read_text()


@pytest.mark.parametrize(
    ("mode", "protocol"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")]
)
async def test_an_ask_becomes_an_elicitation_one_approved_one_rejected(
    runtime: Path, tmp_path: Path, mode: str, protocol: str
) -> None:
    # Handshake era: an elicitation/create request on the call's stream;
    # 2026-07-28: an input_required round the SDK client answers and retries.
    log = tmp_path / "calls.jsonl"
    asked, on_elicit = answers("accept", "decline")
    argv = serve_argv(str(TOOLS), "--stdio", "--journal", str(log))
    async with stdio(argv, runtime, elicit=on_elicit, name="approver", mode=mode) as c:
        yes = await c.call_tool("delete_file", {"path": "a.txt"})
        no = await c.call_tool("delete_file", {"path": "b.txt"})
        plain = await c.call_tool("add", {"a": 1, "b": 1})
    assert (yes.is_error, yes.content[0].text) == (False, "deleted a.txt")
    assert (
        no.is_error
        and no.content[0].text == 'Error: the user rejected tool "delete_file"'
    )
    assert plain.content[0].text == "2"
    assert len(asked) == 2  # add was never asked about
    assert 'Allow the tool "delete_file" to run once?' in asked[0]
    assert "deleting needs a yes" in asked[0] and '"a.txt"' in asked[0]
    lines = journal(log)
    assert os.stat(log).st_mode & 0o777 == 0o600
    session = lines[0]
    assert session["type"] == "mcp/session"
    assert session["data"]["client"] == "approver"
    assert session["data"]["transport"] == "stdio"
    assert session["data"]["protocol"] == protocol
    assert {line["agent"] for line in lines} == {session["data"]["agent"]}
    decided = [x["data"]["outcome"] for x in lines if x["type"] == "approval/decided"]
    assert decided == ["allowed-once", "rejected"]
    results = [x["data"] for x in lines if x["type"] == "tool/result"]
    assert [(r["status"], r.get("approval")) for r in results] == [
        ("done", "allowed-once"),
        ("denied", "rejected"),
        ("done", None),
    ]


async def test_without_the_capability_an_ask_is_allowed_as_configured(
    runtime: Path,
) -> None:
    # (Failing closed by default: the first test's client asks for it.)
    argv = serve_argv(str(TOOLS), "--stdio", "--without-elicitation", "allow")
    async with stdio(argv, runtime) as c:
        allowed = await c.call_tool("delete_file", {"path": "a"})
    assert allowed.content[0].text == "deleted a"


async def _local_events(calls: list[tuple[str, dict]]) -> list[dict]:
    """The events the core journals for ``calls`` in-process, as a notebook
    door runs them (one turn a call, an answerer that allows)."""
    sys.path.insert(0, str(HERE))
    try:
        import standalone_tools
    finally:
        sys.path.remove(str(HERE))
    from dsh_nb.tools import Agent, ApprovalService, ToolExecutionInput
    from dsh_nb.tools.audit import journal

    registry = standalone_tools.registry
    registry.approval = ApprovalService()
    registry.approval.on_request(lambda request, next_: "allowed-once")
    agent = Agent("notebook")

    try:
        for i, (name, args) in enumerate(calls):
            with journal.turn(agent):
                await registry.execute(
                    ToolExecutionInput(
                        call_id=f"c{i}", name=name, arguments=args, agent=agent
                    )
                )
    finally:
        registry.approval = None
    return [dict(e) for e in agent.session.events]


def _shape(event: dict) -> tuple:
    data = {k: v for k, v in event["data"].items() if k not in ("callId", "id")}
    if "result" in data:
        data["result"] = {k: v for k, v in data["result"].items() if k != "callId"}
    return event["type"], json.dumps(data, sort_keys=True)


async def test_the_journal_holds_the_events_the_core_journals(
    runtime: Path, tmp_path: Path
) -> None:
    calls = [
        ("add", {"a": 1, "b": 2}),
        ("add", {"a": "x"}),
        ("delete_file", {"path": "p"}),
    ]
    log = tmp_path / "calls.jsonl"
    log.write_text("")  # appended to, never truncated
    log.chmod(0o600)  # a journal others may read is refused
    _, on_elicit = answers("accept")
    argv = serve_argv(str(TOOLS), "--stdio", "--journal", str(log))
    async with stdio(argv, runtime, elicit=on_elicit) as c:
        for name, args in calls:
            await c.call_tool(name, args)
    served = [line for line in journal(log) if line["type"] != "mcp/session"]
    local = await _local_events(calls)
    assert [_shape(e) for e in served] == [_shape(e) for e in local]
    # SessionLog reads the journal back (the agent key is extra).
    from dsh_nb.tools import SessionLog

    assert len(SessionLog.read_jsonl(log).events) == len(served) + 1


async def test_http_works_as_tools_serve_does(runtime: Path, tmp_path: Path) -> None:
    log = tmp_path / "http.jsonl"
    blocked = tmp_path / "blocked.txt"
    with http_server(
        runtime, "--name", "prod", "--journal", str(log), blocked_log=blocked
    ) as server:
        assert server.url.startswith("http://127.0.0.1:")
        token = server.token()
        assert token not in server.printed
        entry = server.entry
        assert server.token_file == str(entry)
        assert entry.parent == runtime and stat.S_IMODE(entry.stat().st_mode) == 0o600
        async with httpx2.AsyncClient() as raw:
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
            assert (await raw.post(server.url, json=body)).status_code == 401
            wrong = {"Authorization": "Bearer " + "x" * 43}
            assert (
                await raw.post(server.url, json=body, headers=wrong)
            ).status_code == 401
        asked, on_elicit = answers("accept")
        async with http_client(server.url, token) as c:
            assert {t.name for t in (await c.list_tools()).tools} >= {"add"}
            assert (await c.call_tool("add", {"a": 4, "b": 5})).content[0].text == "9"
            bad = await c.call_tool("add", {"b": 1})
            assert error_code(bad) == "INVALID_ARGS"
        # Elicitation rides the call's own SSE stream over HTTP too.
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        async with Client(
            streamable_http_client(server.url, http_client=http),
            mode="legacy",
            elicitation_callback=on_elicit,
        ) as c:
            yes = await c.call_tool("delete_file", {"path": "x"})
        assert yes.content[0].text == "deleted x" and len(asked) == 1
        # A 2026-07-28 client over HTTP: the call waits between the rounds,
        # past the end of the first request's exchange.
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        asked_modern, on_modern = answers("decline")
        async with Client(
            streamable_http_client(server.url, http_client=http),
            mode="auto",
            elicitation_callback=on_modern,
        ) as c:
            no = await c.call_tool("delete_file", {"path": "y"})
            assert c.protocol_version == "2026-07-28"
            # A state this server never gave is refused; nothing runs.
            forged = await c.session.call_tool(
                "delete_file",
                {"path": "z"},
                request_state="forged-state",
                input_responses={"approval": types.ElicitResult(action="accept")},
                allow_input_required=True,
            )
        assert no.content[0].text == 'Error: the user rejected tool "delete_file"'
        assert len(asked_modern) == 1
        assert forged.is_error and "unknown or expired" in forged.content[0].text
        # mcp-config and the bridge find it by name, through the runtime file.
        shown = subprocess.run(
            [sys.executable, "-m", "dsh_nb", "mcp-config", "--kernel", "prod"],
            capture_output=True,
            text=True,
            env=env(runtime),
            timeout=60,
        )
        assert shown.returncode == 0, shown.stderr
        assert f"URL:    {server.url}" in shown.stdout
        assert f"Authorization: Bearer {token}" in shown.stdout
        bridge = [sys.executable, "-m", "dsh_nb", "mcp-bridge", "--kernel", "prod"]
        async with stdio(bridge, runtime) as c:
            assert (await c.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"
    assert not entry.exists()  # SIGTERM stops it gracefully and cleans up
    assert server.proc.returncode == 0
    assert not blocked.exists(), blocked.read_text()  # no Jupyter import tried
    kinds = [line["type"] for line in journal(log)]
    # add, bad add, delete, modern delete, bridged add; the forged round ran nothing
    assert kinds.count("tool/result") == 5


async def test_a_token_file_gives_a_fixed_token_and_must_be_private(
    runtime: Path, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-shared-token-0123456789\n")
    token_file.chmod(0o644)
    done = subprocess.run(
        serve_argv(str(TOOLS), "--http", "--token-file", str(token_file)),
        capture_output=True,
        text=True,
        env=env(runtime),
        timeout=60,
    )
    assert done.returncode == 2
    assert "readable by others; run chmod 600" in done.stderr
    token_file.chmod(0o600)
    with http_server(runtime, "--token-file", str(token_file)) as server:
        assert server.token() == "s3cret-shared-token-0123456789"
        assert server.token_file == str(token_file)
        assert "s3cret" not in server.printed
        async with http_client(server.url, "s3cret-shared-token-0123456789") as c:
            assert (await c.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no_such_module_here"], "no module named 'no_such_module_here'"),
        ([f"{TOOLS}:nothing"], "has no attribute 'nothing'"),
        ([f"{TOOLS}:add.name"], "is a str, not a ToolRegistry"),
        (["json"], "module 'json' has no @tool functions"),
        ([str(TOOLS), "--stateless"], "--stateless needs --http"),
        ([str(TOOLS), "--http", "--host", "0.0.0.0"], "add --allow-remote"),
        ([str(HERE / "missing.py")], "no such file"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(
    runtime: Path, args: list[str], message: str
) -> None:
    done = subprocess.run(
        serve_argv(*args), capture_output=True, text=True, env=env(runtime), timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


async def test_a_module_of_tools_is_collected_and_attr_picks_one(runtime: Path) -> None:
    async with stdio(serve_argv(str(COLLECTED), "--stdio"), runtime) as c:
        assert [t.name for t in (await c.list_tools()).tools] == ["greet", "square"]
        assert (await c.call_tool("square", {"x": 7})).content[0].text == "49"
    argv = serve_argv("standalone_collected:greet", "--stdio")  # a module on the path
    async with stdio(argv, runtime) as c:
        assert [t.name for t in (await c.list_tools()).tools] == ["greet"]


async def test_mcp_config_prints_settings_that_launch_the_module(
    runtime: Path, tmp_path: Path
) -> None:
    log = tmp_path / "j.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh_nb",
            "mcp-config",
            "standalone_collected",
            "--journal",
            str(log),
        ],
        capture_output=True,
        text=True,
        env=env(runtime),
        cwd=str(HERE),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    first = done.stdout.split("\n\n")[0]
    config = json.loads(first.split("\n", 1)[1])["mcpServers"]["standalone_collected"]
    assert config["type"] == "stdio"
    assert config["args"][:4] == ["-m", "dsh_nb", "serve", str(COLLECTED)]
    assert config["args"][4:] == ["--stdio", "--journal", str(log)]
    assert "Cursor" in done.stdout and "VS Code" in done.stdout
    # The printed command works from any folder (the client's, not ours).
    async with stdio([config["command"], *config["args"]], runtime) as c:
        assert (await c.call_tool("greet", {"name": "x"})).content[0].text == "hello x"
    assert any(line["type"] == "tool/result" for line in journal(log))


def test_a_busy_port_is_one_line_and_exit_2(runtime: Path) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = subprocess.run(
            serve_argv(str(TOOLS), "--http", "--port", str(port)),
            capture_output=True,
            text=True,
            env=env(runtime),
            timeout=60,
        )
    assert done.returncode == 2, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(runtime.iterdir()) == []  # no runtime file left behind


async def test_allowed_host_lets_a_proxy_name_through_and_nothing_else(
    runtime: Path,
) -> None:
    with http_server(runtime, "--allowed-host", "tools.internal:8080") as server:
        token = server.token()
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        }
        async with httpx2.AsyncClient() as raw:
            by_proxy = await raw.post(
                server.url,
                json=body,
                headers={**headers, "Host": "tools.internal:8080"},
            )
            foreign = await raw.post(
                server.url, json=body, headers={**headers, "Host": "evil.example:8080"}
            )
    assert by_proxy.status_code == 200, by_proxy.text
    assert foreign.status_code == 421


async def test_a_journal_of_two_clients_replays_in_a_notebook_grouped_by_session(
    runtime: Path, tmp_path: Path
) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    log = tmp_path / "calls.jsonl"
    argv = serve_argv(str(TOOLS), "--stdio", "--journal", str(log))
    # claude-code twice: two sessions of one client stay two groups.
    for name, calls in (("claude-code", 2), ("cursor", 1), ("claude-code", 1)):
        async with stdio(argv, runtime, name=name) as c:
            for i in range(calls):
                await c.call_tool("add", {"a": i, "b": 1})
    ip = InteractiveShell.instance()
    ip.run_cell("%load_ext dsh_nb")
    try:
        import dsh_nb

        replayed = dsh_nb.replay(log, display=False)
    finally:
        ip.run_cell("%unload_ext dsh_nb")
    assert {k: len(v) for k, v in replayed.clients.items()} == {
        "claude-code": 3,
        "cursor": 1,
    }
    groups = [(g.client, len(g.cards)) for g in replayed.sessions]
    assert groups == [("claude-code", 2), ("cursor", 1), ("claude-code", 1)]
    sessions = [line for line in journal(log) if line["type"] == "mcp/session"]
    assert [g.session for g in replayed.sessions] == [s["agent"] for s in sessions]
    assert len(replayed) == 4
