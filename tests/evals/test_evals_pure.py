"""dsh_nb.evals imports and runs with no Jupyter package loaded."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import importlib, pkgutil, sys
import dsh_nb.evals
for info in pkgutil.iter_modules(dsh_nb.evals.__path__, "dsh_nb.evals."):
    importlib.import_module(info.name)
report = dsh_nb.evals.EvalReport([], cases={})
report._repr_html_()
print([m for m in ("IPython", "ipykernel", "ipywidgets", "traitlets", "comm",
                   "dsh_nb.notebook") if m in sys.modules])
"""


def test_evals_import_without_jupyter() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
