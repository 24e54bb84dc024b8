"""Helpers for the classroom test: system users, a user-runnable Python,
a JupyterHub with the local process spawner, and code run in a user's
kernel over the Jupyter server's websocket (as JupyterLab runs it).
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import site
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[2]
CHP = (
    REPO
    / "tests"
    / "hub"
    / "node"
    / "node_modules"
    / ".bin"
    / "configurable-http-proxy"
)
IMPORTS = "import dsh_nb, jupyterhub.singleuser, ipykernel, mcp, uvicorn"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _kill_processes_of(uid: int) -> None:
    """End what is left of a test user's processes (by pid, ours to end)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid == uid:
                os.kill(int(entry.name), 9)
        except (OSError, ValueError):
            continue


def remove_user(name: str) -> None:
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return
    _kill_processes_of(uid)
    subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)


@contextlib.contextmanager
def system_users(*names: str) -> Iterator[dict[str, pwd.struct_passwd]]:
    """Create the users (a private 0700 home each); remove them afterwards."""
    made = {}
    try:
        for name in names:
            remove_user(name)  # a leftover of an interrupted run
            subprocess.run(
                ["useradd", "--create-home", "--shell", "/bin/sh", name],
                check=True,
                capture_output=True,
            )
            made[name] = pwd.getpwnam(name)
            os.chmod(made[name].pw_dir, 0o700)
        yield made
    finally:
        for name in names:
            remove_user(name)


def _runs_as(python: str, user: pwd.struct_passwd, env: dict[str, str]) -> bool:
    try:
        done = subprocess.run(
            [python, "-c", IMPORTS],
            user=user.pw_uid,
            group=user.pw_gid,
            extra_groups=[],
            env=env,
            cwd="/",
            capture_output=True,
            timeout=120,
        )
    except OSError:
        return False
    return done.returncode == 0


