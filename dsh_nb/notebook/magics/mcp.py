"""``%tools serve`` and ``%tools connect``: MCP from a cell.

Two sub-commands of ``%tools`` (:mod:`.tools`), each declaring its flags
with ``@argument`` (mistakes are one-line ``UsageError``\\ s); the work is
:mod:`dsh_nb.notebook.mcpglue`'s, imported by the first of them, not by
``%load_ext``.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from dsh_nb.notebook.magics.args import argument, unrecognized

if TYPE_CHECKING:
    import asyncio
    from argparse import Namespace

    from dsh_nb.notebook.mcpglue import KernelMcp
    from dsh_nb.notebook.state import KernelState

__all__ = ["connect", "serve"]


@argument("--port", type=int, default=None, help="the port (default: a free one)")
@argument("--stop", action="store_true", help="stop the kernel's server")
def serve(state: KernelState, args: Namespace) -> None:
    """Serve the kernel's tools over MCP (Streamable HTTP)."""
    if args.extras:
        raise unrecognized(args.extras)
    if args.server_command is not None:
        raise UsageError("%tools serve takes no '-- COMMAND'; %tools connect does")
    glue = _glue(state)
    if args.stop:
        if glue.stop() is None:
            raise UsageError("%tools serve --stop: this kernel is not serving")
        print("MCP server stopped")
        return
    if args.port is not None and not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, not {args.port}")
    running = glue.server is not None and glue.server.running
    try:
        server = glue.serve(port=args.port, show_again=True)
    except (RuntimeError, ValueError) as exc:
        raise UsageError(f"%tools serve: {exc}") from None
    except OSError as exc:
        raise UsageError(
            f"%tools serve: cannot listen on port {args.port}: {exc.strerror}; "
            "leave out --port to take a free one"
        ) from None
    if running:
        print(
            f"this kernel already serves MCP at {server.url}; its panel is shown again"
        )


@argument("--url", default=None, help="a Streamable HTTP server's URL")
@argument(
    "--header",
    action="append",
    default=[],
    metavar="'NAME: VALUE'",
    help="an HTTP header for --url (repeatable)",
)
@argument("--close", action="store_true", help="close the connection NAME")
@argument(
    "name", metavar="NAME", help="the connection's name; its tools become NAME_tool"
)
def connect(state: KernelState, args: Namespace) -> None:
    """Bring an MCP server's tools into the registry.

    The server is ``--url URL``, or the command line after `` -- ``, split
    as a shell would: ``%tools connect NAME -- COMMAND ARGS...``.
    """
    if args.extras:
        raise unrecognized(args.extras)
    tail = args.server_command
    if tail is not None and not tail.strip():
        raise UsageError("%tools connect: nothing after '--'")
    glue = _glue(state)
    if args.close:
        _close(glue, args.name)
        return
    try:
        command = shlex.split(tail) if tail is not None else None
    except ValueError as exc:
        raise UsageError(f"%tools connect: {exc}") from None
    if (command is None) == (args.url is None):
        raise UsageError(
            "%tools connect NAME needs a server: --url URL, or -- COMMAND ARGS..."
        )
    headers = {}
    for item in args.header:
        key, colon, value = item.partition(":")
        if not colon or not key.strip():
            raise UsageError(f"--header must be 'NAME: VALUE', not {item!r}")
        headers[key.strip()] = value.strip()
    options: dict[str, Any] = (
        {"command": command} if command is not None else {"url": args.url}
    )
    if headers:
        options["headers"] = headers
    try:
        fut = glue.connect(args.name, **options)
    except (RuntimeError, ValueError) as exc:
        raise UsageError(f"%tools connect: {exc}") from None
    _show_progress(args.name, fut)


def _glue(state: KernelState) -> KernelMcp:
    from dsh_nb.notebook import mcpglue

    return mcpglue.for_state(state)


def _close(glue: KernelMcp, name: str) -> None:
    import asyncio

    if name not in glue.connections:
        known = ", ".join(sorted(glue.connections)) or "none"
        raise UsageError(
            f"%tools connect --close: no connection {name!r} (open: {known})"
        )
    task = asyncio.ensure_future(glue.close(name))
    _KEEP.add(task)
    task.add_done_callback(_KEEP.discard)
    print(f"closing MCP connection {name!r}")


_KEEP: set[Any] = set()


def _show_progress(name: str, fut: asyncio.Future[Any]) -> None:
    """One status line that turns into the tool list or the error."""
    from IPython.display import display

    show: Callable[..., Any] = display
    start = f"connecting to MCP server {name!r}…"
    handle = show({"text/plain": start}, raw=True, display_id=True)

    def done(f: asyncio.Future[Any]) -> None:
        if f.cancelled():
            text = f"connecting to {name!r} was cancelled"
        elif f.exception() is not None:
            text = str(f.exception())
        else:
            tools = ", ".join(f.result().tools) or "no tools"
            text = f"connected to MCP server {name!r}: {tools}"
        if handle is not None:
            bundle = {
                "text/plain": text,
                "text/html": f"<pre>{html.escape(text)}</pre>",
            }
            handle.update(bundle, raw=True)

    fut.add_done_callback(done)
