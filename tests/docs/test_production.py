"""docs/production.md as a test: the guide's commands, run as written.

The guide's ``tools.py`` block is written to a temporary folder; its bash
blocks run there with ``python`` being this interpreter (the Inspector's
``npx`` line uses the pinned copy in tests/mcp/node, the replicas' fixed
ports are swapped for free ones); its nginx block runs inside a minimal
top-level configuration of the test's own; its pydantic-ai client runs
against that nginx. The notebook cells run in an in-process IPython shell.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "production.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
sys.path.insert(0, str(ROOT / "tests" / "mcp"))
from nginxkit import CONF, free_port, nginx_binary  # noqa: E402
from nodepeers import installed  # noqa: E402


def blocks(tag: str) -> list[str]:
    return [body for t, body in FENCE.findall(GUIDE.read_text()) if t == tag]


def _bash(
    command: str, cwd: Path, **kwargs: object
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=180,
        **kwargs,  # type: ignore[arg-type]
    )


def _env() -> dict[str, str]:
    # ``python`` is this interpreter, and it imports this checkout.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    pythonpath = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
    )
    return {**os.environ, "PATH": path, "PYTHONPATH": pythonpath}


def _listening(port: int, timeout: float = 90) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def test_every_block_is_tagged() -> None:
    tags = {t for t, _ in FENCE.findall(GUIDE.read_text())}
    assert tags <= {"ipython", "python", "bash", "nginx", "text"}, tags


def test_the_guide_runs_from_the_module_to_replicas_behind_nginx(
    tmp_path: Path,
) -> None:
    module = next(b for b in blocks("python") if b.startswith("# tools.py"))
    (tmp_path / "tools.py").write_text(module)
    inspector_block, config_block, replicas_block = blocks("bash")

    # 2. The Inspector lists and calls (the pinned CLI, not a download).
    pinned = str(installed() / "mcp-inspector")
    done = _bash(
        inspector_block.replace("npx @modelcontextprotocol/inspector", pinned), tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert '"name": "add"' in done.stdout and '"text": "5"' in done.stdout

    # 3. mcp-config prints settings with absolute paths.
    (tmp_path / "runtime").mkdir()
    done = _bash(config_block, tmp_path)
    assert done.returncode == 0, done.stderr
    claude = json.loads(done.stdout.split("\n\n")[0].split("\n", 1)[1])
    args = claude["mcpServers"]["tools"]["args"]
    assert args == [
        "-m",
        "dsh_nb",
        "serve",
        str(tmp_path / "tools.py"),
        "--stdio",
        "--journal",
        str(tmp_path / "calls.jsonl"),
    ]

    # 5. Two stateless replicas, nginx in front, a pydantic-ai client.
    nginx_binary()
    ports = {
        "9001": str(free_port()),
        "9002": str(free_port()),
        "8080": str(free_port()),
    }

    def swap(text: str) -> str:
        for old, new in ports.items():
            text = text.replace(old, new)
        return text

    replicas = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", swap(replicas_block) + "\nwait\n"],
        cwd=tmp_path,
        env={**_env(), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    (nginx_block,) = blocks("nginx")
    # The guide's block is what goes in the http block; the rest is ours.
    head = CONF.split("    upstream dsh_nb {{")[0].format(prefix=prefix, user=_user())
    conf = head + swap(nginx_block) + "}\n"
    (prefix / "nginx.conf").write_text(conf)
    proxy = subprocess.Popen(
        [
            nginx_binary(),
            "-p",
            str(prefix),
            "-c",
            str(prefix / "nginx.conf"),
            "-e",
            str(prefix / "error.log"),
        ],
        stderr=subprocess.PIPE,
    )
    try:
        for port in ports.values():
            assert _listening(int(port)), (port, _drain(replicas))
        (client,) = [b for b in blocks("python") if "MCPToolset" in b]
        done = subprocess.run(
            [sys.executable, "-c", swap(client)],
            cwd=tmp_path,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["['add', 'delete_file']", "5"]
    finally:
        proxy.terminate()
        proxy.wait(timeout=15)
        os.killpg(replicas.pid, signal.SIGTERM)
        replicas.wait(timeout=30)
    calls = []
    for name in ("a.jsonl", "b.jsonl"):
        for line in (tmp_path / name).read_text().splitlines():
            event = json.loads(line)
            if event["type"] == "tool/call":
                calls.append(event["data"]["arguments"])
    assert calls == [{"a": 2, "b": 3}]


def _user() -> str:
    import pwd

    return f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""


def _drain(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        return "still running"
    out, err = proc.communicate()
    return out + err


def test_the_notebook_cells_export_the_module_the_guide_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.chdir(tmp_path)
    cells = blocks("ipython")
    assert cells[0].strip() == "%load_ext dsh_nb"
    ip = InteractiveShell.instance()
    ip.run_cell("%unload_ext dsh_nb")
    try:
        for cell in cells[:-1]:
            assert ip.run_cell(cell).success, cell
        last = ip.run_cell(cells[-1])
        assert last.success, last.error_in_exec or last.error_before_exec
        assert (tmp_path / "tools.py").exists()
    finally:
        ip.run_cell("%unload_ext dsh_nb")
    module = next(b for b in blocks("python") if b.startswith("# tools.py"))
    (tmp_path / "by_hand.py").write_text(module)
    code = (
        "import json, sys; sys.path.insert(0, '.')\n"
        "from dsh_nb.mcp.target import load_target\n"
        "print(json.dumps([load_target(m).registry.schemas() for m in sys.argv[1:]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "tools.py", "by_hand.py"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    exported, by_hand = json.loads(done.stdout)
    assert exported == by_hand
    # The exported file, served: its policy row asks, the client answers.
    served = asyncio.run(_serve_and_call(tmp_path / "tools.py", tmp_path))
    assert served == [
        "5",
        "deleted a.txt",
        'Error: the user rejected tool "delete_file"',
    ]


async def _serve_and_call(module: Path, folder: Path) -> list[str]:
    from mcp import Client, StdioServerParameters, types
    from mcp.client.stdio import stdio_client

    actions = ["accept", "decline"]

    async def on_elicit(ctx: object, params: object) -> types.ElicitResult:
        return types.ElicitResult(action=actions.pop(0))  # type: ignore[arg-type]

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dsh_nb", "serve", str(module), "--stdio"],
        env={**_env(), "JUPYTER_RUNTIME_DIR": str(folder)},
        cwd=str(folder),
    )
    texts = []
    async with Client(
        stdio_client(params), mode="legacy", elicitation_callback=on_elicit
    ) as client:
        for name, args in (
            ("add", {"a": 2, "b": 3}),
            ("delete_file", {"path": "a.txt"}),
            ("delete_file", {"path": "b.txt"}),
        ):
            result = await client.call_tool(name, args)
            texts.append(result.content[0].text)
    return texts
