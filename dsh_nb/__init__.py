"""dsh_nb: a production-grade LLM tool pipeline for Jupyter.

The pipeline (schemas, registry, policies, approvals, timeouts, cards) lives
in :mod:`dsh_nb.tools` and has no Jupyter imports. The notebook names below
(``registry``, ``call``, ``dispatch``, the listener decorators and
``%load_ext dsh_nb``) are imported on first use, so ``import dsh_nb`` in a
script stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dsh_nb._labextension import (
    _jupyter_labextension_paths as _jupyter_labextension_paths,
)
from dsh_nb.tools import *  # noqa: F403 - the pipeline's public names
from dsh_nb.tools import __all__ as _TOOLS_ALL

if TYPE_CHECKING:
    from dsh_nb.cards import render_card
    from dsh_nb.mcp.client import McpConnection
    from dsh_nb.mcp.server import McpServer
    from dsh_nb.models import Chat
    from dsh_nb.notebook.extension import (
        call,
        dispatch,
        guard,
        load_ipython_extension,
        on_result,
        post_execute,
        pre_execute,
        registry,
        remove_listener,
        replay,
        unload_ipython_extension,
    )
    from dsh_nb.notebook.mcpdefaults import connect_mcp, serve_mcp
    from dsh_nb.notebook.pending import pending_approvals

__version__ = "0.1.0"

_NOTEBOOK = {
    "Chat": "dsh_nb.models",
    "call": "dsh_nb.notebook.extension",
    "dispatch": "dsh_nb.notebook.extension",
    "guard": "dsh_nb.notebook.extension",
    "load_ipython_extension": "dsh_nb.notebook.extension",
    "on_result": "dsh_nb.notebook.extension",
    "post_execute": "dsh_nb.notebook.extension",
    "pre_execute": "dsh_nb.notebook.extension",
    "remove_listener": "dsh_nb.notebook.extension",
    "registry": "dsh_nb.notebook.extension",
    "render_card": "dsh_nb.cards",
    "replay": "dsh_nb.notebook.extension",
    "unload_ipython_extension": "dsh_nb.notebook.extension",
    # MCP: the SDK and uvicorn load only when a server starts.
    "pending_approvals": "dsh_nb.notebook.pending",
    "McpConnection": "dsh_nb.mcp.client",
    "McpServer": "dsh_nb.mcp.server",
    # The kernel's registry by default: the notebook's wrappers.
    "connect_mcp": "dsh_nb.notebook.mcpdefaults",
    "serve_mcp": "dsh_nb.notebook.mcpdefaults",
}


def __getattr__(name: str) -> Any:
    # Notebook names import IPython and ipywidgets: only when asked for.
    module = _NOTEBOOK.get(name)
    if module is None:
        raise AttributeError(f"module 'dsh_nb' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    *_TOOLS_ALL,
    "Chat",
    "McpConnection",
    "McpServer",
    "call",
    "connect_mcp",
    "dispatch",
    "guard",
    "load_ipython_extension",
    "on_result",
    "pending_approvals",
    "post_execute",
    "pre_execute",
    "remove_listener",
    "registry",
    "render_card",
    "replay",
    "serve_mcp",
    "unload_ipython_extension",
]
