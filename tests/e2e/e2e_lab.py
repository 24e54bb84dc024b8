"""Helpers for the real-browser tests: server start and stop, pages.

Kept apart from ``conftest.py`` so test modules can import them by a
name that no other conftest shadows.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "CHROMIUM",
    "CHROMIUM_ARGS",
    "SCREENSHOTS",
    "TIMEOUT_MS",
    "LabServer",
    "close_page",
    "new_page",
    "open_notebook",
    "page_errors",
    "require_browser",
    "run_notebook",
    "running_lab",
    "screenshot_on_failure",
]

# Debian's Chromium; DSH_E2E_CHROMIUM points elsewhere (or nowhere, to test skips).
CHROMIUM = Path(os.environ.get("DSH_E2E_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
NOTEBOOKS = HERE / "notebooks"
BUILT_EXTENSION = REPO / "dsh_nb" / "labextension"
RESULTS = REPO / "test-results"
# The docs' screenshots are refreshed on request only, so that a test run
# leaves the tree clean; otherwise they go to test-results/.
SCREENSHOTS = (
    REPO / "docs" / "screenshots"
    if os.environ.get("DSH_E2E_UPDATE_SCREENSHOTS") == "1"
    else RESULTS
)
STARTUP_TIMEOUT_S = 60.0
TIMEOUT_MS = 30_000
_PAGE_ERRORS: dict[int, list[str]] = {}


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: browser tests must run)", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class LabServer:
    """A running JupyterLab: where it is and how to reach it."""

    url: str
    token: str
    root: Path
    pid: int

    @property
    def runtime_dir(self) -> Path:
        """The Jupyter runtime folder the server and its kernels share."""
        return self.root.parent / "jupyter" / "runtime"

    def api(self, path: str, method: str = "GET") -> Any:
        """Call the REST API with the token; return the decoded JSON."""
        request = urllib.request.Request(
            f"{self.url}{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def shutdown_sessions(self) -> None:
        """Delete every session so each notebook starts a fresh kernel."""
        for session in self.api("/api/sessions"):
            self.api(f"/api/sessions/{session['id']}", method="DELETE")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def _isolated_env(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    dirs = {
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTER_DATA_DIR": base / "data",
        "JUPYTER_RUNTIME_DIR": base / "runtime",
        "IPYTHONDIR": base / "ipython",
        "JUPYTERLAB_SETTINGS_DIR": base / "settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "workspaces",
    }
    for name, path in dirs.items():
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    env.pop("JUPYTER_PATH", None)
    # In a venv, jupyter_core looks in the venv's folders before the user's;
    # the isolated folders above (and the repo's build linked below) must win.
    env["JUPYTER_PREFER_ENV_PATH"] = "0"
    env["PYTHONUNBUFFERED"] = "1"
    _write_json(
        dirs["JUPYTERLAB_SETTINGS_DIR"]
        / "@jupyterlab"
        / "notebook-extension"
        / "tracker.jupyterlab-settings",
        # Render every output: past 50 per cell lab trims the rest unrendered
        # (0 should mean "no limit" but hides all: jupyterlab issue 13557).
        {"autoStartDefaultKernel": True, "maxNumberOutputs": 100_000},
    )
    _write_json(
        dirs["JUPYTER_CONFIG_DIR"] / "labconfig" / "page_config.json",
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}},
    )
    if (BUILT_EXTENSION / "package.json").is_file():
        target = dirs["JUPYTER_DATA_DIR"] / "labextensions" / "dsh-nb"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(BUILT_EXTENSION, target_is_directory=True)
    return env


def _wait_until_up(url: str, token: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    request = urllib.request.Request(
        f"{url}/api/status", headers={"Authorization": f"token {token}"}
    )
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"jupyter lab did not answer {url}/api/status in time")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


# JupyterLab's server imports jsonschema, which imports rfc3987_syntax and
# builds its IRI grammar: 2.9 s of CPU at each start. dsh_nb's loader defers
# the grammar to its first use (tools/_jsonschema.py), so the server, and
# the check below, start that much sooner (4.7 s -> 1.0 s for the check).
_QUICK_JSONSCHEMA = (
    "from dsh_nb.tools._jsonschema import load_jsonschema; load_jsonschema(); "
)


def _extension_check(env: dict[str, str]) -> str:
    """Name where lab will load ``dsh-nb`` from, or fail with the fix."""
    code = (
        _QUICK_JSONSCHEMA
        + "from jupyterlab_server.config import get_federated_extensions;"
        "from jupyter_core.paths import jupyter_path;"
        "e = get_federated_extensions(jupyter_path('labextensions'))"
        ".get('dsh-nb');"
        "print(e['ext_path'] if e else '')"
    )
    found = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not found:
        pytest.fail(
            "the dsh-nb labextension is neither built nor installed; run "
            "`cd labextension && npm ci && npm run build` or `pip install .`",
            pytrace=False,
        )
    return found


def new_page(browser: Any, lab_server: LabServer) -> Any:
    """Open a fresh context (clipboard allowed) and page on the server."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=lab_server.url
    )
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    _PAGE_ERRORS[id(page)] = errors
    return page


