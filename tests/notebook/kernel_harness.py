"""Drive a real ipykernel the way a notebook frontend does, for tests.

``KernelHarness`` starts one ipykernel with this interpreter in isolated
Jupyter folders (a temporary ``IPYTHONDIR``, runtime, config and data
folder), runs code, files every iopub message under the request that caused
it, and sends the shell messages a browser sends: a widget ``Button`` click
and the ``jupyter.widget.control`` handshake a JupyterLab widget manager does
on connect. It is single-threaded: every wait pumps the kernel's sockets
itself, with a deadline, so a test never hangs and never races a reader
thread.

Typical use, one kernel per test module::

    @pytest.fixture(scope="module")
    def kernel() -> Iterator[KernelHarness]:
        with KernelHarness() as harness:
            yield harness

    def test_click(kernel: KernelHarness) -> None:
        msg_id = kernel.execute_async("await fut")      # the cell awaits
        kernel.click(kernel.find_button("Allow once"))  # what a browser sends
        reply = kernel.collect(msg_id)
        assert reply.status == "ok"

On ipykernel >= 7.4 a ``comm_msg`` reaches the kernel while an async cell
awaits (it is dispatched concurrently, without busy/idle status messages);
wait for its effects with :meth:`KernelHarness.wait_for`.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import shutil
import sys
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

__all__ = [
    "CONTROL_TARGET",
    "WIDGET_TARGET",
    "CommRecord",
    "KernelError",
    "KernelHarness",
    "Reply",
    "running_kernels",
]

WIDGET_TARGET = "jupyter.widget"
CONTROL_TARGET = "jupyter.widget.control"
_CONTROL_VERSION = "1.0.0"
_OUTPUT_TYPES = frozenset(
    {"stream", "display_data", "update_display_data", "execute_result", "error"}
)
_SPEC_NAME = "dsh-harness"
_live: weakref.WeakSet[KernelHarness] = weakref.WeakSet()


class KernelError(AssertionError):
    """A cell failed, timed out, or the kernel died; carries the evidence."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """Everything one execute request produced, in arrival order."""

    msg_id: str
    status: str
    content: Mapping[str, Any]
    messages: tuple[Mapping[str, Any], ...]
    elapsed: float

    def of_type(self, *msg_types: str) -> tuple[Mapping[str, Any], ...]:
        """Return this request's iopub messages of the given types."""
        return tuple(m for m in self.messages if m["msg_type"] in msg_types)

    @property
    def outputs(self) -> tuple[Mapping[str, Any], ...]:
        """Streams, displays, display updates, results and errors."""
        return tuple(m for m in self.messages if m["msg_type"] in _OUTPUT_TYPES)

    @property
    def stdout(self) -> str:
        """All text the cell wrote to stdout."""
        return self._stream("stdout")

    @property
    def stderr(self) -> str:
        """All text the cell wrote to stderr."""
        return self._stream("stderr")

    def _stream(self, name: str) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.of_type("stream")
            if m["content"]["name"] == name
        )

    @property
    def result(self) -> str | None:
        """The ``text/plain`` of the cell's ``execute_result``, if any."""
        for message in self.of_type("execute_result"):
            return str(message["content"]["data"].get("text/plain"))
        return None

    @property
    def error(self) -> Mapping[str, Any] | None:
        """The ``error`` content (ename, evalue, traceback), if any."""
        for message in self.of_type("error"):
            return dict(message["content"])
        return None

    def data(self, mime: str) -> list[Any]:
        """Return every payload of ``mime`` in displays, updates and results."""
        found = []
        for message in self.of_type(
            "display_data", "update_display_data", "execute_result"
        ):
            bundle = message["content"].get("data", {})
            if mime in bundle:
                found.append(bundle[mime])
        return found

    @property
    def text(self) -> str:
        """Streams, every ``text/plain`` and the error, joined for asserts."""
        parts: list[str] = []
        for message in self.outputs:
            content = message["content"]
            if message["msg_type"] == "stream":
                parts.append(content["text"])
            elif message["msg_type"] == "error":
                parts.append(f"{content['ename']}: {content['evalue']}\n")
            elif "text/plain" in content.get("data", {}):
                parts.append(str(content["data"]["text/plain"]) + "\n")
        return "".join(parts)

    def check(self) -> Reply:
        """Return ``self``, or raise :class:`KernelError` if the cell failed."""
        if self.status != "ok":
            raise KernelError(_describe_failure(self))
        return self


