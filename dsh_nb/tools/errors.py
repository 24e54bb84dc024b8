"""Structured harness errors with stable codes.

The tree::

    HarnessError              base; ``.code`` is the interface, not the text
    ├── ToolArgsError         INVALID_ARGS        arguments broke the schema
    ├── ToolNotFoundError     UNKNOWN_TOOL        unknown or restricted away
    ├── ToolTimeoutError      TOOL_TIMEOUT        the policy's deadline won
    ├── OutputSchemaError     UNSUPPORTED_SCHEMA  outside the output subset
    ├── ToolDefinitionError   INVALID_DEFINITION  bad definition (raised)
    ├── ApprovalError         APPROVAL_FAILED     no open turn to ask in
    ├── ListenerContractError LISTENER_CONTRACT   a listener broke the rules
    └── CallDepthError        CALL_DEPTH_EXCEEDED calls nested too deep

At call time every one of these becomes an ``isError`` result carrying
``{name, code}``; only definition and registration errors are raised to the
caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ApprovalError",
    "CallDepthError",
    "HarnessError",
    "ListenerContractError",
    "OutputSchemaError",
    "ToolArgsError",
    "ToolDefinitionError",
    "ToolErrorInfo",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "error_info",
    "error_message",
]

UNPRINTABLE = "<unprintable thrown value>"


class HarnessError(Exception):
    """Base of every error the pipeline can route by ``code``."""

    code: str

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code

    @property
    def name(self) -> str:
        """The error's name on the wire: its class name."""
        return type(self).__name__

    def __str__(self) -> str:
        return self.message


class ToolArgsError(HarnessError):
    """Model-generated arguments violate the tool's schema."""

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__(
            "invalid arguments: " + "; ".join(self.violations), "INVALID_ARGS"
        )


class ToolNotFoundError(HarnessError):
    """No tool of that name is visible to the caller."""

    def __init__(self, tool_name: str) -> None:
        self.tool_name = tool_name
        super().__init__(f'unknown tool "{tool_name}"', "UNKNOWN_TOOL")


class ToolTimeoutError(HarnessError):
    """The timeout policy's own deadline fired before the tool settled."""

    def __init__(self, timeout_ms: float) -> None:
        from dsh_nb.tools.jsonvalue import format_number

        self.timeout_ms = timeout_ms
        super().__init__(
            f"tool call timed out after {format_number(timeout_ms)}ms", "TOOL_TIMEOUT"
        )


class OutputSchemaError(HarnessError):
    """A structured-output schema uses something the validator cannot enforce."""

    def __init__(self, violations: Sequence[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__(
            "unsupported output schema: " + "; ".join(self.violations),
            "UNSUPPORTED_SCHEMA",
        )


class ToolDefinitionError(HarnessError, ValueError):
    """A tool definition or registration is malformed; raised at once."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "INVALID_DEFINITION")


class ApprovalError(HarnessError):
    """The approval seam was asked to run where it cannot (no open turn)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "APPROVAL_FAILED")


class ListenerContractError(HarnessError):
    """A listener returned something that is not a decision, or misused next()."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "LISTENER_CONTRACT")


class CallDepthError(HarnessError):
    """A call nested deeper in other calls than the configured limit allows."""

    def __init__(self, message: str) -> None:
        super().__init__(message, "CALL_DEPTH_EXCEEDED")


@dataclass(frozen=True, slots=True)
class ToolErrorInfo:
    """Machine-routable ``{name, code}`` carried on an error result."""

    name: str
    code: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "code": self.code}


def error_message(exc: object) -> str:
    """Extract a message from any raised value; never raises."""
    try:
        if isinstance(exc, BaseException):
            return str(exc)
        message = getattr(exc, "message", None)
        if isinstance(message, str):
            return message
        return str(exc)
    except BaseException:  # noqa: BLE001 - a hostile __str__ must not escape
        return UNPRINTABLE


def error_info(exc: object) -> ToolErrorInfo | None:
    """Return ``{name, code}`` for a harness error, else None; never raises."""
    if not isinstance(exc, HarnessError):
        return None
    try:
        name, code = exc.name, exc.code
        if type(name) is str and type(code) is str:
            return ToolErrorInfo(name, code)
    except BaseException:  # noqa: BLE001 - inspecting a hostile error
        pass
    return None
