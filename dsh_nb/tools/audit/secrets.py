"""The secrets this process was given, and their redaction from text.

An API key or a token reaches text in ways no caller plans: an SDK's
exception quotes a header it refused, a server quotes the key in its 401
body, a traceback shows an argument. So a secret is registered once,
where it is configured (a chat's API key, a served or a connected MCP
server's token, an MCP server's environment), and every boundary where
text is shown or stored passes it through :func:`redact`: the kernel's
outgoing messages, log records, a session log written to a file, a
model request's error text. Values shorter than 8 characters are not
registered: they would redact ordinary words.
"""

from __future__ import annotations

import base64
import logging
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import quote

__all__ = [
    "REDACTED",
    "add_secret",
    "clean_secret",
    "has_secrets",
    "redact",
    "redact_edges",
    "redact_value",
    "secret_settings",
]

REDACTED: Final = "[secret]"
_SHORTEST: Final = 8
_SECRET_NAME: Final = re.compile(
    r"key|token|secret|passw|auth|credential|cookie|session", re.I
)
_lock = threading.Lock()
_counts: Counter[str] = Counter()
_pattern: re.Pattern[str] | None = None
_factory: Callable[..., logging.LogRecord] | None = None


def clean_secret(value: str) -> str:
    """The secret as it is meant: surrounding whitespace dropped.

    A key read from a file keeps its trailing newline, which an HTTP
    client refuses in a header (quoting the key in its error).
    """
    return value.strip()


def add_secret(value: object) -> Callable[[], None]:
    """Redact ``value`` from every shown or stored text; return an undo.

    A non-string, or a string shorter than 8 characters after
    :func:`clean_secret`, is ignored (the undo does nothing).
    """
    if not isinstance(value, str):
        return _nothing
    forms = {value, clean_secret(value)}
    forms |= {quote(f, safe="") for f in forms}
    forms |= {encoded for f in list(forms) for encoded in _encoded_forms(f)}
    forms = {f for f in forms if len(f) >= _SHORTEST}
    if not forms:
        return _nothing
    with _lock:
        _counts.update(forms)
        _rebuild()
    _install_log_redaction()
    done = False

    def undo() -> None:
        nonlocal done
        if done:
            return
        done = True
        with _lock:
            _counts.subtract(forms)
            for form in forms:
                if _counts[form] <= 0:
                    del _counts[form]
            _rebuild()

    return undo


def _nothing() -> None:
    return None


