"""A fresh clone installs without Node.js and stays clean.

The card renderer is prebuilt and committed, so neither ``pip install -e .``
nor ``pip install .`` may need npm, run a build, or change a tracked file.
The test clones the repository (its committed state) into a temp folder,
takes npm and node off ``PATH``, and installs both ways into throw-away
prefixes. It builds without build isolation (the build backend comes from
this environment, as ``[test]`` provides it) and without dependencies, which
keeps it fast; what it checks is the build, not the resolver.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]


def _run(
    args: list[str], cwd: Path, env: dict[str, str], ok: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if ok:
        assert done.returncode == 0, (
            f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done


def _node_free_env(tmp: Path) -> dict[str, str]:
    """This environment's variables with a PATH that has git, not npm."""
    tools = tmp / "bin"
    tools.mkdir()
    for name in ("git", "bash"):
        found = shutil.which(name)
        assert found, f"{name} is needed on PATH for this test"
        (tools / name).symlink_to(found)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKIP_JUPYTER")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), str(tools)])
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    assert shutil.which("npm", path=env["PATH"]) is None
    assert shutil.which("node", path=env["PATH"]) is None
    return env


def _clone(tmp: Path, env: dict[str, str]) -> Path:
    clone = tmp / "clone"
    _run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], tmp, env)
    return clone


def _pip_install(
    clone: Path, prefix: Path, env: dict[str, str], *extra: str, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    # --ignore-installed: a prefix install must not uninstall the running copy.
    args = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--ignore-installed",
    ]
    args += ["--no-build-isolation", "--prefix", str(prefix), *extra, "."]
    return _run(args, clone, env, ok=ok)


def _installed_assets(prefix: Path) -> Path:
    return prefix / "share" / "jupyter" / "labextensions" / "dsh-nb"


def test_fresh_clone_installs_without_npm_and_stays_clean(tmp_path: Path) -> None:
    env = _node_free_env(tmp_path)
    clone = _clone(tmp_path, env)
    committed = json.loads((clone / "dsh_nb/labextension/package.json").read_text())
    entry = committed["jupyterlab"]["_build"]["load"]

    for mode, extra in (("editable", ("-e",)), ("wheel", ())):
        prefix = tmp_path / mode
        _pip_install(clone, prefix, env, *extra)
        status = _run(["git", "status", "--porcelain"], clone, env).stdout
        assert status == "", (
            f"pip install {' '.join(extra)} . dirtied the clone:\n{status}"
        )
        assets = _installed_assets(prefix)
        assert (assets / entry).is_file(), f"{mode}: {entry} not installed"
        assert (assets / "install.json").is_file()
        shipped = json.loads((assets / "package.json").read_text())
        assert shipped == committed, f"{mode}: the installed package.json differs"
    assert not (clone / "labextension" / "node_modules").exists()


def test_missing_assets_without_npm_fail_with_the_fix(tmp_path: Path) -> None:
    env = _node_free_env(tmp_path)
    clone = _clone(tmp_path, env)
    (clone / "dsh_nb/labextension/static/style.js").unlink()
    done = _pip_install(clone, tmp_path / "prefix", env, ok=False)
    assert done.returncode != 0
    message = done.stdout + done.stderr
    assert "npm is not on PATH" in message, message[-3000:]
    assert "dsh_nb/labextension/static/style.js" in message
    assert "bash labextension/build.sh" in message
