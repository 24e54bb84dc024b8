"""The tool pipeline: pure Python plus jsonschema, no Jupyter imports.

Usable in scripts, servers and tests; ``dsh_nb.notebook`` builds the
notebook experience on top of it.

Module map, top floor first (each imports only from the floors below it;
``lint-imports`` holds the order, type-only imports included):
:mod:`~dsh_nb.tools.runner` (``CallRunner``, the one way a door runs a
call); :mod:`~.registry` (tools, scopes, guards, listener seams; it makes
each call's plan); :mod:`~.pipeline` (the stage engine: the driver handed a
:class:`~.pipeline.plan.CallPlan`, its call state, decisions, observers and
trace, the waterfall engine, result conversion, the approval seam);
:mod:`~.presenter` (a tool's cards or the contract's fallbacks);
:mod:`~.definition` (``define_tool``, ``@tool``); :mod:`~.signature`
(schemas and binding from Python signatures); :mod:`~.schema` (the DSL, raw
JSON Schema, the structured-output subset, the argument check);
:mod:`~.audit` (session logs, the journal) beside :mod:`~.running` (abort
signals, the timeout policy, worker threads); :mod:`~._restriction`,
:mod:`~._scopes` and :mod:`~.modeltext` (a result as a model reads it);
:mod:`~.values`, the floor (a call's values and its outcome, with Protocols
for what it needs from above); then :mod:`~.presentation` (the card
vocabulary), :mod:`~.errors`, :mod:`~.names`, :mod:`~.origin`,
:mod:`~.shown`, :mod:`~.surrogates`, :mod:`~.jsonvalue` and
:mod:`~._disposer` at the bottom.
"""

# ruff: noqa: F401 - the type checkers' view of the names below, which
# are exported by the table: ``__all__`` is built from it, not written out.

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
    from dsh_nb.tools.runner import CallAnswer, CallRunner, CallView, DoorCall
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
    from dsh_nb.tools.values.outcome import ToolOutcome
    from dsh_nb.tools.values.run import ToolRun


# The one list of this face: each public name and the module that defines
# it. ``__all__`` is built from it; the imports above are the type
# checkers' view of the same names (a test holds the two together).
_PUBLIC = {
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
    "ToolRun": "dsh_nb.tools.values.run",
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
    "CallAnswer": "dsh_nb.tools.runner",
    "CallRunner": "dsh_nb.tools.runner",
    "CallView": "dsh_nb.tools.runner",
    "DoorCall": "dsh_nb.tools.runner",
}

__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_face(__name__, _PUBLIC)