def page_errors(page: Any) -> list[str]:
    """Uncaught JavaScript errors seen by ``page`` so far."""
    return _PAGE_ERRORS.get(id(page), [])


def close_page(page: Any) -> None:
    """Close the page's browser context and forget its errors."""
    _PAGE_ERRORS.pop(id(page), None)
    page.context.close()


def open_notebook(page: Any, lab_server: LabServer, name: str) -> None:
    """Open ``name`` in a clean workspace and wait for its kernel session."""
    page.goto(f"{lab_server.url}/lab/tree/{name}?reset&token={lab_server.token}")
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext",
        timeout=TIMEOUT_MS,
    )


def run_notebook(page: Any, lab_server: LabServer, name: str) -> str:
    """Open ``name`` and start Run All through the app's command API.

    The command is not awaited: it resolves only when every cell is done,
    which would deadlock on a cell that waits for a click in the page.
    Returns the notebook widget's id, to re-activate it later.
    """
    open_notebook(page, lab_server, name)
    widget_id: str = page.evaluate(
        """async () => {
            const app = window.jupyterapp;
            const w = app.shell.currentWidget;
            await w.context.ready;
            await w.sessionContext.ready;
            app.commands.execute('notebook:run-all-cells');
            return w.id;
        }"""
    )
    return widget_id


def screenshot_on_failure(request: pytest.FixtureRequest, page: Any) -> None:
    """Save a full-page screenshot into test-results/ if the test failed."""
    report = getattr(request.node, "report_call", None)
    if report is None or not report.failed:
        return
    RESULTS.mkdir(exist_ok=True)
    name = request.node.name.replace("/", "_").replace("[", "_").replace("]", "")
    try:
        page.screenshot(path=str(RESULTS / f"{name}.png"), full_page=True)
    except Exception as exc:  # noqa: BLE001 - a failed screenshot must not mask the test
        print(f"could not save a screenshot for {name}: {exc}")


def require_browser() -> None:
    """Skip (or, with ``CI=true``, fail) when Chromium or Playwright is absent."""
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is not installed (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("the playwright package is not installed (pip install playwright)")


@contextmanager
def running_lab(base: Path) -> Iterator[LabServer]:
    """Run ``jupyter lab`` over a copy of the test notebooks under ``base``."""
    root = base / "root"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns("__pycache__"))
    env = _isolated_env(base / "jupyter")
    origin = _extension_check(env)
    port = _free_port()
    token = secrets.token_hex(16)
    url = f"http://127.0.0.1:{port}"
    log_path = base / "lab.log"
    command = [
        sys.executable,
        "-c",
        _QUICK_JSONSCHEMA
        + "import sys; from jupyterlab.labapp import main; sys.exit(main())",
        "--allow-root",
        "--no-browser",
        f"--IdentityProvider.token={token}",
        "--LabApp.expose_app_in_browser=True",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.terminals_enabled=False",
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            command, env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        _wait_until_up(url, token, proc)
    except RuntimeError as exc:
        _stop(proc)
        tail = log_path.read_text(errors="replace")[-3000:]
        pytest.fail(f"{exc}\n--- lab log ---\n{tail}", pytrace=False)
    print(f"\njupyter lab at {url} (pid {proc.pid}); dsh-nb from {origin}")
    try:
        yield LabServer(url=url, token=token, root=root, pid=proc.pid)
    finally:
        _stop(proc)
