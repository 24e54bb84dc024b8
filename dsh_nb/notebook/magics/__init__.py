"""The notebook's magics: one ``Magics`` class per theme, as IPython's own.

IPython keeps ``core/magics/`` as one module per theme (``execution``,
``script``...), each a ``@magics_class``; so does this package. Every flag
is declared with ``magic_arguments`` (sub-commands included, see
:class:`~.args.subcommands`), so a magic's help is its manual and a
mistake on its line is a one-line ``UsageError``. The magics parse, call
``dsh_nb.tools`` through the kernel state and display; no pipeline logic
lives here.

================  =======================================================
module            what
================  =======================================================
``tool``          ``%%tool``: a cell's function becomes a tool
``toolcell``      the steps of ``%%tool`` (run, pick, build)
``call``          ``%call`` / ``%%call`` and the rewrite that awaits them
``tools``         ``%tools``: list, schemas, and its sub-commands
``mcp``           ``%tools serve`` / ``%tools connect``
``export``        ``%tools export`` and the record of where cells stopped
``policy``        ``%tool_policy``
``log``           ``%tool_log``
``chat``          ``%%chat`` and ``DshChat``
``evaluation``    ``%tool_eval``
``evalprogress``  ``%tool_eval``'s progress bar, as widgets
``args``          typed ``magic_arguments`` and sub-commands
``rewrite``       a magic rewritten into an awaited helper call
================  =======================================================

:func:`install` registers them all; ``load_ipython_extension`` calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.state import KernelState

__all__ = ["install"]


def install(shell: InteractiveShell, state: KernelState) -> Callable[[], None]:
    """Register every magic, its rewrite and its config; return the undo."""
    from dsh_nb.notebook.magics import call, chat, evaluation, export
    from dsh_nb.notebook.magics.log import LogMagics
    from dsh_nb.notebook.magics.policy import PolicyMagics
    from dsh_nb.notebook.magics.rewrite import remove_magics
    from dsh_nb.notebook.magics.tool import ToolCellMagics
    from dsh_nb.notebook.magics.tools import ToolsMagics

    undos: list[Callable[[], object]] = []

    def undo() -> None:
        while undos:
            undos.pop()()

    try:
        for magics in (
            ToolCellMagics(shell, state),
            ToolsMagics(shell, state),
            PolicyMagics(shell, state),
            LogMagics(shell, state),
        ):
            shell.register_magics(magics)
            undos.append(partial(remove_magics, shell, magics))
        undos.append(call.install(shell, state))
        undos.append(export.install(shell))
        undos.append(chat.install(shell, state))
        undos.append(evaluation.install(shell, state))
    except BaseException:
        undo()
        raise
    return undo
