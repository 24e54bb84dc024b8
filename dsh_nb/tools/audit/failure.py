"""Why a tool body failed, for the people who debug it (never for a model).

A model reads ``Error: <message>`` and nothing else (contract §4.6). The
person who wrote the tool needs the exception's type and the traceback,
but not the dozen frames of dsh_nb's pipeline between the call and the
body: those are collapsed into one line. The text is bounded (the start
and the end kept: the end holds the raising frame and the message) and
redacted, so the card and the journal can keep it. The exception itself
rides along for the kernel's ``%debug`` (``sys.last_value``); it is never
written anywhere.
"""

from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass, field
from typing import Final

from dsh_nb.tools.audit.secrets import redact

__all__ = ["MAX_TRACEBACK_CHARS", "Failure", "failure_of"]

MAX_TRACEBACK_CHARS: Final = 12_000
"""Characters of traceback text kept per failure (head and tail)."""

_OURS: Final = os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + os.sep
_CHAIN: Final = 8  # chained exceptions followed at most
# A notebook cell's code lives in a temporary file named by the kernel's
# process id (ipykernel's /tmp/ipykernel_<pid>/<hash>.py): shown as
# "<cell hash>", so a stored notebook reads the same on every run.
_CELL_FILE: Final = re.compile(r"[\\/]ipykernel_\d+[\\/](\w+)\.py$")


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed body: the exception's type, message and traceback text."""

    type: str
    """The exception's class, qualified by its module unless a builtin."""
    message: str
    traceback: str
    """Bounded and redacted; dsh_nb's own frames collapsed into one line."""
    exception: BaseException | None = field(default=None, compare=False, repr=False)


def _qualified(exc: BaseException) -> str:
    kind = type(exc)
    module = kind.__module__
    name = kind.__qualname__
    return name if module in ("builtins", "__main__") else f"{module}.{name}"


def _frames(stack: traceback.StackSummary) -> list[str]:
    out: list[str] = []
    hidden = 0
    for frame in stack:
        if frame.filename.startswith(_OURS):
            hidden += 1
            continue
        if hidden:
            out.append(_collapsed(hidden))
            hidden = 0
        cell = _CELL_FILE.search(frame.filename)
        text = traceback.StackSummary.from_list([frame]).format()[0]
        if cell is not None:
            text = text.replace(f'"{frame.filename}"', f"<cell {cell.group(1)}>", 1)
        out.append(text)
    if hidden:
        out.append(_collapsed(hidden))
    return out


def _collapsed(count: int) -> str:
    noun = "frame" if count == 1 else "frames"
    return f"  [{count} dsh_nb {noun}: the call's pipeline]\n"


def _lines(te: traceback.TracebackException, depth: int) -> list[str]:
    out: list[str] = []
    if depth < _CHAIN:
        if te.__cause__ is not None:
            out += _lines(te.__cause__, depth + 1)
            out.append(
                "\nThe above exception was the direct cause of the "
                "following exception:\n\n"
            )
        elif te.__context__ is not None and not te.__suppress_context__:
            out += _lines(te.__context__, depth + 1)
            out.append(
                "\nDuring handling of the above exception, another "
                "exception occurred:\n\n"
            )
    if te.stack:
        out.append("Traceback (most recent call last):\n")
        out += _frames(te.stack)
    out += list(te.format_exception_only())
    return out


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n  [... {cut:,} characters cut ...]\n{text[-tail:]}"


def failure_of(exc: BaseException, limit: int = MAX_TRACEBACK_CHARS) -> Failure:
    """The failure ``exc`` stands for; never raises."""
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__
        message = "<unprintable exception>"
    try:
        te = traceback.TracebackException.from_exception(exc, capture_locals=False)
        text = "".join(_lines(te, 0))
    except Exception:  # noqa: BLE001 - a traceback we cannot read is a line
        text = f"{_qualified(exc)}: {message}\n"
    return Failure(
        type=_qualified(exc),
        message=redact(message),
        traceback=redact(_bounded(text, limit)),
        exception=exc,
    )
