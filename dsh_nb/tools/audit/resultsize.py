"""Keep a bounded copy of a huge result for the journal and the card.

A tool may return 100 MB. The caller gets it whole, but the session log
and the card are kept for the whole session: they hold a copy cut to
``max_bytes`` (text blocks cut on a character boundary, other blocks kept
while they fit), ending in a text block that says how much was left out.
The size is counted in UTF-8 bytes of the text and of the other blocks'
strings; counting costs one pass over the content's nodes, and nothing is
copied when the content fits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.tools.jsonvalue import ABSENT, FrozenDict, FrozenList

if TYPE_CHECKING:
    from dsh_nb.tools.values.execution import ToolExecutionResult

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_RESULT_ROWS",
    "MAX_RESULT_ROWS",
    "MaxResultRows",
    "bound_content",
    "bound_result",
    "content_size",
    "lone_text",
    "surely_fits",
]

DEFAULT_MAX_RESULT_BYTES: Final = 4_000_000
"""What a journal or card keeps of one result unless configured (4 MB)."""

DEFAULT_MAX_RESULT_ROWS: Final = 100
"""Rows of a table (or items of an iterator) a model reads unless configured."""

MAX_RESULT_ROWS: ContextVar[int] = ContextVar(
    "dsh_nb_max_result_rows", default=DEFAULT_MAX_RESULT_ROWS
)
"""The running call's registry's ``max_result_rows``.

A signature tool turns its return value into a result inside its own body
(:mod:`dsh_nb.tools.signature.returns`), which knows nothing of the
registry it was registered in; the pipeline sets this around dispatch, and
worker threads run the body in a copy of the caller's context.
"""


class MaxResultRows:
    """The registry's ``max_result_rows`` setting: a positive int, validated.

    A descriptor, so the registry keeps one line for it and a bad value is
    refused where it is set, never later in a call.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}"

    def __get__(self, obj: object, owner: type | None = None) -> int:
        if obj is None:
            return DEFAULT_MAX_RESULT_ROWS
        value: int = getattr(obj, self._slot, DEFAULT_MAX_RESULT_ROWS)
        return value

    def __set__(self, obj: object, value: int) -> None:
        if type(value) is not int or value < 1:
            raise ValueError(f"max_result_rows must be a positive int; got {value!r}")
        setattr(obj, self._slot, value)


_ATOMS: Final = frozenset({int, float, bool, type(None)})
_UTF8_MAX: Final = 4  # bytes one character takes at most in UTF-8
_TEXT_BLOCK_KEYS: Final = 12  # keys "type", "text" and kind "text", as _size counts


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _size(value: Any) -> int:
    """UTF-8 bytes of the strings in ``value`` (walked without recursion)."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            # len() is O(1); bytes only matter near the limit, so the exact
            # count is taken for long strings alone.
            total += (
                len(item.encode("utf-8", "surrogatepass"))
                if len(item) > 64
                else len(item)
            )
        # dict and list first: the content is frozen JSON, and the Mapping
        # ABC's check is the slow one.
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, str):
            total += len(item.encode("utf-8", "surrogatepass"))
        elif type(item) not in _ATOMS and isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        else:
            total += 8
    return total


def surely_fits(content: Sequence[Any], max_bytes: int) -> bool:
    """Whether text-only content is under ``max_bytes`` without a full walk.

    A str of n characters is at most 4n UTF-8 bytes, and a text block's
    keys and kind add 12: the common small result is settled in a few
    steps, without the full walk. Anything else answers False and is
    counted exactly.
    """
    left = max_bytes
    try:
        for block in content:
            if type(block) is not FrozenDict or len(block) != 2:
                return False
            text = block["text"]
            if type(text) is not str or block["type"] != "text":
                return False
            left -= _UTF8_MAX * len(text) + _TEXT_BLOCK_KEYS
            if left < 0:
                return False
    except KeyError:
        return False
    return True


def lone_text(result: ToolExecutionResult, max_bytes: int) -> str | None:
    """The text of a result that is one text block surely under ``max_bytes``.

    None for anything else: an error, context, meta, other or more blocks.
    The journal asks this of every result, so it is one straight check
    rather than :func:`surely_fits`'s loop.
    """
    content = result.content
    if (
        len(content) != 1
        or result.error is not None
        or result.additional_context is not None
        or result.meta is not ABSENT
    ):
        return None
    block = content[0]
    if type(block) is not FrozenDict or len(block) != 2:
        return None
    text = block.get("text")
    if type(text) is not str or block.get("type") != "text":
        return None
    return text if _UTF8_MAX * len(text) + _TEXT_BLOCK_KEYS <= max_bytes else None


def content_size(content: Sequence[Any]) -> int:
    """The size of a result's content blocks, as :func:`bound_content` counts."""
    return _size(content)


def _cut_utf8(text: str, budget: int) -> str:
    if text.isascii():
        return text[:budget]
    raw = text[:budget].encode("utf-8", "surrogatepass")[:budget]
    return raw.decode("utf-8", "ignore")


def bound_content(
    content: Sequence[Any], max_bytes: int
) -> tuple[Sequence[Any], int | None]:
    """Return ``content`` cut to ``max_bytes``, and its full size if cut.

    Content that fits comes back as the same object and ``None``.
    """
    if surely_fits(content, max_bytes):
        return content, None
    total = _size(content)
    if total <= max_bytes:
        return content, None
    out: list[Any] = []
    left = max_bytes
    for block in content:
        if left <= 0:
            break
        size = _size(block)
        if size <= left:
            out.append(block)
            left -= size
            continue
        if isinstance(block, Mapping) and isinstance(block.get("text"), str):
            text = block["text"]
            overhead = size - (len(text) if text.isascii() else _utf8_len(text))
            cut = dict(block)
            cut["text"] = _cut_utf8(text, max(0, left - overhead))
            out.append(FrozenDict(cut))
        left = 0
    kept = _size(out)
    note = (
        f"[dsh_nb kept {kept:,} of {total:,} bytes of this result "
        f"(max_result_bytes {max_bytes:,}); the caller received it whole]"
    )
    out.append(FrozenDict({"type": "text", "text": note}))
    return FrozenList(out), total


def bound_result(
    result: ToolExecutionResult, max_bytes: int
) -> tuple[ToolExecutionResult, int | None]:
    """``result`` with its content cut by :func:`bound_content`, and the size.

    A result that fits comes back as the same object and ``None``.
    """
    content, total = bound_content(result.content, max_bytes)
    if total is None:
        return result, None
    from dsh_nb.tools.values.execution import ToolExecutionResult as _Result

    cut = _Result(
        call_id=result.call_id,
        content=content,
        is_error=result.is_error,
        error=result.error,
        additional_context=result.additional_context,
        meta=result.meta,
    )
    return cut, total
