"""``serve --stdio``: the protocol gets fd 1's pipe to itself, from the start.

On stdio, the process's stdout is the protocol stream: one stray line on
it and the client reads garbage. The SDK moves fd 1 aside while it serves,
but a served module is imported before that, and what it starts can write
to fd 1 at any time: ``os.system`` or ``subprocess`` output at import, a
helper process it leaves running, a thread that prints. Redirecting
``sys.stdout`` catches only Python's own prints.

So before the module is imported, :func:`divert_stdout` keeps a private
duplicate of fd 1 (the client's pipe) and points fd 1 at stderr, for good:
everything else the process and its children write to "stdout" reaches
stderr, where a client shows or logs it. The protocol writes to the private
duplicate only (:func:`wire_stream`), which nothing else holds.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

__all__ = ["divert_stdout", "wire_stream"]


def divert_stdout() -> int | None:
    """Point fd 1 at stderr; return a private descriptor of the old fd 1.

    None when fd 1 cannot be duplicated or diverted (it is then left as it
    was, and the SDK's own diversion is all there is).
    """
    sys.stdout.flush()
    try:
        wire = os.dup(1)
    except OSError:
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        with contextlib.suppress(OSError):
            os.dup2(wire, 1)
            os.close(wire)
        return None
    return wire


def wire_stream(wire: int) -> Any:
    """The protocol's text stream on ``wire``, for the SDK's ``stdio_server``."""
    import anyio

    return anyio.wrap_file(open(wire, "w", encoding="utf-8", newline="\n"))
