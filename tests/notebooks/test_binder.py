"""binder/ installs into a fresh venv exactly as written; the notebooks run there.

Binder (repo2docker) builds from a clean checkout: it installs
``binder/requirements.txt``, then runs ``binder/postBuild`` from the
repository root. This test does the same in a new virtual environment, in a
copy of the repository's files as they are in the working tree (tracked, and
untracked but not ignored), then runs every notebook under nbval with a
kernel of that environment. The kernel imports the package postBuild
installed, not this checkout, so a file missing from the package, a
dependency missing from its metadata or a broken postBuild fails here.

In a whole-suite run this is where the notebooks run: tests/conftest.py
then leaves them out of the run against the checkout, so each cell runs
once (``pytest notebooks/`` still runs them against the checkout).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__: list[str] = []

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "dsh-nb-binder-test"


def _run(args: list[Any], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, **kwargs
    )
    assert done.returncode == 0, (
        f"{args} exited {done.returncode}\n--- stdout\n{done.stdout[-6000:]}"
        f"\n--- stderr\n{done.stderr[-6000:]}"
    )
    return done


def _copy_repo(dest: Path) -> None:
    """Copy what a clone of the working tree would hold, as it is on disk."""
    listed = _run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
    ).stdout
    for rel in filter(None, listed.split("\0")):
        source = ROOT / rel
        if not source.is_file():  # deleted in the working tree
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)  # keeps postBuild's executable bit


def _environment(venv: Path, home: Path) -> dict[str, str]:
    """The variables a Binder image would have: its env first on PATH."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "JUPYTER_PATH")
    }
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    # pip compiles every installed module to bytecode by default (about 30 s
    # of CPU here); the kernels compile only what they import, on first use.
    # Which files are installed does not change.
    env["PIP_COMPILE"] = "0"
    for name, sub in (
        ("IPYTHONDIR", "ipython"),
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
    ):
        env[name] = str(home / sub)
    return env


def _code_cells(notebooks: Path) -> tuple[int, int]:
    """How many code cells nbval should pass, and how many it should skip."""
    import nbformat

    cells = [
        cell
        for path in notebooks.glob("*.ipynb")
        for cell in nbformat.read(path, as_version=4).cells
        if cell.cell_type == "code"
    ]
    skipped = sum(
        "NBVAL_SKIP" in cell.source or "nbval-skip" in cell.metadata.get("tags", [])
        for cell in cells
    )
    return len(cells) - skipped, skipped


def test_binder_installs_and_the_notebooks_pass_there(tmp_path: Path) -> None:
    repo, venv, home = tmp_path / "repo", tmp_path / "venv", tmp_path / "home"
    _copy_repo(repo)
    assert os.access(repo / "binder" / "postBuild", os.X_OK), "postBuild: chmod +x"
    home.mkdir()
    env = _environment(venv, home)
    python = venv / "bin" / "python"
    timings: dict[str, float] = {}

    started = time.perf_counter()
    _run([sys.executable, "-m", "venv", venv])
    _run(
        [python, "-m", "pip", "install", "-r", "binder/requirements.txt"],
        cwd=repo,
        env=env,
    )
    timings["requirements"] = time.perf_counter() - started

    started = time.perf_counter()
    _run(["bash", "binder/postBuild"], cwd=repo, env=env)
    timings["postBuild"] = time.perf_counter() - started

    # The kernel must import the installed package, not the checkout.
    where = _run(
        [python, "-c", "import dsh_nb; print(dsh_nb.__file__)"], cwd=home, env=env
    )
    assert where.stdout.strip().startswith(str(venv)), where.stdout
    # Binder's JupyterLab finds the card renderer without Node.js.
    listing = _run([venv / "bin" / "jupyter", "labextension", "list"], env=env)
    line = next(
        (x for x in (listing.stdout + listing.stderr).splitlines() if "dsh-nb" in x),
        "",
    )
    assert "enabled" in line and "OK" in line, listing.stdout + listing.stderr

    started = time.perf_counter()
    kernels = tmp_path / "kernels"
    _run(
        [python, "-m", "ipykernel", "install", "--prefix", kernels, "--name", KERNEL],
        env=env,
    )
    env["JUPYTER_PATH"] = str(kernels / "share" / "jupyter")
    cells, skipped = _code_cells(repo / "notebooks")
    result = _run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "0",  # one kernel at a time, as on Binder
            "-p",
            "no:cacheprovider",
            "--nbval",
            "--nbval-kernel-name",
            KERNEL,
            "--nbval-cell-timeout=60",
            "--nbval-sanitize-with",
            "notebooks/sanitize.cfg",
            "notebooks",
        ],
        cwd=repo,
        env=env,
    )
    timings["nbval"] = time.perf_counter() - started
    summary = f"{cells} passed" + (f", {skipped} skipped" if skipped else "")
    assert summary in result.stdout, result.stdout[-3000:]
    print("binder test timings (s):", {k: round(v, 1) for k, v in timings.items()})
