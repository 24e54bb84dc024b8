"""The kernel's stdin as an awaitable line, for frontends without widgets.

VS Code, Colab, the classic Notebook and ``jupyter console`` deliver a
widget click only after the running cell, but they answer the kernel's
stdin while it runs: ``input()`` works there. ``input()`` itself cannot
serve a prompt that waits inside a running call, for two reasons found in
ipykernel's ``Kernel._input_request``:

- it blocks the thread that calls it in a 10 ms ``zmq.select`` loop; on the
  kernel's loop that would stop every other call, the kernel's MCP server
  and background tasks while the person thinks;
- on a worker thread it could not be stopped: it only ends on a reply or a
  ``KeyboardInterrupt``, which Python delivers to the main thread, and the
  stdin socket (not thread-safe) would be used from two threads.

So :class:`KernelStdin` sends the same ``input_request`` (with the asking
cell's parent header and routing identity, which ipykernel keeps in a
context variable, so a call's task still has its cell's) and awaits the
``input_reply`` on the loop, through a pyzmq asyncio shadow of the same
socket: nothing blocks, and a timeout or the stop button simply cancels
the await. Prompts take turns (:meth:`KernelStdin.turn`), so parallel
calls of one model step are asked one after another, in order.

A request can be asked only while it runs: the frontend shows an input box
under a running cell and nowhere else, so :meth:`KernelStdin.install`
follows cells with IPython's ``pre_run_cell`` / ``post_run_cell`` events.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dsh_nb.notebook.frontend import allows_stdin, current_request, request_origin

__all__ = ["KernelStdin", "StdinTarget"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class StdinTarget:
    """A running request that takes input: where an ``input_request`` goes."""

    msg_id: str
    ident: Any
    parent: Mapping[str, Any]


class KernelStdin:
    """One kernel's stdin channel: which cells can be asked, and asking them."""

    def __init__(self, kernel: Any) -> None:
        self._kernel = kernel
        self._running: dict[str, StdinTarget] = {}
        self._turn: asyncio.Lock | None = None
        self._reader: Any = None

    def install(self, shell: Any) -> Callable[[], None]:
        """Follow running cells on ``shell``; return the undo."""
        events = shell.events
        events.register("pre_run_cell", self._started)
        events.register("post_run_cell", self._finished)
        self._started()  # the cell running %load_ext may ask too

        def dispose() -> None:
            for name, fn in (
                ("pre_run_cell", self._started),
                ("post_run_cell", self._finished),
            ):
                try:
                    events.unregister(name, fn)
                except ValueError:
                    pass
            self._running.clear()

        return dispose

    def target(self) -> StdinTarget | None:
        """The current request, if it takes input and is still running."""
        origin = request_origin()
        return None if origin is None else self._running.get(origin.msg_id)

    def turn(self) -> asyncio.Lock:
        """The lock a whole question holds: one prompt at a time, in order."""
        if self._turn is None:
            self._turn = asyncio.Lock()
        return self._turn

    async def read_line(self, prompt: str, target: StdinTarget) -> str:
        """Ask ``prompt`` in ``target``'s cell; return the line typed.

        A frontend's end of input (``"\\x04"``) comes back as it is. Raises
        what the socket raises; cancel the await to stop waiting.
        """
        import zmq

        kernel = self._kernel
        session, socket = kernel.session, kernel.stdin_socket
        while True:  # drop late answers to earlier, cancelled prompts
            try:
                socket.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                break
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()  # the frontend shows output before the box
        sent = session.send(
            socket,
            "input_request",
            {"prompt": prompt, "password": False},
            parent=dict(target.parent),
            ident=target.ident,
        )
        asked = sent["header"]["msg_id"]
        reader = self._shadow(socket)
        while True:
            frames = await reader.recv_multipart()
            try:
                _idents, parts = session.feed_identities(frames)
                reply = session.deserialize(parts)
            except Exception:  # noqa: BLE001 - a bad frame is dropped, not fatal
                _log.warning("dsh_nb: dropped a malformed stdin message", exc_info=True)
                continue
            if reply.get("msg_type") != "input_reply":
                continue
            answered = (reply.get("parent_header") or {}).get("msg_id")
            if answered and answered != asked:
                continue  # an answer to another prompt
            value = (reply.get("content") or {}).get("value", "")
            return value if isinstance(value, str) else ""

    def _shadow(self, socket: Any) -> Any:
        if self._reader is None:
            import zmq.asyncio

            self._reader = zmq.asyncio.Socket.from_socket(socket)
        return self._reader

    def _started(self, *_info: object) -> None:
        parent = current_request()
        origin = request_origin(parent)
        if parent is None or origin is None or not allows_stdin(parent):
            return
        try:
            ident = self._kernel._parent_ident["shell"]
        except Exception:  # noqa: BLE001 - an odd kernel: no stdin prompts
            return
        self._running[origin.msg_id] = StdinTarget(
            msg_id=origin.msg_id, ident=ident, parent=parent
        )

    def _finished(self, *_result: object) -> None:
        origin = request_origin()
        if origin is not None:
            self._running.pop(origin.msg_id, None)
