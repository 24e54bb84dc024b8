"""The official MCP conformance suite: our server, and ``connect_mcp`` as a client.

Server side, against ``python -m dsh_nb serve --http``:

``@modelcontextprotocol/conformance`` (pinned in ``conformance/``, with the
Node.js 22 binary it needs from the ``node`` package) runs its tool-related
server scenarios against a real server process serving
``conformance/conformance_tools.py``. The suite sends no bearer token, so
it talks to the server through ``conformance/bearer_proxy.py``, which adds
one and passes every other header (``Host`` too) as sent.

Stateful, every scenario passes. Stateless, the scenarios that need a way
back to the client (a question, a sample: no session, no back channel)
cannot, and are listed in ``NEEDS_A_SESSION`` (and in docs/production.md).

Client side, the suite starts a test server per scenario and runs
``conformance/conformance_client.py`` (``connect_mcp`` and the runner)
against it. Every client scenario it lists is either run
(``CLIENT_SCENARIOS``) or named in ``CLIENT_OUT_OF_SCOPE`` with the reason
(and in docs/reference.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.mcp.servekit import http_server
from tests.npmpeers import ensure_installed

HERE = Path(__file__).resolve().parent / "conformance"
_BIN = HERE / "node_modules" / ".bin"
_SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist"

#: The suite's server scenarios about tools (resources, prompts and
#: completion are features dsh_nb does not serve).
SCENARIOS = (
    "server-initialize",
    "logging-set-level",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "json-schema-2020-12",
    "elicitation-sep1034-defaults",
    "server-sse-polling",
    "server-sse-multiple-streams",
    "elicitation-sep1330-enums",
    "dns-rebinding-protection",
)
#: What a ``--stateless`` server cannot do: ask the client anything.
NEEDS_A_SESSION = frozenset(
    {
        "tools-call-sampling",
        "tools-call-elicitation",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
    }
)


def _installed() -> Path:
    node = _BIN / "node"
    ensure_installed(HERE, [node, _SUITE / "index.js"], "the conformance suite")
    return node


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _proxy(upstream: str, token_file: Path, port: int) -> Iterator[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "bearer_proxy.py"),
            upstream,
            str(token_file),
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"proxy at (\S+)", line)
        assert found, line + (proc.stderr.read() if proc.stderr else "")
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _node_suite(node: Path, url: str, out: Path, *scenario: str) -> str:
    """Run the suite (one scenario if named), saving checks under ``out``."""
    which = ("--scenario", *scenario) if scenario else ()
    argv = [str(node), str(_SUITE / "index.js"), "server", "--url", url]
    done = subprocess.run(
        [*argv, *which, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=HERE,
    )
    return done.stdout[-800:] + done.stderr[-800:]


def _run(node: Path, url: str, out: Path) -> dict[str, dict[str, object]]:
    """Each of our scenarios: passed unless one of its checks failed.

    A Node.js start costs about a second of CPU, so the suite's active
    scenarios run in one process (those dsh_nb does not serve, resources,
    prompts and completion, fail there and are not read); ours that the
    active suite leaves out (still pending in this version) run one by one.
    """
    said = _node_suite(node, url, out)
    results: dict[str, dict[str, object]] = {}
    for scenario in SCENARIOS:
        found = sorted(out.glob(f"server-{scenario}-*/checks.json"))
        if not found:
            said = _node_suite(node, url, out, scenario)
            found = sorted(out.glob(f"server-{scenario}-*/checks.json"))
        if not found:
            results[scenario] = {"passed": False, "why": "not run: " + said}
            continue
        checks = json.loads(found[-1].read_text())
        failed = [c for c in checks if c.get("status") == "FAILURE"]
        results[scenario] = {
            "passed": not failed,
            "why": "; ".join(f"{c.get('id')}: {c.get('errorMessage')}" for c in failed),
        }
    return results


def _suite(runtime: Path, *serve_args: str) -> dict[str, dict[str, object]]:
    node = _installed()
    port = _free_port()
    token_file = runtime / "token"
    token_file.write_text("conformance-" + os.urandom(12).hex())
    token_file.chmod(0o600)
    args = (
        "--token-file",
        str(token_file),
        "--allowed-host",
        f"localhost:{port}",
        "--allowed-host",
        f"127.0.0.1:{port}",
        *serve_args,
    )
    target = HERE / "conformance_tools.py"
    with http_server(runtime, *args, target=target, timeout=300) as server:
        with _proxy(server.url, token_file, port) as url:
            with tempfile.TemporaryDirectory() as out:
                results = _run(node, url, Path(out))
    passed = sum(1 for r in results.values() if r["passed"])
    print(
        f"\nconformance {' '.join(serve_args) or 'stateful'}: {passed}/{len(SCENARIOS)}"
    )
    for name, result in results.items():
        print(
            f"  {'pass' if result['passed'] else 'FAIL'} {name} {result['why'] or ''}"
        )
    return results


def test_every_tool_scenario_passes_stateful(runtime: Path) -> None:
    results = _suite(runtime)
    failed = {k: v["why"] for k, v in results.items() if not v["passed"]}
    assert failed == {}


def test_stateless_passes_all_but_the_scenarios_that_need_a_session(
    runtime: Path,
) -> None:
    results = _suite(runtime, "--stateless")
    failed = {k for k, v in results.items() if not v["passed"]}
    assert failed == NEEDS_A_SESSION, {k: results[k]["why"] for k in failed}


#: The suite's client scenarios ``connect_mcp`` is held to.
CLIENT_SCENARIOS = (
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
)
_NO_OAUTH = (
    "connect_mcp has no OAuth flow: it sends the headers it is given "
    "(headers={'Authorization': 'Bearer ...'}) and nothing else"
)
#: The client scenarios it is not, and why.
CLIENT_OUT_OF_SCOPE = {
    name: _NO_OAUTH
    for name in (
        "auth/metadata-default",
        "auth/metadata-var1",
        "auth/metadata-var2",
        "auth/metadata-var3",
        "auth/basic-cimd",
        "auth/scope-from-www-authenticate",
        "auth/scope-from-scopes-supported",
        "auth/scope-omitted-when-undefined",
        "auth/scope-step-up",
        "auth/scope-retry-limit",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
        "auth/pre-registration",
        "auth/2025-03-26-oauth-metadata-backcompat",
        "auth/2025-03-26-oauth-endpoint-fallback",
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/client-credentials-jwt",
        "auth/client-credentials-basic",
        "auth/cross-app-access-complete-flow",
    )
}
#: The one check that measures the client's clock: a reconnect 450 to
#: 700 ms after the server closed the stream (SEP-1699's ``retry: 500``).
_TIMING = "client-sse-retry-timing"


def _client_checks(out: Path, scenario: str) -> list[dict[str, object]]:
    found = sorted(out.glob(f"{scenario}-*/checks.json"))
    return json.loads(found[-1].read_text()) if found else []


def _client_verdict(
    out: Path, scenario: str, done: subprocess.CompletedProcess[str]
) -> dict[str, object]:
    """Passed when a check succeeded and none failed or warned."""
    checks = _client_checks(out, scenario)
    bad = [c for c in checks if c.get("status") in ("FAILURE", "WARNING")]
    passed = (
        bool(checks) and not bad and any(c.get("status") == "SUCCESS" for c in checks)
    )
    why = "; ".join(f"{c.get('id')}: {c.get('errorMessage')}" for c in bad)
    if not checks:
        why = (done.stdout[-800:] + done.stderr[-800:]).strip()
    return {"passed": passed, "why": why, "failed": {str(c.get("id")) for c in bad}}


def _run_clients(node: Path, scenarios: tuple[str, ...], out: Path) -> dict[str, Any]:
    """Run the scenarios side by side: one suite process each, all at once."""
    client = f"{sys.executable} {HERE / 'conformance_client.py'}"
    procs = {
        name: subprocess.Popen(
            [
                str(node),
                str(_SUITE / "index.js"),
                "client",
                "--command",
                client,
                "--scenario",
                name,
                "--timeout",
                "120000",
                "-o",
                str(out),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=HERE,
        )
        for name in scenarios
    }
    results: dict[str, Any] = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=300)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        results[name] = _client_verdict(out, name, done)
    return results


def test_connect_mcp_passes_every_in_scope_client_scenario(tmp_path: Path) -> None:
    node = _installed()
    listed = subprocess.run(
        [str(node), str(_SUITE / "index.js"), "list", "--client"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=HERE,
        check=True,
    ).stdout
    names = set(re.findall(r"^\s+- (\S+)", listed, re.MULTILINE))
    assert names == set(CLIENT_SCENARIOS) | set(CLIENT_OUT_OF_SCOPE), (
        "the suite's client scenarios changed; run or exclude (with a reason) "
        f"each of {sorted(names ^ (set(CLIENT_SCENARIOS) | set(CLIENT_OUT_OF_SCOPE)))}"
    )
    results = _run_clients(node, CLIENT_SCENARIOS, tmp_path / "first")
    retry = results["sse-retry"]
    if retry["failed"] == {_TIMING}:
        # Only the client's clock missed the window, on a loaded machine
        # (four suites and clients start at once): the reconnect happened,
        # with the Last-Event-ID. Measure it once more, alone.
        print(f"\nsse-retry timing, first run: {retry['why']}")
        results |= _run_clients(node, ("sse-retry",), tmp_path / "again")
    passed = sum(1 for r in results.values() if r["passed"])
    print(f"\nconformance client (connect_mcp): {passed}/{len(CLIENT_SCENARIOS)}")
    for name, result in results.items():
        print(f"  {'pass' if result['passed'] else 'FAIL'} {name} {result['why']}")
    failed = {k: v["why"] for k, v in results.items() if not v["passed"]}
    assert failed == {}
