"""A classroom on JupyterHub: two students, one install, nothing shared.

A real JupyterHub (``jupyterhub`` from PyPI, ``configurable-http-proxy``
from npm, pinned in ``tests/hub/node``) with the local process spawner
starts each student's server as their own system user; the users are made
by the test with ``useradd`` (it runs as root) and removed afterwards.
dsh_nb is installed once, in the environment both servers run from. Both
students' runtime folder is one shared sticky folder (the worst case; a
hub's default is a folder in each home), so their MCP runtime files sit
side by side. Each kernel is driven over its websocket, as JupyterLab
drives it. Checked:

* the extension: both servers load the one install and offer the
  labextension; nothing is installed in a home;
* each ``%tools serve`` answers only its own student's token;
* neither student can read the other's runtime file;
* ``mcp-config`` and the bridge never pick up the other student's server,
  even when the other plants a forged file that points at their own;
* a ``%%chat`` key set in one student's kernel is invisible to the other.

Slow (a hub and two servers start): ``pytest --slow tests/hub``, which
``.ci/run`` runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import httpx2
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
from hubkit import (
    CHP,
    REPO,
    Kernel,
    jupyterhub,
    shared_folder,
    system_users,
    user_python,
)
from mcpkit import client

from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import Turn

pytestmark = pytest.mark.slow

ALICE, BOB = "dshclass-alice", "dshclass-bob"
REQUIRED = os.environ.get("DSH_REQUIRE_HUB") == "1"  # .ci/run: never skip
KEY = "sk-alice-" + os.urandom(8).hex()


def _missing() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root (it creates system users)"
    if shutil.which("useradd") is None:
        return "needs useradd"
    if not CHP.exists():
        return "needs configurable-http-proxy: cd tests/hub/node && npm ci"
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "needs jupyterhub (pip install -e '.[test]')"
    return None


SETUP = """
%load_ext dsh_nb
import getpass, json, os, subprocess, sys
import dsh_nb
calls = []
def whoami() -> str:
    '''Say whose kernel this is.'''
    calls.append(1)
    return getpass.getuser()
dsh_nb.registry().register(dsh_nb.tool(whoami))
print(json.dumps({"pid": os.getpid(), "dsh_nb": dsh_nb.__file__,
                  "home": os.path.expanduser("~")}))
"""

BRIDGE = """
import asyncio
from mcp import Client, StdioServerParameters
async def through_bridge():
    params = StdioServerParameters(command=sys.executable,
        args=["-m", "dsh_nb", "mcp-bridge", "--latest"], env=dict(os.environ))
    async with Client(params, mode="legacy") as c:
        return (await c.call_tool("whoami", {})).content[0].text
config = subprocess.run([sys.executable, "-m", "dsh_nb", "mcp-config"],
                        capture_output=True, text=True)
print(json.dumps({"bridge": await through_bridge(), "config": config.stdout,
                  "skipped": config.stderr}))
