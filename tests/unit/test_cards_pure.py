"""dsh_nb.cards draws cards with no Jupyter package loaded."""

from __future__ import annotations

import subprocess
import sys

JUPYTER = ("IPython", "ipykernel", "ipywidgets", "traitlets", "comm")


def test_cards_import_no_jupyter_package() -> None:
    code = (
        "import sys, dsh_nb.cards\n"
        "from dsh_nb.cards import CardModel, render_card\n"
        "render_card(CardModel(tool='t'))\n"
        f"print([m for m in {JUPYTER!r} if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
