"""The tool pipeline: pure Python plus jsonschema, no Jupyter imports.

Usable in scripts, servers and tests; ``dsh_nb.notebook`` builds the
notebook experience on top of it.
"""

from __future__ import annotations

from dsh_nb.tools._disposer import Disposer
from dsh_nb.tools.audit.approval import (
    ApprovalRequest,
    ApprovalService,
    effective_policy,
    set_approval_policy,
)
from dsh_nb.tools.audit.session import Agent, SessionLog
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
from dsh_nb.tools.execution import (
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
from dsh_nb.tools.jsonvalue import ABSENT, FrozenDict, FrozenList
from dsh_nb.tools.outcome import ToolOutcome, ToolRun
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

__all__ = [
    "ABSENT",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "Accept",
    "Agent",
    "Allow",
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
    "SchemaSpec",
    "SessionLog",
    "TerminalCallView",
    "TerminalResultView",
    "TimeoutPolicy",
    "TimeoutReason",
    "ToolArgsError",
    "ToolCallKind",
    "ToolCallView",
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