@dataclass(slots=True, kw_only=True)
class CommRecord:
    """A comm the kernel opened, with its latest synced widget state."""

    comm_id: str
    target_name: str
    parent_id: str | None
    state: dict[str, Any] = field(default_factory=dict)
    messages: list[Mapping[str, Any]] = field(default_factory=list)
    closed: bool = False


def _describe_failure(reply: Reply) -> str:
    error = reply.error
    if error is None:
        return f"cell {reply.msg_id} ended with status {reply.status!r}"
    trace = "\n".join(error.get("traceback", []))
    return f"cell raised {error['ename']}: {error['evalue']}\n{trace}"


class KernelHarness:
    """One real ipykernel, driven like a frontend; shut down on exit.

    Parameters
    ----------
    cwd
        The kernel's working folder (default: the temporary folder).
    env
        Extra environment variables for the kernel process.
    startup_timeout
        Seconds to wait for the kernel to answer ``kernel_info``.
    python
        The interpreter to run (default: this one, i.e. the test venv).
    """

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        startup_timeout: float = 60.0,
        python: str = sys.executable,
    ) -> None:
        self._cwd = cwd
        self._extra_env = dict(env or {})
        self._startup_timeout = startup_timeout
        self._python = python
        self._tmp: Path | None = None
        self._km: KernelManager | None = None
        self._kc: BlockingKernelClient | None = None
        self._poller: zmq.Poller | None = None
        self._iopub: dict[str, list[Mapping[str, Any]]] = {}
        self._idle: set[str] = set()
        self._replies: dict[str, Mapping[str, Any]] = {}
        self._sent_at: dict[str, float] = {}
        self.comms: dict[str, CommRecord] = {}
        self.input_requests: list[Mapping[str, Any]] = []

    # -- lifecycle ---------------------------------------------------------

    def __enter__(self) -> KernelHarness:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.shutdown()

    @property
    def tmp(self) -> Path:
        """The kernel's private folder (Jupyter dirs and the log live here)."""
        if self._tmp is None:
            raise RuntimeError("KernelHarness is not started; call start() first")
        return self._tmp

    def start(self) -> KernelHarness:
        """Start the kernel and wait until it answers; idempotent."""
        if self._km is not None:
            return self
        self._tmp = Path(tempfile.mkdtemp(prefix="dsh-kernel-"))
        dirs = {
            "IPYTHONDIR": "ipython",
            "JUPYTER_RUNTIME_DIR": "runtime",
            "JUPYTER_CONFIG_DIR": "config",
            "JUPYTER_DATA_DIR": "data",
        }
        env = dict(os.environ)
        for name, sub in dirs.items():
            (self._tmp / sub).mkdir()
            env[name] = str(self._tmp / sub)
        env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
        env.update(self._extra_env)
        spec_dir = self._tmp / "kernels" / _SPEC_NAME
        spec_dir.mkdir(parents=True)
        argv = [self._python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        spec = {"argv": argv, "display_name": "dsh harness", "language": "python"}
        (spec_dir / "kernel.json").write_text(json.dumps(spec))
        km = KernelManager(
            kernel_name=_SPEC_NAME,
            kernel_spec_manager=KernelSpecManager(
                kernel_dirs=[str(self._tmp / "kernels")]
            ),
            connection_file=str(self._tmp / "runtime" / "kernel-harness.json"),
        )
        km.shutdown_wait_time = 3.0
        self._log = open(self._tmp / "kernel.log", "wb")
        self._km = km
        _live.add(self)
        try:
            km.start_kernel(
                env=env,
                cwd=str(self._cwd or self._tmp),
                stdout=self._log,
                stderr=self._log,
            )
            kc = km.client()
            kc.start_channels()
            kc.wait_for_ready(timeout=self._startup_timeout)
        except BaseException:
            self.shutdown()
            raise
        self._kc = kc
        poller = zmq.Poller()
        poller.register(kc.iopub_channel.socket, zmq.POLLIN)
        poller.register(kc.shell_channel.socket, zmq.POLLIN)
        poller.register(kc.stdin_channel.socket, zmq.POLLIN)
        self._poller = poller
        self._drain(0.05)
        return self

    def shutdown(self) -> None:
        """Stop the kernel (gracefully, then by force) and remove its files."""
        kc, km = self._kc, self._km
        self._kc = self._km = self._poller = None
        if kc is not None:
            kc.stop_channels()
        if km is not None:
            try:
                if km.has_kernel:
                    km.shutdown_kernel(now=False)
            except Exception:  # noqa: BLE001 - fall back to a hard kill
                if km.has_kernel:
                    km.shutdown_kernel(now=True)
            finally:
                km.cleanup_resources()
        log = getattr(self, "_log", None)
        if log is not None and not log.closed:
            log.close()
        _live.discard(self)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def is_alive(self) -> bool:
        """Whether the kernel process is still running."""
        return self._km is not None and bool(self._km.is_alive())

    def kernel_log(self) -> str:
        """The kernel process's stdout and stderr so far."""
        if self._tmp is None:
            return ""
        path = self._tmp / "kernel.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def interrupt(self) -> None:
        """Interrupt the kernel as the frontend's stop button does (SIGINT)."""
        self._manager().interrupt_kernel()

    def restart(self, timeout: float = 60.0) -> None:
        """Restart the kernel process; recorded messages are forgotten."""
        km, kc = self._manager(), self._client()
        km.restart_kernel(now=True)
        kc.wait_for_ready(timeout=timeout)
        self._iopub.clear()
        self._idle.clear()
        self._replies.clear()
        self.comms.clear()

    # -- executing ---------------------------------------------------------

    def execute_async(
        self,
        code: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        store_history: bool = True,
        stop_on_error: bool = True,
        allow_stdin: bool = False,
    ) -> str:
        """Send an execute request without waiting; return its msg_id.

        ``metadata`` becomes the request's metadata, e.g. ``{"cellId": ...}``
        as JupyterLab sends it. ``allow_stdin`` lets ``input()`` ask (nobody
        answers it).
        """
        content = {
            "code": code,
            "silent": False,
            "store_history": store_history,
            "user_expressions": {},
            "allow_stdin": allow_stdin,
            "stop_on_error": stop_on_error,
        }
        return self._send("execute_request", content, metadata=metadata)

    def collect(self, msg_id: str, timeout: float = 30.0) -> Reply:
        """Wait until request ``msg_id`` is replied and idle; return it.

        Raises :class:`KernelError` (with the output so far) on timeout.
        """
        done = self.wait_for(
            lambda: msg_id in self._replies and msg_id in self._idle,
            timeout=timeout,
            what=f"the reply to {msg_id}",
            raise_on_timeout=False,
        )
        reply = self._reply(msg_id)
        if not done:
            raise KernelError(
                f"no reply to {msg_id} within {timeout}s; output so far:\n"
                f"{reply.text}\nkernel log:\n{self.kernel_log()[-2000:]}"
            )
        return reply

    def wait_idle(self, msg_id: str, timeout: float = 10.0) -> Reply:
        """Wait until the kernel went idle after handling ``msg_id``.

        For requests without a shell reply, such as a click's ``comm_msg``
        handled while no cell runs. A click that arrives while an async
        cell awaits is handled concurrently, with no status at all: wait
        for its effects with :meth:`wait_for` instead.
        """
        self.wait_for(
            lambda: msg_id in self._idle, timeout=timeout, what=f"idle after {msg_id}"
        )
        return self._reply(msg_id)

    def execute(
        self,
        code: str,
        timeout: float = 30.0,
        *,
        metadata: Mapping[str, Any] | None = None,
        check: bool = False,
    ) -> Reply:
        """Run ``code`` as a cell and return its :class:`Reply`.

        With ``check=True`` a failed cell raises :class:`KernelError`.
        """
        reply = self.collect(self.execute_async(code, metadata=metadata), timeout)
        return reply.check() if check else reply

    def run(self, code: str, timeout: float = 30.0) -> Reply:
        """Run ``code`` and raise :class:`KernelError` if the cell failed."""
        return self.execute(code, timeout, check=True)

    def messages(self, msg_id: str) -> tuple[Mapping[str, Any], ...]:
        """Every iopub message parented to ``msg_id`` received so far.

        Output from a task created by a cell keeps arriving under that cell
        after it ends (ipykernel 7 parents it by context); call
        :meth:`pump` first to read what is pending.
        """
        return tuple(self._iopub.get(msg_id, ()))

    # -- stdin ---------------------------------------------------------------

    def wait_input(
        self, parent: str | None = None, *, after: int = 0, timeout: float = 10.0
    ) -> Mapping[str, Any]:
        """Wait for the kernel's ``input_request`` number ``after`` (0: first).

        ``parent`` keeps those of one execute request. Returns the message;
        its ``content["prompt"]`` is what a frontend shows by the input box.
        """

        def asked() -> list[Mapping[str, Any]]:
            return [
                m
                for m in self.input_requests
                if m["msg_type"] == "input_request"
                and (parent is None or m["parent_header"].get("msg_id") == parent)
            ]

        self.wait_for(
            lambda: len(asked()) > after,
            timeout=timeout,
            what=f"input_request #{after} of {parent}",
        )
        return asked()[after]

    def answer_input(self, value: str, request: Mapping[str, Any] | None = None) -> str:
        """Type ``value`` into the input box, as JupyterLab's services send it.

        The reply's parent is ``request``'s header (JupyterLab and VS Code
        send it); with None it has none, as ``jupyter_client``'s
        ``input()`` sends it. Returns the reply's msg_id.
        """
        kc = self._client()
        parent = dict(request["header"]) if request is not None else None
        message = kc.session.msg("input_reply", {"value": value}, parent=parent)
        kc.stdin_channel.send(message)
        return str(message["header"]["msg_id"])

    # -- widgets -----------------------------------------------------------

    def click(self, model_id: str) -> str:
        """Send a browser's Button click to widget ``model_id``; return msg_id."""
        record = self.comms.get(model_id)
        if record is None:
            raise KeyError(
                f"no widget comm {model_id!r} was opened by the kernel; "
                "find one with find_button(description)"
            )
        data = {"method": "custom", "content": {"event": "click"}}
        return self._send("comm_msg", {"comm_id": model_id, "data": data})

    def buttons(
        self,
        description: str,
        *,
        parent: str | None = None,
        enabled: bool = True,
        include_closed: bool = False,
    ) -> list[str]:
        """Model ids of Buttons labelled ``description``, oldest first.

        By default only open, enabled ones (those a person could click).
        """
        found = []
        for record in self.comms.values():
            state = record.state
            if (
                (record.closed and not include_closed)
                or state.get("_model_name") != "ButtonModel"
                or state.get("description") != description
                or (parent is not None and record.parent_id != parent)
                or (enabled and state.get("disabled", False))
            ):
                continue
            found.append(record.comm_id)
        return found

    def find_button(
        self,
        description: str,
        *,
        parent: str | None = None,
        enabled: bool = True,
        timeout: float = 10.0,
    ) -> str:
        """Wait for a Button labelled ``description``; return its model id.

        With several, the newest wins. ``parent`` keeps those opened by one
        request (e.g. an execute msg_id).
        """
        self.wait_for(
            lambda: bool(self.buttons(description, parent=parent, enabled=enabled)),
            timeout=timeout,
            what=f"a Button {description!r}",
        )
        return self.buttons(description, parent=parent, enabled=enabled)[-1]

    def state(self, model_id: str) -> dict[str, Any]:
        """The widget's synced state as the frontend would hold it."""
        self.pump()
        return dict(self.comms[model_id].state)

    def open_comm(self, target_name: str, data: Mapping[str, Any] | None = None) -> str:
        """Open a comm from the frontend side, as a page does; return its id."""
        comm_id = uuid.uuid4().hex
        self._send(
            "comm_open",
            {"comm_id": comm_id, "target_name": target_name, "data": dict(data or {})},
        )
        return comm_id

    def send_comm(self, comm_id: str, data: Any) -> str:
        """Send ``data`` on comm ``comm_id`` as a page would; return the msg_id."""
        return self._send("comm_msg", {"comm_id": comm_id, "data": data})

    def comm_data(self, comm_id: str) -> list[Any]:
        """The ``data`` of every message the kernel sent on ``comm_id``."""
        record = self.comms.get(comm_id)
        if record is None:
            return []
        return [m["content"].get("data") for m in record.messages]

    def connect_widget_frontend(
        self, *, close: bool = True, timeout: float = 10.0
    ) -> bool:
        """Do a JupyterLab widget manager's connect handshake.

        Opens a ``jupyter.widget.control`` comm, asks for the widget states
        and, like the manager, closes the comm once answered. Returns False
        when the kernel refused the comm (ipywidgets not imported yet).
        """
        comm_id = uuid.uuid4().hex
        self._send(
            "comm_open",
            {"comm_id": comm_id, "target_name": CONTROL_TARGET, "data": {}},
            metadata={"version": _CONTROL_VERSION},
        )
        request = {"method": "request_states"}
        self._send("comm_msg", {"comm_id": comm_id, "data": request})
        answered = self.wait_for(
            lambda: self._control_answered(comm_id) is not None,
            timeout=timeout,
            what="the control comm's answer",
        )
        accepted = bool(answered) and self._control_answered(comm_id) == "states"
        if accepted and close:
            self._send("comm_close", {"comm_id": comm_id, "data": {}})
        return accepted

    def _control_answered(self, comm_id: str) -> str | None:
        record = self.comms.get(comm_id)
        if record is None:
            return None
        if record.closed:
            return "closed"
        for message in record.messages:
            data = message["content"].get("data", {})
            if data.get("method") == "update_states":
                return "states"
        return None

    # -- pumping -----------------------------------------------------------

    def pump(self, timeout: float = 0.0) -> int:
        """Read every message that is ready (waiting up to ``timeout``)."""
        return self._drain(timeout)

    def wait_for(
        self,
        predicate: Callable[[], bool],
        *,
        timeout: float = 10.0,
        what: str = "the condition",
        raise_on_timeout: bool = True,
    ) -> bool:
        """Pump messages until ``predicate()`` holds; False/raise on timeout."""
        deadline = time.monotonic() + timeout
        next_alive_check = time.monotonic() + 1.0
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0:
                if raise_on_timeout:
                    raise KernelError(
                        f"timed out after {timeout}s waiting for {what}; "
                        f"kernel log:\n{self.kernel_log()[-2000:]}"
                    )
                return False
            self._drain(min(left, 0.1))
            if time.monotonic() >= next_alive_check:
                next_alive_check = time.monotonic() + 1.0
                if not self.is_alive():
                    raise KernelError(
                        f"kernel died while waiting for {what}; "
                        f"kernel log:\n{self.kernel_log()[-4000:]}"
                    )
        return True

    def _drain(self, timeout: float) -> int:
        poller = self._poller
        kc = self._client()
        if poller is None:
            return 0
        count = 0
        wait_ms = int(timeout * 1000)
        while True:
            ready = dict(poller.poll(wait_ms))
            if not ready:
                return count
            wait_ms = 0
            if kc.iopub_channel.socket in ready:
                count += self._read(kc.iopub_channel, self._on_iopub)
            if kc.shell_channel.socket in ready:
                count += self._read(kc.shell_channel, self._on_shell)
            if kc.stdin_channel.socket in ready:
                count += self._read(kc.stdin_channel, self.input_requests.append)

    @staticmethod
    def _read(channel: Any, handle: Callable[[Mapping[str, Any]], None]) -> int:
        count = 0
        while True:
            try:
                message = channel.get_msg(timeout=0)
            except queue.Empty:
                return count
            handle(message)
            count += 1

    def _on_shell(self, message: Mapping[str, Any]) -> None:
        parent = message.get("parent_header", {}).get("msg_id")
        if parent is not None:
            self._replies[parent] = message

    def _on_iopub(self, message: Mapping[str, Any]) -> None:
        parent = message.get("parent_header", {}).get("msg_id")
        msg_type = message["msg_type"]
        content = message["content"]
        if parent is not None:
            self._iopub.setdefault(parent, []).append(message)
            if msg_type == "status" and content["execution_state"] == "idle":
                self._idle.add(parent)
        if msg_type == "comm_open":
            data = content.get("data", {})
            self.comms[content["comm_id"]] = CommRecord(
                comm_id=content["comm_id"],
                target_name=content.get("target_name", ""),
                parent_id=parent,
                state=dict(data.get("state", {})),
            )
        elif msg_type in {"comm_msg", "comm_close"}:
            record = self.comms.get(content["comm_id"])
            if record is None:
                record = CommRecord(
                    comm_id=content["comm_id"], target_name="", parent_id=parent
                )
                self.comms[record.comm_id] = record
            record.messages.append(message)
            data = content.get("data", {})
            if msg_type == "comm_close":
                record.closed = True
            elif data.get("method") in {"update", "echo_update"}:
                record.state.update(data.get("state", {}))

    def _reply(self, msg_id: str) -> Reply:
        shell = self._replies.get(msg_id)
        content = dict(shell["content"]) if shell is not None else {}
        return Reply(
            msg_id=msg_id,
            status=str(content.get("status", "pending")),
            content=content,
            messages=tuple(self._iopub.get(msg_id, ())),
            elapsed=time.monotonic() - self._sent_at.get(msg_id, time.monotonic()),
        )

    def _send(
        self,
        msg_type: str,
        content: Mapping[str, Any],
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        kc = self._client()
        message = kc.session.msg(msg_type, dict(content), metadata=dict(metadata or {}))
        msg_id: str = message["header"]["msg_id"]
        self._sent_at[msg_id] = time.monotonic()
        if msg_type == "comm_open":
            self.comms[content["comm_id"]] = CommRecord(
                comm_id=content["comm_id"],
                target_name=content["target_name"],
                parent_id=None,
            )
        kc.shell_channel.send(message)
        return msg_id

    def _client(self) -> BlockingKernelClient:
        if self._kc is None:
            raise RuntimeError("KernelHarness is not running; use it as a context")
        return self._kc

    def _manager(self) -> KernelManager:
        if self._km is None:
            raise RuntimeError("KernelHarness is not running; use it as a context")
        return self._km


@atexit.register
def _kill_leftovers() -> None:
    for harness in list(_live):
        harness.shutdown()


def running_kernels() -> Iterator[KernelHarness]:
    """Yield the harnesses that are still running (for leak checks)."""
    yield from list(_live)
