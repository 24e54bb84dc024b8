"""A shared runtime folder: other users' files neither block nor fool us.

``JUPYTER_RUNTIME_DIR`` may be a folder every user writes (sticky, like
``/tmp``). Another user can then plant names (symlinks, folders, FIFOs) and
forge runtime files that point at their own port. The tests play that other
user with real uids: the files are chowned to them, and where the kernel's
side must be an ordinary user (root ignores the sticky bit), the serving
process runs as ``nobody``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcpkit import add_tool

from dsh_nb.mcp.runtime import find_entry, write_entry
from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import ToolRegistry

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False
needs_root = pytest.mark.skipif(not ROOT, reason="plays other users: needs root")
ATTACKER = 1  # daemon
VICTIM = 65534  # nobody
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def shared(monkeypatch):
    """A folder every user may write, like /tmp: mode 1777.

    Made in the system's temporary folder itself: pytest's own is private
    to the user running the tests, so other users could not reach it.
    """
    folder = Path(tempfile.mkdtemp(prefix="dsh-shared-runtime-"))
    folder.chmod(0o1777)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class Trap:
    """The attacker's port: records whether anything connected to it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(1)
            try:
                self.received += conn.recv(65536) or b"(connected)"
            except OSError:
                self.received += b"(connected)"
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


def _forge(folder: Path, name: str, body: dict, *, uid: int, mode: int) -> Path:
    path = folder / name
    path.write_text(json.dumps(body))
    os.chown(path, uid, uid)
    path.chmod(mode)
    future = time.time() + 3600  # "newest": what --latest would pick
    os.utime(path, (future, future))
    return path


def _plant_all(folder: Path, trap: Trap) -> None:
    """Every way another user can dress a file up as a serving kernel."""
    body = {
        "url": f"http://127.0.0.1:{trap.port}/mcp",
        "token": "forged-token-forged-token",
        "pid": os.getpid(),  # a live pid: ours
        "name": "victim",
    }
    _forge(folder, "dsh-mcp-1-aaaa.json", body, uid=ATTACKER, mode=0o644)
    _forge(folder, "dsh-mcp-2-bbbb.json", body, uid=ATTACKER, mode=0o600)
    # Ours by owner, but readable by others: not a file write_entry made.
    _forge(folder, "dsh-mcp-3-cccc.json", body, uid=os.getuid(), mode=0o644)
    target = _forge(folder, "attacker-target", body, uid=ATTACKER, mode=0o644)
    link = folder / "dsh-mcp-4-dddd.json"
    link.symlink_to(target)
    os.lchown(link, ATTACKER, ATTACKER)
    fifo = folder / "dsh-mcp-5-eeee.json"
    os.mkfifo(fifo)  # open() for reading would block until a writer comes
    os.chown(fifo, ATTACKER, ATTACKER)
    (folder / "dsh-mcp-6-ffff.json").mkdir()


@needs_root
def test_forged_files_are_skipped_by_mcp_config_and_the_bridge(shared):
    trap = Trap()
    try:
        _plant_all(shared, trap)

        async def go():
            registry = ToolRegistry()
            registry.register(add_tool())
            server = serve_mcp(registry=registry, name="victim")
            await server.started()
            env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(shared)}
            try:
                outs = []
                for target in (["--latest"], ["--kernel", "victim"]):
                    proc = await asyncio.create_subprocess_exec(
                        sys.executable,
                        "-m",
                        "dsh_nb",
                        "mcp-config",
                        *target,
                        env=env,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                    )
                    out, err = await asyncio.wait_for(proc.communicate(), 30)
                    outs.append((out.decode(), err.decode()))
                params = StdioServerParameters(
                    command=sys.executable,
                    args=["-m", "dsh_nb", "mcp-bridge", "--latest"],
                    env=env,
                )
                async with Client(params, mode="legacy") as c:
                    listed = [t.name for t in (await c.list_tools()).tools]
                    called = (await c.call_tool("add", {"a": 2, "b": 3})).content
                return server, outs, listed, called[0].text
            finally:
                await server.stop()

        server, outs, listed, text = asyncio.run(asyncio.wait_for(go(), 90))
    finally:
        trap.close()
    for out, err in outs:
        assert f"URL:    {server.url}" in out
        assert str(trap.port) not in out
        assert "forged-token" not in out
        # Why each planted file was passed over, on stderr, for the user.
        assert "belongs to another user (uid 1)" in err
        assert "has mode 0644, not 0600" in err
        assert "is not a regular file" in err
    assert listed == ["add"] and text == "5"
    assert trap.received == b"", "a client reached the forged port"


