"""Hatch build hook: ship the prebuilt card renderer, build it only if absent.

The built assets in ``dsh_nb/labextension/`` are committed, so ``pip install
.`` and ``pip install -e .`` must not need Node.js, run npm or touch the
checkout. This hook therefore does nothing when the assets are complete,
and otherwise runs ``labextension/build.sh`` (or says clearly why it
cannot). Rebuilding after a change to ``labextension/src`` is that script's
job, run by hand, never a side effect of installing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

__all__ = ["LabextensionHook", "missing_assets"]

ASSETS = Path("dsh_nb") / "labextension"


def missing_assets(root: Path) -> list[str]:
    """The asset files a complete build has that ``root`` lacks."""
    assets = root / ASSETS
    missing = [
        str(ASSETS / name)
        for name in ("package.json", "static/style.js")
        if not (assets / name).is_file()
    ]
    if missing:
        return missing
    manifest = json.loads((assets / "package.json").read_text(encoding="utf-8"))
    entry = manifest.get("jupyterlab", {}).get("_build", {}).get("load", "")
    if not entry or not (assets / entry).is_file():
        missing.append(str(ASSETS / (entry or "static/remoteEntry.*.js")))
    return missing


class LabextensionHook(BuildHookInterface):
    """Check the committed renderer assets; build them only when missing."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        missing = missing_assets(root)
        if not missing or os.environ.get("SKIP_JUPYTER_BUILDER"):
            return
        if shutil.which("npm") is None:
            raise RuntimeError(
                f"the card renderer's built assets are missing ({', '.join(missing)})"
                " and npm is not on PATH: restore them with `git checkout --"
                " dsh_nb/labextension`, or install Node.js 20 and run"
                " `bash labextension/build.sh`"
            )
        self.app.display_info("dsh_nb: building the card renderer (npm)...")
        subprocess.run(["bash", str(root / "labextension" / "build.sh")], check=True)
        still = missing_assets(root)
        if still:
            raise RuntimeError(f"the labextension build did not produce {still}")
