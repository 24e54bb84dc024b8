"""Run ``python -m dsh_nb ...`` with the notebook layer's imports blocked.

``python tests/mcp/no_jupyter.py serve MODULE --stdio``: any import of
IPython, ipykernel, ipywidgets, traitlets or ``dsh_nb.notebook`` fails,
and every attempt is also written to the file named by
``DSH_BLOCKED_LOG`` (a module that catches the ImportError is still
caught here).
"""

from __future__ import annotations

import importlib.abc
import os
import runpy
import sys

BLOCKED = ("IPython", "ipykernel", "ipywidgets", "traitlets", "dsh_nb.notebook")


class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if any(fullname == b or fullname.startswith(b + ".") for b in BLOCKED):
            log = os.environ.get("DSH_BLOCKED_LOG")
            if log:
                with open(log, "a", encoding="utf-8") as fh:
                    fh.write(fullname + "\n")
            raise ImportError(f"{fullname} is blocked in this test")
        return None


sys.meta_path.insert(0, Blocker())
sys.argv = ["dsh_nb", *sys.argv[1:]]
runpy.run_module("dsh_nb", run_name="__main__", alter_sys=True)