@needs_root
def test_scan_says_why_each_planted_file_is_not_trusted(shared):
    trap = Trap()
    try:
        from dsh_nb.mcp.runtime import scan

        _plant_all(shared, trap)
        path = write_entry(url="http://127.0.0.1:1/mcp", token="t" * 20, name="me")
        entries, skipped = scan()
    finally:
        trap.close()
    assert [e.path for e in entries] == [path]
    assert find_entry("victim") is None
    assert skipped["dsh-mcp-1-aaaa.json"] == "belongs to another user (uid 1)"
    assert skipped["dsh-mcp-2-bbbb.json"] == "belongs to another user (uid 1)"
    assert skipped["dsh-mcp-3-cccc.json"] == "has mode 0644, not 0600"
    assert skipped["dsh-mcp-4-dddd.json"].startswith("cannot be opened")
    assert skipped["dsh-mcp-5-eeee.json"] == "is not a regular file"
    assert skipped["dsh-mcp-6-ffff.json"] == "is not a regular file"


VICTIM_SCRIPT = """
import asyncio, os, sys
from dsh_nb.mcp.server import serve_mcp
from dsh_nb.tools import ToolRegistry
print(os.getpid(), flush=True)
sys.stdin.readline()  # the attacker plants names for this pid meanwhile
async def main():
    try:
        server = serve_mcp(registry=ToolRegistry(), name="victim")
        await server.started()
        print("OK", server.token_file.name, oct(server.token_file.stat().st_mode),
              flush=True)
        await server.stop()
    except Exception as exc:
        print("FAIL", type(exc).__name__, exc, flush=True)
asyncio.run(main())
"""


# setpriv drops to the user in the exec itself, so the interpreter (under
# /root here) is found; the process then runs with no privilege at all.
AS_VICTIM = ["setpriv", f"--reuid={VICTIM}", f"--regid={VICTIM}", "--clear-groups"]


@needs_root
@pytest.mark.skipif(not shutil.which("setpriv"), reason="needs setpriv")
def test_names_planted_for_our_pid_do_not_stop_an_ordinary_user_serving(shared):
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(shared),
        "PYTHONPATH": str(REPO),
        "HOME": str(shared),
    }
    results = []
    for kind in ("symlink", "folder"):
        proc = subprocess.Popen(
            [*AS_VICTIM, sys.executable, "-c", VICTIM_SCRIPT],
            env=env,
            cwd=str(shared),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        pid = int(proc.stdout.readline())
        planted = shared / f"dsh-mcp-{pid}.json"  # the name a pid predicts
        target = shared / f"attacker-{kind}"
        target.write_text("the attacker's own file")
        os.chown(target, ATTACKER, ATTACKER)
        if kind == "symlink":
            planted.symlink_to(target)
            os.lchown(planted, ATTACKER, ATTACKER)
        else:
            planted.mkdir()
            os.chown(planted, ATTACKER, ATTACKER)
        out, _ = proc.communicate("go\n", timeout=60)
        results.append((kind, out.strip(), target.read_text()))
    for kind, out, target_text in results:
        assert out.startswith("OK dsh-mcp-"), (kind, out)
        assert out.endswith("0o100600"), (kind, out)
        assert target_text == "the attacker's own file"


def test_a_runtime_folder_that_is_a_file_is_a_clear_error(tmp_path, monkeypatch):
    not_a_folder = tmp_path / "runtime"
    not_a_folder.write_text("")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(not_a_folder))

    async def go():
        from dsh_nb.mcp.runtime import RuntimeFileError

        with pytest.raises(RuntimeFileError, match="exists but is not a folder"):
            serve_mcp(registry=ToolRegistry())
        await asyncio.sleep(0.05)
        # Nothing was left running or listening.
        return [t for t in asyncio.all_tasks() if "mcp" in t.get_name()]

    assert asyncio.run(go()) == []


@pytest.mark.usefixtures("runtime_env")
def test_each_server_has_its_own_file_and_stop_removes_it_at_once():
    async def go():
        first = serve_mcp(registry=ToolRegistry(), name="same")
        await first.started()
        stopping = first.stop()
        gone_at_once = first.token_file is not None and not first.token_file.exists()
        # The same port, at once: the old listener is already closed.
        second = serve_mcp(registry=ToolRegistry(), name="same", port=first.port)
        await second.started()
        await stopping  # the first server's cleanup ends after the second wrote
        assert second.token_file is not None
        still_there = second.token_file.exists()
        found = find_entry("same")
        await second.stop()
        return first, second, gone_at_once, still_there, found

    first, second, gone_at_once, still_there, found = asyncio.run(go())
    assert first.token_file != second.token_file
    assert gone_at_once and still_there
    assert found is not None and found.url == second.url
