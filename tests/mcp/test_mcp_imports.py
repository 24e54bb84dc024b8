"""dsh_nb.mcp imports no Jupyter, and the SDK only when it is used."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "dsh_nb.mcp",
    "dsh_nb.mcp.server",
    "dsh_nb.mcp._adapter",
    "dsh_nb.mcp._auth",
    "dsh_nb.mcp.content",
    "dsh_nb.mcp.runtime",
    "dsh_nb.mcp.clientconfig",
    "dsh_nb.mcp.client",
    "dsh_nb.mcp.tooldef",
    "dsh_nb.mcp.errors",
    "dsh_nb.mcp.transport",
    "dsh_nb.mcp.bridge",
    "dsh_nb.mcp.standalone",
    "dsh_nb.mcp.servecli",
    "dsh_nb.mcp.target",
    "dsh_nb.mcp.elicit",
    "dsh_nb.mcp.journalfile",
    "dsh_nb.mcp.rounds",
]
BANNED = ["IPython", "ipykernel", "ipywidgets", "traitlets", "comm", "mcp", "uvicorn"]


def test_importing_dsh_nb_mcp_is_light_and_jupyter_free():
    code = (
        "import sys, importlib\n"
        f"for m in {MODULES!r}: importlib.import_module(m)\n"
        f"bad = [b for b in {BANNED!r} if b in sys.modules]\n"
        "assert not bad, bad\n"
        "import dsh_nb\n"
        "import dsh_nb.notebook.mcpdefaults as kernel_defaults\n"
        "assert dsh_nb.serve_mcp is kernel_defaults.serve_mcp\n"
        "assert dsh_nb.connect_mcp is kernel_defaults.connect_mcp\n"
        f"bad = [b for b in {BANNED!r} if b in sys.modules]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
