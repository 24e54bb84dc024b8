"""How a call's outcome becomes a result, and how a result is frozen.

Everything here is pure: raised values become the contract's error
results, tool return forms are normalised (contract §2.3), and a result is
copied as deep-frozen lossless JSON before anyone but the pipeline sees it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Final

from dsh_nb.tools.errors import ToolErrorInfo, error_info, error_message
from dsh_nb.tools.jsonvalue import (
    ABSENT,
    FrozenDict,
    FrozenList,
    NotJsonError,
    snapshot_json,
)
from dsh_nb.tools.values.execution import ToolExecutionResult, text_result

__all__ = [
    "ARGS_NOT_JSON",
    "BODY_FATAL",
    "FATAL",
    "RESULT_NOT_JSON",
    "denial",
    "error_result",
    "finalize",
    "freeze_if_json",
    "materialize",
    "normalize",
    "not_json_result",
    "settle",
]

ARGS_NOT_JSON: Final = (
    "Error: tool execution arguments must be losslessly JSON-serializable"
)
RESULT_NOT_JSON: Final = "Error: tool result must be losslessly JSON-serializable"
FATAL: Final = (KeyboardInterrupt, asyncio.CancelledError, GeneratorExit)
"""Raised values that must reach the kernel or the task, never a result."""
BODY_FATAL: Final = (asyncio.CancelledError,)
"""What a tool body (or its return value) may raise past its result.

A body's own ``KeyboardInterrupt`` or ``GeneratorExit`` is its failure, as
``SystemExit`` is: raised in a task, it would leave the event loop and end
the kernel or the server. A real interrupt reaches a running call as a
cancellation (the notebook's interrupt watch, ``asyncio.run``'s handler,
the servers' signal handlers); only that stops the call without a result.
"""


def _raised_message(exc: BaseException) -> str:
    message = error_message(exc)
    if isinstance(exc, Exception):
        return message
    # SystemExit and other BaseExceptions: their str() alone ("0") says nothing.
    name = type(exc).__name__
    return f"{name}({message})" if message else name


def error_result(call_id: str, exc: BaseException) -> ToolExecutionResult:
    """Normalise anything raised into the contract's error result."""
    return text_result(
        call_id, "Error: " + _raised_message(exc), is_error=True, error=error_info(exc)
    )


def denial(call_id: str, reason: str) -> ToolExecutionResult:
    return text_result(call_id, "Error: " + reason, is_error=True)


# --- materialisation


def materialize(result: ToolExecutionResult) -> ToolExecutionResult:
    """Copy a result as deep-frozen lossless JSON; raises NotJsonError."""
    content = snapshot_json(result.content)
    if type(content) is not FrozenList:
        raise NotJsonError("content must be a list of content blocks")
    if type(result.is_error) is not bool:
        raise NotJsonError("isError must be a bool")
    error = result.error
    if error is not None and not (
        isinstance(error, ToolErrorInfo)
        and type(error.name) is str
        and type(error.code) is str
    ):
        raise NotJsonError("error must be {name, code} strings")
    extra = result.additional_context
    return ToolExecutionResult(
        call_id=(
            result.call_id
            if type(result.call_id) is str
            else snapshot_json(result.call_id)
        ),
        content=content,
        is_error=result.is_error,
        error=error,
        additional_context=None if extra is None else snapshot_json(extra),
        meta=ABSENT if result.meta is ABSENT else snapshot_json(result.meta),
    )


def finalize(result: ToolExecutionResult, call_id: str) -> ToolExecutionResult:
    try:
        return materialize(result)
    except NotJsonError:
        pass
    return not_json_result(call_id)


def not_json_result(call_id: str) -> ToolExecutionResult:
    """The frozen error a result that is not lossless JSON becomes."""
    try:
        return materialize(text_result(call_id, RESULT_NOT_JSON, is_error=True))
    except NotJsonError:  # even the call id is not JSON (contract A.15)
        block = FrozenDict({"type": "text", "text": RESULT_NOT_JSON})
        return ToolExecutionResult(
            call_id=call_id, content=FrozenList([block]), is_error=True
        )


def normalize(call_id: str, out: object) -> ToolExecutionResult:
    """Turn what a tool body returned into a result (contract §2.3)."""
    if isinstance(out, list):
        return ToolExecutionResult(call_id=call_id, content=out, is_error=False)
    if isinstance(out, str):
        return text_result(call_id, out, is_error=False)
    if isinstance(out, Mapping) and "content" in out:
        content = out["content"]
        if not isinstance(content, list):
            raise TypeError(
                f"tool returned content of type {type(content).__name__}; "
                "content must be a list of content blocks"
            )
        return ToolExecutionResult(
            call_id=call_id,
            content=content,
            is_error=False,
            meta=out["meta"] if "meta" in out else ABSENT,
        )
    raise TypeError(
        f"tool returned {type(out).__name__}; expected a list of content blocks, "
        '{"content": [...], "meta": ...}, or a str'
    )


def settle(call_id: str, out: object) -> tuple[ToolExecutionResult, bool]:
    """Normalise what a tool returned; never raises. True = already frozen.

    The dispatch hot path: a plain ``str`` return is built frozen at once,
    and any other JSON result is frozen here, so the pipeline need not copy
    it again. A result that is not JSON stays as the tool made it: wrappers
    see it as-is, and the final materialisation turns it into the error.
    """
    if type(out) is str and type(call_id) is str:
        block = FrozenDict({"type": "text", "text": out})
        frozen = ToolExecutionResult(
            call_id=call_id, content=FrozenList((block,)), is_error=False
        )
        return frozen, True
    try:
        result = normalize(call_id, out)
    except BODY_FATAL:
        raise
    except BaseException as exc:  # noqa: BLE001 - a hostile return value
        result = error_result(call_id, exc)
    return freeze_if_json(result)


def freeze_if_json(result: ToolExecutionResult) -> tuple[ToolExecutionResult, bool]:
    """The result materialised and True, or the result itself and False."""
    try:
        return materialize(result), True
    except NotJsonError:
        return result, False
