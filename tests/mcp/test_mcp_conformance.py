"""The official MCP conformance suite against ``python -m dsh_nb serve --http``.

``@modelcontextprotocol/conformance`` (pinned in ``conformance/``, with the
Node.js 22 binary it needs from the ``node`` package) runs its tool-related
server scenarios against a real server process serving
``conformance/conformance_tools.py``. The suite sends no bearer token, so
it talks to the server through ``conformance/bearer_proxy.py``, which adds
one and passes every other header (``Host`` too) as sent.

Stateful, every scenario passes. Stateless, the scenarios that need a way
back to the client (a question, a sample: no session, no back channel)
cannot, and are listed in ``NEEDS_A_SESSION`` (and in docs/production.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.servekit import http_server

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
    if node.exists() and (_SUITE / "index.js").exists():
        return node
    npm = shutil.which("npm")
    if npm is None:
        if os.environ.get("CI"):
            pytest.fail("npm is not on PATH: the conformance suite needs Node.js")
        pytest.skip("npm is not on PATH: the conformance suite needs Node.js")
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=HERE,
        check=True,
        timeout=900,
    )
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


def _run(node: Path, url: str, scenario: str, out: Path) -> dict[str, object]:
    """One scenario: passed unless one of its checks failed."""
    done = subprocess.run(
        [
            str(node),
            str(_SUITE / "index.js"),
            "server",
            "--url",
            url,
            "--scenario",
            scenario,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=HERE,
    )
    found = sorted(out.glob(f"server-{scenario}-*/checks.json"))
    if not found:
        return {"passed": False, "why": done.stdout[-800:] + done.stderr[-800:]}
    checks = json.loads(found[-1].read_text())
    failed = [c for c in checks if c.get("status") == "FAILURE"]
    return {
        "passed": not failed,
        "why": "; ".join(f"{c.get('id')}: {c.get('errorMessage')}" for c in failed),
    }


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
    results: dict[str, dict[str, object]] = {}
    target = HERE / "conformance_tools.py"
    with http_server(runtime, *args, target=target, timeout=300) as server:
        with _proxy(server.url, token_file, port) as url:
            with tempfile.TemporaryDirectory() as out:
                for scenario in SCENARIOS:
                    results[scenario] = _run(node, url, scenario, Path(out))
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
