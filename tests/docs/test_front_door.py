"""The README's two commands, and the pages that must agree with them.

The first command installs the ``[lab]`` extra and opens JupyterLab on the
quickstart; this test checks the extra, then runs the command's ``jupyter
lab ...`` half as written (plus the flags a test needs: no browser, a free
port, a token, isolated Jupyter folders) and asks the server what a browser
would be sent to. notebooks/README.md and binder/ must say the same.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import socket
import sys
import time
import urllib.error
import urllib.request
from importlib.metadata import version
from pathlib import Path

import tomllib
from processes import started

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]
FIRST = 'pip install -e ".[lab]" && jupyter lab notebooks/00-quickstart.ipynb'
FENCE = re.compile(r"^```shell\n(.*?)^```", re.S | re.M)


def _shell_blocks() -> list[str]:
    return [b.strip() for b in FENCE.findall((ROOT / "README.md").read_text())]


def test_the_two_commands() -> None:
    blocks = _shell_blocks()
    assert blocks[:2] == [FIRST, "bash .ci/run"]
    readme = (ROOT / "README.md").read_text()
    assert "`python -m dsh_nb demo` is a headless tour" in readme
    assert (ROOT / "notebooks" / "00-quickstart.ipynb").is_file()


def test_the_lab_extra_brings_jupyterlab_4_and_notebook_7() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    lab = {re.split(r"[<>=!~ ]", r, maxsplit=1)[0]: r for r in extras["lab"]}
    assert lab == {
        "jupyterlab": "jupyterlab>=4.6,<4.7",
        "notebook": "notebook>=7.6,<8",
        # notebooks 08 and 09 run a model loop and an MCP server and client
        "dsh_nb[models]": "dsh_nb[models]",
        "dsh_nb[mcp]": "dsh_nb[mcp]",
        "mcp-server-time": "mcp-server-time>=2026.1",
    }
    assert "dsh_nb[lab]" in extras["test"], "[test] must include [lab]"
    for package, command, major in (
        ("jupyterlab", "jupyter-lab", "4."),
        ("notebook", "jupyter-notebook", "7."),
    ):
        assert version(package).startswith(major), (package, version(package))
        assert (Path(sys.executable).parent / command).is_file(), command


def test_notebooks_readme_and_binder_agree() -> None:
    notebooks = (ROOT / "notebooks" / "README.md").read_text()
    assert f"`{FIRST}`" in notebooks
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert re.search(r'^python -m pip install .*"\.\[lab\]"$', post_build, re.M)
    badge = "urlpath=lab/tree/notebooks/00-quickstart.ipynb"
    assert badge in (ROOT / "README.md").read_text()
    assert badge in notebooks


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _get(url: str, token: str) -> bytes:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body: bytes = response.read()
        return body


def test_jupyter_lab_opens_on_the_quickstart(tmp_path: Path) -> None:
    command = shlex.split(FIRST.split("&&", 1)[1])
    assert command[:2] == ["jupyter", "lab"]
    env = dict(os.environ)
    for name in ("CONFIG", "DATA", "RUNTIME"):
        env[f"JUPYTER_{name}_DIR"] = str(tmp_path / name.lower())
    env["JUPYTERLAB_SETTINGS_DIR"] = str(tmp_path / "settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp_path / "workspaces")
    port, token = _free_port(), secrets.token_hex(8)
    exe = str(Path(sys.executable).parent / "jupyter")
    flags = ["--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1"]
    flags += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    flags += [f"--IdentityProvider.token={token}"]
    url = f"http://127.0.0.1:{port}"
    with (
        (tmp_path / "lab.log").open("wb") as log,
        started(
            [exe, *command[1:], *flags], cwd=ROOT, env=env, stdout=log, stderr=log
        ) as proc,
    ):
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "lab.log").read_text()[-3000:]
            try:
                _get(f"{url}/api/status", token)
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "jupyter lab did not start"
                time.sleep(0.3)
        # What the browser would open: lab's redirect page for this server.
        opened = list((tmp_path / "runtime").glob("jpserver-file-to-run-*-open.html"))
        assert len(opened) == 1, opened
        target = re.search(r'href="([^"]+)"', opened[0].read_text()).group(1)
        assert "/lab/tree/00-quickstart.ipynb" in target, target
        contents = json.loads(_get(f"{url}/api/contents/00-quickstart.ipynb", token))
        assert contents["type"] == "notebook"
        page = _get(f"{url}/lab/tree/00-quickstart.ipynb", token).decode()
        assert '"name": "dsh-nb"' in page or '"name":"dsh-nb"' in page, (
            "JupyterLab does not load the dsh-nb card renderer"
        )
