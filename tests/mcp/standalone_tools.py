"""The module the standalone-server tests serve (``serve tests/mcp/standalone_tools.py``).

A registry as an exported notebook builds one: tools, a policy that asks
before ``delete_file``, sync bodies in worker threads.
"""

from __future__ import annotations

import os

from dsh_nb import Ask, ToolRegistry, tool

registry = ToolRegistry(sync_tools="thread")


@tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@tool
def delete_file(path: str) -> str:
    """Pretend to delete a file (asks first)."""
    return f"deleted {path}"


@tool
def where(client: int, n: int) -> str:
    """Say which call this is and which process answered it."""
    return f"{client}:{n}:{os.getpid()}"


@tool
def shout(text: str) -> str:
    """Upper-case a text, printing to stdout on the way (stdio must survive)."""
    print("a tool that prints to stdout")
    os.write(1, b"and one that writes to fd 1\n")
    return text.upper()


for _tool in (add, delete_file, where, shout):
    registry.register(_tool)


def ask_before_deleting(execution, next_):
    if execution.name == "delete_file":
        return Ask("deleting needs a yes")
    return next_()


registry.on_pre_execute(ask_before_deleting)
