"""Tools that raise what a running call must never let out (issue 34 §2.2).

Served by ``serve``, by ``%tools serve`` in a kernel and called by a
``Chat``: each of these must come back as an error result, and the process
must keep serving.
"""

from __future__ import annotations

from dsh_nb import ToolRegistry, tool

registry = ToolRegistry(sync_tools="thread")


class Unprintable:
    def __str__(self) -> str:
        raise KeyboardInterrupt


@tool
def kbi_sync() -> str:
    """Raise KeyboardInterrupt in a worker thread."""
    raise KeyboardInterrupt


@tool
async def kbi_async() -> str:
    """Raise KeyboardInterrupt on the event loop."""
    raise KeyboardInterrupt


@tool
async def gen_exit() -> str:
    """Raise GeneratorExit on the event loop."""
    raise GeneratorExit


@tool
def gen_exit_sync() -> str:
    """Raise GeneratorExit in a worker thread."""
    raise GeneratorExit


@tool
def kbi_str() -> object:
    """Return a value whose str() raises KeyboardInterrupt."""
    return Unprintable()


@tool
def listened() -> str:
    """A tool whose pre-execute listener raises KeyboardInterrupt."""
    return "never"


@tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


HOSTILE = ("kbi_sync", "kbi_async", "gen_exit", "gen_exit_sync", "kbi_str")
for _tool in (kbi_sync, kbi_async, gen_exit, gen_exit_sync, kbi_str, listened, add):
    registry.register(_tool)


def interrupting_listener(execution, next_):
    if execution.name == "listened":
        raise KeyboardInterrupt
    return next_()


registry.on_pre_execute(interrupting_listener)