def _encoded_forms(value: str) -> set[str]:
    """The secret as hex and inside base64 text, at any byte offset.

    An HTTP Basic header is ``base64("user:" + key)``: the key's own
    base64 depends on where it starts, so each of the three alignments
    gives the characters that only the key's bytes decide (the ones
    shared with the bytes around it are left out).
    """
    raw = value.encode("utf-8")
    forms = {raw.hex(), raw.hex().upper()}
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw + b"\0\0").decode()
        first = -(-8 * offset // 6)  # the first char of the key's bits alone
        last = (8 * offset + 8 * len(raw)) // 6  # past the last such char
        core = encoded[first:last]
        forms |= {core, core.replace("+", "-").replace("/", "_")}
    return forms


def _rebuild() -> None:
    global _pattern
    # Longest first, so a secret that contains another is replaced whole.
    forms = sorted(_counts, key=len, reverse=True)
    _pattern = re.compile("|".join(map(re.escape, forms))) if forms else None


def has_secrets() -> bool:
    """Whether any secret is registered (a cheap check for hot paths)."""
    return _pattern is not None


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``[secret]``."""
    pattern = _pattern
    if pattern is None or not isinstance(text, str):
        return text
    return pattern.sub(REDACTED, text)


def redact_value(value: Any) -> Any:
    """A JSON-like value with every string (keys too) redacted.

    Containers are rebuilt only where something changed, so a value with
    no secret in it comes back as the same object. The walk keeps its own
    stack, so a value nested deeper than Python's recursion limit (a
    600-deep display) is redacted too; a container inside itself is left
    as it is where it recurs.
    """
    if _pattern is None:
        return value
    if isinstance(value, str):
        return redact(value)
    if not isinstance(value, (Mapping, list, tuple)):
        return value
    # Each frame: the container, its children left, the results so far,
    # whether any child changed.
    stack: list[list[Any]] = [[value, iter(_children(value)), [], False]]
    on_path = {id(value)}
    out: Any = value
    while stack:
        frame = stack[-1]
        child = next(frame[1], _END)
        if child is _END:
            stack.pop()
            node = frame[0]
            on_path.discard(id(node))
            done = _rebuilt(node, frame[2]) if frame[3] else node
            if not stack:
                out = done
                break
            stack[-1][2].append(done)
            stack[-1][3] = stack[-1][3] or done is not node
            continue
        new: Any = child
        if isinstance(child, str):
            new = redact(child)
        elif isinstance(child, (Mapping, list, tuple)) and id(child) not in on_path:
            on_path.add(id(child))
            stack.append([child, iter(_children(child)), [], False])
            continue
        frame[2].append(new)
        frame[3] = frame[3] or new is not child
    return out


_END: Final = object()


def _children(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [part for pair in value.items() for part in pair]
    return list(value)


def _rebuilt(node: Any, parts: list[Any]) -> Any:
    if isinstance(node, Mapping):
        return dict(zip(parts[0::2], parts[1::2], strict=True))
    return list(parts) if isinstance(node, list) else tuple(parts)


def redact_edges(text: str) -> str:
    """``text`` redacted, and a secret's start at its end or a secret's
    end at its start too (4 characters or more).

    For stream output, which reaches the page in flushes: a key printed
    in two flushes is two pieces, neither of them the key, that the page
    shows joined. At most 3 characters of a key can show at a cut.
    """
    pattern = _pattern
    if pattern is None or not isinstance(text, str):
        return text
    text = pattern.sub(REDACTED, text)
    forms = list(_counts)
    head = max((_overlap(f, text) for f in forms), default=0)
    tail = max((_overlap(text, f) for f in forms), default=0)
    if head + tail > len(text) or (
        len(text) >= _EDGE and any(text in f for f in forms)
    ):  # the whole text is a piece of one secret
        return REDACTED
    if tail:
        text = text[:-tail] + REDACTED
    if head:
        text = REDACTED + text[head:]
    return text


_EDGE: Final = 4  # the shortest piece of a secret redacted at a cut


def _overlap(before: str, after: str) -> int:
    """The longest end of ``before`` that starts ``after`` (>= 4 chars)."""
    for size in range(min(len(before), len(after)) - 1, _EDGE - 1, -1):
        if before.endswith(after[:size]):
            return size
    return 0


def secret_settings(settings: Mapping[str, object] | None) -> Callable[[], None]:
    """Register the values of settings whose names say they are secret.

    For an MCP server's ``headers`` (``Authorization``, ``X-Api-Key``) and
    ``env`` (``GITHUB_TOKEN``): a value under a name with ``key``,
    ``token``, ``secret``, ``passw``, ``auth``, ``credential``, ``cookie``
    or ``session`` in it, and the token after ``Bearer``/``Basic``.
    """
    undos: list[Callable[[], None]] = []
    for name, value in (settings or {}).items():
        if not (isinstance(value, str) and _SECRET_NAME.search(str(name))):
            continue
        undos.append(add_secret(value))
        scheme, _, token = value.strip().partition(" ")
        if token and scheme.lower() in {"bearer", "basic", "token"}:
            undos.append(add_secret(token))

    def undo() -> None:
        for each in undos:
            each()

    return undo


def _install_log_redaction() -> None:
    """Redact every log record as it is made, once secrets exist.

    A record factory is the one place every logger's records pass, and
    the record's message and traceback text are fixed there, so no
    handler (added before or after) can write a secret.
    """
    global _factory
    with _lock:
        if _factory is not None:
            return
        previous = logging.getLogRecordFactory()
        _factory = previous

    def make(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if _pattern is None:
            return record
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string is logging's to report
            return record
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text = redact(text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    logging.setLogRecordFactory(make)
