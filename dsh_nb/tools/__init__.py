"""The tool pipeline: pure Python plus jsonschema, no Jupyter imports.

Usable in scripts, servers and tests; ``dsh_nb.notebook`` builds the
notebook experience on top of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.tools._disposer import Disposer
    from dsh_nb.tools.audit.session import Agent, SessionLog
    from dsh_nb.tools.context import (
        Answer,
        SamplingUnavailable,
        ToolContext,
        ToolContextError,
        current_tool_context,
    )
    from dsh_nb.tools.definition import (
        ToolDefinition,
        ToolResult,
        define_tool,
        text_block,
        tool,
    )
    from dsh_nb.tools.errors import (
        ApprovalError,
        CallDepthError,
        HarnessError,
        ListenerContractError,
        OutputSchemaError,
        ToolArgsError,
        ToolDefinitionError,
        ToolErrorInfo,
        ToolNotFoundError,
        ToolTimeoutError,
    )
    from dsh_nb.tools.jsonvalue import ABSENT, FrozenDict, FrozenList
    from dsh_nb.tools.pipeline.approval import (
        ApprovalRequest,
        ApprovalService,
        effective_policy,
        set_approval_policy,
    )
    from dsh_nb.tools.pipeline.trace import TraceRecord
    from dsh_nb.tools.presentation import (
        DiffCallView,
        DiffResultView,
        FileDiff,
        FileLocation,
        GenericCallView,
        GenericResultView,
        TerminalCallView,
        TerminalResultView,
        ToolCallKind,
        ToolCallView,
        ToolResultView,
    )
    from dsh_nb.tools.presenter import ToolPresenter
    from dsh_nb.tools.registry import ToolRegistry
    from dsh_nb.tools.running.abort import (
        AbortController,
        AbortError,
        AbortSignal,
        TimeoutReason,
    )
    from dsh_nb.tools.running.timeout import TimeoutPolicy
    from dsh_nb.tools.schema.spec import (
        SchemaProp,
        SchemaSpec,
        schema_spec_to_json_schema,
        validate_args,
    )
    from dsh_nb.tools.schema.structured import (
        assert_supported_output_schema,
        validate_structured_value,
    )
    from dsh_nb.tools.signature import spec_from_signature
    from dsh_nb.tools.values.execution import (
        Accept,
        Allow,
        Ask,
        Block,
        Deny,
        ToolExecution,
        ToolExecutionInput,
        ToolExecutionResult,
        ToolExecutionToken,
    )
    from dsh_nb.tools.values.outcome import ToolOutcome, ToolRun

__all__ = [
    "ABSENT",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "Accept",
    "Agent",
    "Allow",
    "Answer",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalService",
    "Ask",
    "Block",
    "CallDepthError",
    "Deny",
    "DiffCallView",
    "DiffResultView",
    "Disposer",
    "FileDiff",
    "FileLocation",
    "FrozenDict",
    "FrozenList",
    "GenericCallView",
    "GenericResultView",
    "HarnessError",
    "ListenerContractError",
    "OutputSchemaError",
    "SchemaProp",
    "SamplingUnavailable",
    "SchemaSpec",
    "SessionLog",
    "TerminalCallView",
    "TerminalResultView",
    "TimeoutPolicy",
    "TimeoutReason",
    "ToolArgsError",
    "ToolCallKind",
    "ToolCallView",
    "ToolContext",
    "ToolContextError",
    "ToolDefinition",
    "ToolDefinitionError",
    "ToolErrorInfo",
    "ToolExecution",
    "ToolExecutionInput",
    "ToolExecutionResult",
    "ToolExecutionToken",
    "ToolNotFoundError",
    "ToolOutcome",
    "ToolPresenter",
    "ToolRegistry",
    "ToolResult",
    "ToolResultView",
    "ToolRun",
    "ToolTimeoutError",
    "TraceRecord",
    "assert_supported_output_schema",
    "current_tool_context",
    "define_tool",
    "effective_policy",
    "schema_spec_to_json_schema",
    "set_approval_policy",
    "spec_from_signature",
    "text_block",
    "tool",
    "validate_args",
    "validate_structured_value",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "Disposer": "dsh_nb.tools._disposer",
        "ApprovalRequest": "dsh_nb.tools.pipeline.approval",
        "ApprovalService": "dsh_nb.tools.pipeline.approval",
        "effective_policy": "dsh_nb.tools.pipeline.approval",
        "set_approval_policy": "dsh_nb.tools.pipeline.approval",
        "Agent": "dsh_nb.tools.audit.session",
        "SessionLog": "dsh_nb.tools.audit.session",
        "Answer": "dsh_nb.tools.context",
        "SamplingUnavailable": "dsh_nb.tools.context",
        "ToolContext": "dsh_nb.tools.context",
        "ToolContextError": "dsh_nb.tools.context",
        "current_tool_context": "dsh_nb.tools.context",
        "ToolDefinition": "dsh_nb.tools.definition",
        "ToolResult": "dsh_nb.tools.definition",
        "define_tool": "dsh_nb.tools.definition",
        "text_block": "dsh_nb.tools.definition",
        "tool": "dsh_nb.tools.definition",
        "ApprovalError": "dsh_nb.tools.errors",
        "CallDepthError": "dsh_nb.tools.errors",
        "HarnessError": "dsh_nb.tools.errors",
        "ListenerContractError": "dsh_nb.tools.errors",
        "OutputSchemaError": "dsh_nb.tools.errors",
        "ToolArgsError": "dsh_nb.tools.errors",
        "ToolDefinitionError": "dsh_nb.tools.errors",
        "ToolErrorInfo": "dsh_nb.tools.errors",
        "ToolNotFoundError": "dsh_nb.tools.errors",
        "ToolTimeoutError": "dsh_nb.tools.errors",
        "Accept": "dsh_nb.tools.values.execution",
        "Allow": "dsh_nb.tools.values.execution",
        "Ask": "dsh_nb.tools.values.execution",
        "Block": "dsh_nb.tools.values.execution",
        "Deny": "dsh_nb.tools.values.execution",
        "ToolExecution": "dsh_nb.tools.values.execution",
        "ToolExecutionInput": "dsh_nb.tools.values.execution",
        "ToolExecutionResult": "dsh_nb.tools.values.execution",
        "ToolExecutionToken": "dsh_nb.tools.values.execution",
        "ABSENT": "dsh_nb.tools.jsonvalue",
        "FrozenDict": "dsh_nb.tools.jsonvalue",
        "FrozenList": "dsh_nb.tools.jsonvalue",
        "ToolOutcome": "dsh_nb.tools.values.outcome",
        "ToolRun": "dsh_nb.tools.values.outcome",
        "TraceRecord": "dsh_nb.tools.pipeline.trace",
        "DiffCallView": "dsh_nb.tools.presentation",
        "DiffResultView": "dsh_nb.tools.presentation",
        "FileDiff": "dsh_nb.tools.presentation",
        "FileLocation": "dsh_nb.tools.presentation",
        "GenericCallView": "dsh_nb.tools.presentation",
        "GenericResultView": "dsh_nb.tools.presentation",
        "TerminalCallView": "dsh_nb.tools.presentation",
        "TerminalResultView": "dsh_nb.tools.presentation",
        "ToolCallKind": "dsh_nb.tools.presentation",
        "ToolCallView": "dsh_nb.tools.presentation",
        "ToolResultView": "dsh_nb.tools.presentation",
        "ToolPresenter": "dsh_nb.tools.presenter",
        "ToolRegistry": "dsh_nb.tools.registry",
        "AbortController": "dsh_nb.tools.running.abort",
        "AbortError": "dsh_nb.tools.running.abort",
        "AbortSignal": "dsh_nb.tools.running.abort",
        "TimeoutReason": "dsh_nb.tools.running.abort",
        "TimeoutPolicy": "dsh_nb.tools.running.timeout",
        "SchemaProp": "dsh_nb.tools.schema.spec",
        "SchemaSpec": "dsh_nb.tools.schema.spec",
        "schema_spec_to_json_schema": "dsh_nb.tools.schema.spec",
        "validate_args": "dsh_nb.tools.schema.spec",
        "assert_supported_output_schema": "dsh_nb.tools.schema.structured",
        "validate_structured_value": "dsh_nb.tools.schema.structured",
        "spec_from_signature": "dsh_nb.tools.signature",
    },
)
