"""What a tool prints, logs and warns during a call goes to that call.

A kernel runs many calls at once (a model's parallel calls, sync bodies on
worker threads), and a process has one ``sys.stdout``. So the streams are
replaced once by proxies that ask a context variable which call is
running: inside a call that captures, the text goes to the call's context
(its card, its journal, its MCP client); anywhere else, to the stream that
was there before, untouched. Context variables follow ``await``, tasks a
tool starts, and the worker threads sync bodies run on
(:func:`dsh_nb.tools.running.worker.run_sync` copies them), so concurrent
calls never see each other's lines.

The same variable routes ``logging`` records (one handler on the root
logger; the loggers' own levels still decide what is emitted) and
warnings (``warnings.showwarning``). A thread the tool starts itself
does not carry the variable: what it prints goes where it would have
gone without dsh_nb.

The proxies are put back in place before each capturing call if
something (IPython's ``%%capture``, pytest) swapped the streams since.
"""

from __future__ import annotations

import logging
import sys
import threading
import warnings
from contextvars import ContextVar
from typing import Any, Final, Protocol, TextIO

__all__ = ["SINK", "CallStream", "Sink", "install"]


class Sink(Protocol):
    """Where one call's captured output goes (its ``ToolContext``)."""

    _capture: bool

    def _write(self, source: str, text: str) -> None: ...

    def _record(self, record: logging.LogRecord) -> None: ...

    def _warning(self, text: str) -> None: ...


#: The call whose context is current; also what ``current_tool_context`` reads.
SINK: ContextVar[Any] = ContextVar("dsh_nb_tool_context", default=None)

_OWN_LOGGERS: Final = ("dsh_nb.", "asyncio", "mcp.", "httpx", "uvicorn")


class CallStream:
    """A ``sys.stdout``/``sys.stderr`` that sends a capturing call's text to it."""

    def __init__(self, wrapped: TextIO, source: str) -> None:
        self._dsh_wrapped = wrapped
        self._dsh_source = source

    def write(self, text: str) -> int:
        sink = SINK.get()
        if sink is not None and sink._capture:
            if not isinstance(text, str):
                raise TypeError(
                    f"write() argument must be str, not {type(text).__name__}"
                )
            sink._write(self._dsh_source, text)
            return len(text)
        return self._dsh_wrapped.write(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        sink = SINK.get()
        if sink is None or not sink._capture:
            self._dsh_wrapped.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dsh_wrapped, name)


class _CallHandler(logging.Handler):
    """Sends a capturing call's ``logging`` records to it."""

    def emit(self, record: logging.LogRecord) -> None:
        sink = SINK.get()
        if (
            sink is not None
            and sink._capture
            and not record.name.startswith(_OWN_LOGGERS)
        ):
            try:
                sink._record(record)
            except Exception:  # noqa: BLE001 - logging never raises into a tool
                self.handleError(record)
            return
        if _alone(record):
            # Without this handler the record would reach no handler, and
            # Python would print it through ``logging.lastResort``: so do we.
            last = logging.lastResort
            if last is not None and record.levelno >= last.level:
                last.handle(record)


def _alone(record: logging.LogRecord) -> bool:
    logger: logging.Logger | None = logging.getLogger(record.name)
    found = 0
    while logger is not None:
        found += len(logger.handlers)
        if not logger.propagate:
            break
        logger = logger.parent
    return found <= 1


_HANDLER: Final = _CallHandler()
_lock = threading.Lock()
_shown: Any = None  # the ``showwarning`` ours wraps


def _showwarning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    sink = SINK.get()
    if sink is not None and sink._capture and file is None:
        sink._warning(f"{category.__name__}: {message} ({filename}:{lineno})")
        return
    shown = _shown if _shown is not None else warnings._showwarning_orig  # type: ignore[attr-defined]
    shown(message, category, filename, lineno, file, line)


def install() -> None:
    """Put the proxies, the handler and the warning hook in place (idempotent)."""
    global _shown
    if (
        type(sys.stdout) is CallStream
        and type(sys.stderr) is CallStream
        and warnings.showwarning is _showwarning
        and _HANDLER in logging.root.handlers
    ):
        return
    with _lock:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if stream is not None and type(stream) is not CallStream:
                setattr(sys, name, CallStream(stream, name))
        if warnings.showwarning is not _showwarning:
            _shown = warnings.showwarning
            warnings.showwarning = _showwarning
        if _HANDLER not in logging.root.handlers:
            logging.root.addHandler(_HANDLER)