"""


@pytest.fixture(scope="module")
def classroom():
    why = _missing()
    if why is not None:
        if REQUIRED:
            pytest.fail(f"the classroom test cannot run: {why}")
        pytest.skip(why)
    reachable = Path(tempfile.mkdtemp(prefix="dsh-hub-"))  # other users reach it
    reachable.chmod(0o755)
    private = Path(tempfile.mkdtemp(prefix="dsh-hub-private-"))  # the hub's own
    runtime = shared_folder()
    share = Path(sys.prefix) / "share" / "jupyter"
    try:
        with system_users(ALICE, BOB) as users:
            python = user_python(users[ALICE], reachable)
            env = {
                "PYTHONPATH": str(REPO),
                "JUPYTER_PATH": str(share),
                # The install's server extensions (jupyterlab's) are enabled
                # here; a shim venv has another prefix.
                "JUPYTER_CONFIG_PATH": str(Path(sys.prefix) / "etc" / "jupyter"),
                "JUPYTER_RUNTIME_DIR": str(runtime),
            }
            # Alice's own key, in her server's environment (as a hub's
            # spawner gives it, or her shell would): never typed in a cell.
            user_env = {ALICE: {"CLASS_KEY": KEY}}
            with jupyterhub(
                private, users=[ALICE, BOB], python=python, env=env, user_env=user_env
            ) as hub:
                for name in (ALICE, BOB):
                    hub.start_server(name)
                kernels = {name: Kernel(hub, name) for name in (ALICE, BOB)}
                yield hub, kernels, users, runtime
    finally:
        for folder in (reachable, private, runtime):
            shutil.rmtree(folder, ignore_errors=True)


def run(kernel: Kernel, code: str) -> dict:
    out = asyncio.run(kernel.run(code))
    assert out["error"] is None, (kernel.user, out)
    return out


def test_the_classroom(classroom) -> None:
    hub, kernels, users, runtime = classroom
    alice, bob = kernels[ALICE], kernels[BOB]
    who = {name: json.loads(run(k, SETUP)["stdout"]) for name, k in kernels.items()}

    # The extension, installed once: both load the same files, from no home.
    assert who[ALICE]["dsh_nb"] == who[BOB]["dsh_nb"]
    for name in (ALICE, BOB):
        assert not who[name]["dsh_nb"].startswith(users[name].pw_dir)
        page = httpx2.get(f"{hub.url}/user/{name}/lab", headers=kernels[name].headers)
        assert page.status_code == 200 and '"dsh-nb"' in page.text, name

    # Each serves; each runtime file is its owner's alone (0600, side by side).
    for kernel in (alice, bob):
        run(kernel, "%tools serve")
    files = {}
    for name in (ALICE, BOB):
        uid = users[name].pw_uid
        mine = [p for p in runtime.glob("dsh-mcp-*.json") if p.stat().st_uid == uid]
        assert len(mine) == 1, (name, list(runtime.iterdir()))
        assert stat.S_IMODE(mine[0].stat().st_mode) == 0o600
        files[name] = mine[0]
    entries = {name: json.loads(path.read_text()) for name, path in files.items()}

    # Neither can read the other's runtime file.
    for reader, owner in ((ALICE, BOB), (BOB, ALICE)):
        out = run(
            kernels[reader],
            f"try:\n    open({str(files[owner])!r}).read()\n    print('READ')\n"
            "except PermissionError:\n    print('denied')",
        )
        assert out["stdout"].strip() == "denied", reader

    # Each server answers its own student's MCP token only.
    async def probe(url: str, token: str | None) -> int:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        async with httpx2.AsyncClient() as http:
            return (await http.post(url, json=body, headers=headers)).status_code

    async def whoami(url: str, token: str) -> str:
        async with client(url, token) as c:
            return (await c.call_tool("whoami", {})).content[0].text

    a, b = entries[ALICE], entries[BOB]
    assert asyncio.run(whoami(a["url"], a["token"])) == ALICE
    assert asyncio.run(whoami(b["url"], b["token"])) == BOB
    for url, other in ((a["url"], b["token"]), (b["url"], a["token"])):
        assert asyncio.run(probe(url, other)) == 401
        assert asyncio.run(probe(url, None)) == 401
    # And from inside the other student's kernel, with what Bob has.
    out = run(
        bob,
        "import httpx2\nr = httpx2.post("
        f"{a['url']!r}, json={{'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}},"
        f" headers={{'Authorization': 'Bearer {b['token']}'}})\nprint(r.status_code)",
    )
    assert out["stdout"].strip() == "401"

    # Alice forges a runtime file that sends Bob's client to her server.
    forged = json.dumps(
        {"url": a["url"], "token": a["token"], "pid": who[BOB]["pid"], "name": None}
    )
    run(
        alice,
        f"p = {str(runtime)!r} + '/dsh-mcp-{who[BOB]['pid']}-forged.json'\n"
        f"open(p, 'w').write({forged!r})\nos.chmod(p, 0o644)\n"
        "os.utime(p, (2e9, 2e9))  # the newest: what --latest would take",
    )
    alice_calls = int(run(alice, "print(len(calls))")["stdout"])
    seen = {
        name: json.loads(run(kernels[name], BRIDGE)["stdout"]) for name in (BOB, ALICE)
    }
    assert seen[BOB]["bridge"] == BOB and seen[ALICE]["bridge"] == ALICE
    assert f"URL:    {b['url']}" in seen[BOB]["config"]
    assert a["url"] not in seen[BOB]["config"] and a["token"] not in seen[BOB]["config"]
    assert "belongs to another user" in seen[BOB]["skipped"]
    assert f"URL:    {a['url']}" in seen[ALICE]["config"]
    assert b["url"] not in seen[ALICE]["config"]
    # Alice's server heard only Alice's own bridge, never Bob's call.
    assert int(run(alice, "print(len(calls))")["stdout"]) == alice_calls + 1

    # A %%chat key set in Alice's kernel is invisible to Bob.
    key = KEY
    with ReplayServer([Turn(text="hello Alice")], token=key) as model:
        chat = (
            f"%config DshChat.base_url = {model.openai_url!r}\n"
            "%config DshChat.model = 'm'\n"
            "%config DshChat.api_key_env = 'CLASS_KEY'\n"
        )
        run(alice, chat)
        said = run(alice, "%%chat\nhi")
        assert (
            any("hello Alice" in t for t in said["text"])
            or "hello Alice" in (said["stdout"])
        ), said
        answered = len(model.requests)
        pid = who[ALICE]["pid"]
        out = run(
            bob,
            chat + "print(os.environ.get('CLASS_KEY'))\n"
            f"try:\n    open('/proc/{pid}/environ', 'rb').read()\n    print('READ')\n"
            "except PermissionError:\n    print('denied')\n"
            f"try:\n    os.listdir({who[ALICE]['home']!r})\n    print('LISTED')\n"
            "except PermissionError:\n    print('denied')",
        )
        assert out["stdout"].split() == ["None", "denied", "denied"]
        refused = asyncio.run(bob.run("%%chat\nhi"))
        shown = json.dumps(refused)
        assert key not in shown
        assert len(model.requests) == answered  # Bob's request was refused
    for name in (ALICE, BOB):
        home = Path(users[name].pw_dir)
        for path in home.rglob("*"):
            if path.is_file() and path.stat().st_size < 1_000_000:
                assert key.encode() not in path.read_bytes(), path