def user_python(user: pwd.struct_passwd, folder: Path) -> str:
    """A Python that ``user`` can run, with this environment's packages.

    ``folder`` must be one other users can reach (e.g. made in ``/tmp``).

    This interpreter when the user can run it (a system-wide install, as a
    real hub has). Otherwise (a CI venv whose interpreter lives under a
    private folder, such as ``/root/.pyenv``), a venv made from the
    system's Python of the same version that reads this environment's
    packages: the extension is still installed once, here, for everybody.
    """
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    if _runs_as(sys.executable, user, env):
        return sys.executable
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = shutil.which(version, path="/usr/local/bin:/usr/bin:/bin")
    if base is None:
        raise RuntimeError(f"no system {version} that other users can run")
    venv = folder / "user-python"
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)], check=True)
    lib = venv / "lib" / version / "site-packages"
    lines = [f"import site; site.addsitedir({p!r})" for p in site.getsitepackages()]
    (lib / "shared-environment.pth").write_text("\n".join(lines) + "\n")
    subprocess.run(["chmod", "-R", "a+rX", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    if not _runs_as(python, user, env):
        raise RuntimeError(f"{user.pw_name} cannot run {python} with dsh_nb")
    return python


@dataclass
class Hub:
    """A running JupyterHub; ``admin`` is a service token with admin scopes."""

    url: str
    admin: str
    process: subprocess.Popen[bytes]
    log: Path
    tokens: dict[str, str] = field(default_factory=dict)

    def api(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        headers = {"Authorization": f"token {self.admin}"}
        return httpx2.request(
            method, f"{self.url}/hub/api{path}", headers=headers, timeout=30, **kwargs
        )

    def start_server(self, user: str, timeout: float = 120) -> str:
        """Spawn ``user``'s server; return a token of that user's own."""
        self.api("POST", f"/users/{user}")  # exists already: 409, fine
        started = self.api("POST", f"/users/{user}/server")
        assert started.status_code in (201, 202), started.text
        end = time.monotonic() + timeout
        while True:
            info = self.api("GET", f"/users/{user}").json()
            server = (info.get("servers") or {}).get("")
            if server and server.get("ready"):
                break
            assert time.monotonic() < end, (
                f"{user}'s server did not start\n{self.tail()}"
            )
            time.sleep(0.5)
        made = self.api("POST", f"/users/{user}/tokens", json={"note": "test"})
        assert made.status_code in (200, 201), made.text
        self.tokens[user] = made.json()["token"]
        return self.tokens[user]

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


@contextlib.contextmanager
def jupyterhub(
    folder: Path,
    *,
    users: list[str],
    python: str,
    env: dict[str, str],
    user_env: dict[str, dict[str, str]] | None = None,
) -> Iterator[Hub]:
    """Run a hub as root; ``user_env`` adds variables to one user's server."""
    per_user = repr(user_env or {})
    port, hub_port, proxy_port = free_port(), free_port(), free_port()
    admin = uuid.uuid4().hex
    config = folder / "jupyterhub_config.py"
    config.write_text(
        f"""
c = get_config()  # noqa
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.command = [{str(CHP)!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_port}"
c.JupyterHub.db_url = "sqlite:///{folder}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/jupyterhub_cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = {set(users)!r}
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{python!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.environment = {env!r}


def pre_spawn_hook(spawner):
    # jupyter_server keeps its cookie secret in the runtime folder; in a
    # folder all students share, each needs their own, in their home.
    import pwd
    home = pwd.getpwnam(spawner.user.name).pw_dir
    spawner.args = [f"--ServerApp.cookie_secret_file={{home}}/.jupyter_cookie_secret"]
    mine = {per_user}.get(spawner.user.name, {{}})
    spawner.environment = {{**spawner.environment, **mine}}


c.Spawner.pre_spawn_hook = pre_spawn_hook
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 60
c.JupyterHub.services = [{{"name": "classroom-test", "api_token": {admin!r}}}]
c.JupyterHub.load_roles = [{{
    "name": "classroom-test",
    "scopes": ["admin:users", "admin:servers", "tokens", "list:users"],
    "services": ["classroom-test"],
}}]
"""
    )
    log = folder / "jupyterhub.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=folder,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={
                **os.environ,
                "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            },
        )
    hub = Hub(url=f"http://127.0.0.1:{port}", admin=admin, process=process, log=log)
    try:
        end = time.monotonic() + 90
        while True:
            try:
                if hub.api("GET", "/").status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert process.poll() is None, f"the hub exited\n{hub.tail()}"
            assert time.monotonic() < end, f"the hub did not start\n{hub.tail()}"
            time.sleep(0.3)
        yield hub
    finally:
        for user in users:
            with contextlib.suppress(httpx2.HTTPError):
                hub.api("DELETE", f"/users/{user}/server")
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        keep = os.environ.get("DSH_HUB_LOG")  # where to keep the hub's log
        if keep:
            shutil.copy(log, keep)


class Kernel:
    """One kernel in a user's single-user server, driven over its websocket."""

    def __init__(self, hub: Hub, user: str) -> None:
        self.hub, self.user = hub, user
        self.token = hub.tokens[user]
        self.base = f"{hub.url}/user/{user}"
        made = httpx2.post(
            f"{self.base}/api/kernels", headers=self.headers, json={}, timeout=60
        )
        assert made.status_code == 201, made.text
        self.id = made.json()["id"]
        self.session = uuid.uuid4().hex

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.token}"}

    async def run(self, code: str, timeout: float = 90) -> dict[str, Any]:
        """Run one cell; return its stdout, error and displayed text."""
        import asyncio

        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        url = self.base.replace("http://", "ws://") + f"/api/kernels/{self.id}/channels"
        conn = await websocket_connect(HTTPRequest(url, headers=self.headers))
        msg_id = uuid.uuid4().hex
        conn.write_message(
            json.dumps(
                {
                    "header": {
                        "msg_id": msg_id,
                        "msg_type": "execute_request",
                        "username": self.user,
                        "session": self.session,
                        "date": "",
                        "version": "5.3",
                    },
                    "parent_header": {},
                    "metadata": {},
                    "content": {
                        "code": code,
                        "silent": False,
                        "store_history": True,
                        "user_expressions": {},
                        "allow_stdin": False,
                        "stop_on_error": True,
                    },
                    "channel": "shell",
                    "buffers": [],
                }
            )
        )
        out: dict[str, Any] = {"stdout": "", "error": None, "text": []}
        end = asyncio.get_running_loop().time() + timeout
        try:
            while True:
                left = end - asyncio.get_running_loop().time()
                assert left > 0, f"the cell did not finish: {code[:80]!r}"
                raw = await asyncio.wait_for(conn.read_message(), left)
                assert raw is not None, "the kernel's websocket closed"
                msg = json.loads(raw)
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind, content = msg["msg_type"], msg["content"]
                if kind == "stream" and content.get("name") == "stdout":
                    out["stdout"] += content["text"]
                elif kind == "error":
                    out["error"] = f"{content['ename']}: {content['evalue']}"
                elif kind in ("display_data", "execute_result", "update_display_data"):
                    out["text"].append(
                        str(content.get("data", {}).get("text/plain", ""))
                    )
                elif kind == "status" and content["execution_state"] == "idle":
                    return out
        finally:
            conn.close()


def shared_folder() -> Path:
    """A runtime folder every user may write (1777, like /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="dsh-hub-runtime-"))
    folder.chmod(0o1777)
    return folder
