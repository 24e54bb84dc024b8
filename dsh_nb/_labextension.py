"""Tell Jupyter where the prebuilt card renderer lives.

A wheel (and an editable install, as a copy made at install time) puts
the assets under ``share/jupyter/labextensions/dsh-nb``. This hook lets
``jupyter labextension develop --overwrite .`` link the package folder
instead, so a rebuilt extension shows up without reinstalling.
"""

from __future__ import annotations

__all__ = ["_jupyter_labextension_paths"]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Point JupyterLab at the ``labextension`` folder inside the package."""
    return [{"src": "labextension", "dest": "dsh-nb"}]
