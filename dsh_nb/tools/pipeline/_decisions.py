"""Vetting and applying listener decisions; each check names its listener."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from dsh_nb.tools.errors import ListenerContractError
from dsh_nb.tools.pipeline.waterfall import describe
from dsh_nb.tools.values.execution import (
    Accept,
    Allow,
    Ask,
    Block,
    Deny,
    PostToolDecision,
    PreToolDecision,
    ToolExecutionResult,
)

__all__ = [
    "ACCEPT",
    "ALLOW",
    "apply_post",
    "check_call_id",
    "check_post",
    "check_pre",
    "check_result",
]

ALLOW: Final = Allow()
ACCEPT: Final = Accept()


def check_pre(value: object, fn: Callable[..., Any]) -> PreToolDecision:
    if isinstance(value, (Allow, Ask)):
        return value
    if isinstance(value, Deny):
        if type(value.reason) is str:
            return value
        raise ListenerContractError(
            f"pre-execute listener {describe(fn)} returned Deny without a str reason"
        )
    raise ListenerContractError(
        f"pre-execute listener {describe(fn)} returned {value!r}; "
        "return Allow(), Deny(reason), Ask(reason) or the result of next()"
    )


def check_post(value: object, fn: Callable[..., Any]) -> PostToolDecision:
    if isinstance(value, (Accept, Block)):
        return value
    raise ListenerContractError(
        f"post-execute listener {describe(fn)} returned {value!r}; "
        "return Accept(...), Block(feedback) or the result of next()"
    )


def check_result(value: object, fn: Callable[..., Any]) -> ToolExecutionResult:
    if isinstance(value, ToolExecutionResult):
        return value
    raise ListenerContractError(
        f"tools/execute wrapper {describe(fn)} returned {value!r}; "
        "return a ToolExecutionResult or the result of next()"
    )


def check_call_id(result: ToolExecutionResult, call_id: str) -> None:
    """A wrapper may not answer for another call (contract §4.9)."""
    if result.call_id != call_id:
        raise RuntimeError(
            f'tools/execute returned callId "{result.call_id}" '
            f'for authoritative call "{call_id}"'
        )


def apply_post(
    result: ToolExecutionResult, decision: PostToolDecision
) -> ToolExecutionResult:
    """The result a post-execute decision leaves (contract §4.10)."""
    if isinstance(decision, Block):
        return ToolExecutionResult(
            call_id=result.call_id,
            content=decision.feedback,
            is_error=True,
            additional_context=decision.additional_context,
        )
    if decision.content is None and decision.additional_context is None:
        return result
    return dataclasses.replace(
        result,
        content=result.content if decision.content is None else decision.content,
        additional_context=(
            result.additional_context
            if decision.additional_context is None
            else decision.additional_context
        ),
    )
