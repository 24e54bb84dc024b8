"""dsh_nb: a production-grade LLM tool pipeline for Jupyter.

The names below are design.md's public API, each imported on first use
from the module that defines it, so ``import dsh_nb`` in a script stays
light. Everything else is imported from its sub-package: the pipeline's
other names from :mod:`dsh_nb.tools`, cards from :mod:`dsh_nb.cards`,
evaluations from :mod:`dsh_nb.evals`. The notebook's helpers
(``dispatch``, the listener decorators, ``pending_approvals``; see
:mod:`dsh_nb.notebook`) also answer as ``dsh_nb.X`` in a cell, but are
not part of ``__all__``.
"""

# ruff: noqa: F401 - the type checkers' view of the names below, which
# are exported by the table: ``__all__`` is built from it, not written out.

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._labextension import (
    _jupyter_labextension_paths,
)
from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.cards import render_card
    from dsh_nb.mcp.client import McpConnection
    from dsh_nb.mcp.server import McpServer
    from dsh_nb.models import Chat
    from dsh_nb.notebook.extension import (
        call,
        load_ipython_extension,
        registry,
        unload_ipython_extension,
    )
    from dsh_nb.notebook.mcpdefaults import (
        connect_mcp,
        serve_mcp,
    )
    from dsh_nb.notebook.replay import replay
    from dsh_nb.tools import (
        AbortController,
        AbortSignal,
        Accept,
        Agent,
        Allow,
        ApprovalError,
        ApprovalRequest,
        ApprovalService,
        Ask,
        Block,
        Deny,
        DiffCallView,
        DiffResultView,
        FileDiff,
        FileLocation,
        GenericCallView,
        GenericResultView,
        HarnessError,
        OutputSchemaError,
        SchemaProp,
        SchemaSpec,
        SessionLog,
        TerminalCallView,
        TerminalResultView,
        TimeoutPolicy,
        ToolArgsError,
        ToolCallKind,
        ToolContext,
        ToolDefinition,
        ToolErrorInfo,
        ToolExecution,
        ToolExecutionInput,
        ToolExecutionResult,
        ToolNotFoundError,
        ToolPresenter,
        ToolRegistry,
        ToolTimeoutError,
        assert_supported_output_schema,
        current_tool_context,
        define_tool,
        schema_spec_to_json_schema,
        set_approval_policy,
        spec_from_signature,
        tool,
        validate_args,
        validate_structured_value,
    )

__version__ = "0.1.0"

_TOOLS = "dsh_nb.tools"
_KERNEL = "dsh_nb.notebook.extension"
_MCP = "dsh_nb.notebook.mcpdefaults"  # the kernel's registry when none is given

# design.md's "Public API (importable from dsh_nb)", in its order, then the
# second and third versions' names it gives as dsh_nb's: the one list.
_PUBLIC = {
    # Schema DSL
    "SchemaProp": _TOOLS,
    "SchemaSpec": _TOOLS,
    "schema_spec_to_json_schema": _TOOLS,
    "validate_args": _TOOLS,
    "ToolArgsError": _TOOLS,
    "spec_from_signature": _TOOLS,
    # Tools
    "define_tool": _TOOLS,
    "tool": _TOOLS,
    "ToolDefinition": _TOOLS,
    # Registry and scopes
    "ToolRegistry": _TOOLS,
    "Agent": _TOOLS,
    "SessionLog": _TOOLS,
    # Execution
    "ToolExecutionInput": _TOOLS,
    "ToolExecution": _TOOLS,
    "ToolExecutionResult": _TOOLS,
    "ToolErrorInfo": _TOOLS,
    # Decisions
    "Allow": _TOOLS,
    "Deny": _TOOLS,
    "Ask": _TOOLS,
    "Accept": _TOOLS,
    "Block": _TOOLS,
    # Errors (with the timeout and approval ones)
    "HarnessError": _TOOLS,
    "ToolNotFoundError": _TOOLS,
    "OutputSchemaError": _TOOLS,
    "ToolTimeoutError": _TOOLS,
    "ApprovalError": _TOOLS,
    # Approval
    "ApprovalService": _TOOLS,
    "ApprovalRequest": _TOOLS,
    "set_approval_policy": _TOOLS,
    # Timeouts
    "AbortController": _TOOLS,
    "AbortSignal": _TOOLS,
    "TimeoutPolicy": _TOOLS,
    # Structured output
    "assert_supported_output_schema": _TOOLS,
    "validate_structured_value": _TOOLS,
    # Presentation
    "GenericCallView": _TOOLS,
    "TerminalCallView": _TOOLS,
    "DiffCallView": _TOOLS,
    "GenericResultView": _TOOLS,
    "TerminalResultView": _TOOLS,
    "DiffResultView": _TOOLS,
    "FileLocation": _TOOLS,
    "FileDiff": _TOOLS,
    "ToolCallKind": _TOOLS,
    "ToolPresenter": _TOOLS,
    # Notebook
    "load_ipython_extension": _KERNEL,
    "unload_ipython_extension": _KERNEL,
    "registry": _KERNEL,
    "call": _KERNEL,
    "render_card": "dsh_nb.cards",
    # Second version: a model in the loop, MCP
    "Chat": "dsh_nb.models",
    "serve_mcp": _MCP,
    "connect_mcp": _MCP,
    "McpServer": "dsh_nb.mcp.server",
    "McpConnection": "dsh_nb.mcp.client",
    # Third version: a server's journal as cards
    "replay": "dsh_nb.notebook.replay",
    # Fourth version: a tool talks back while it runs
    "ToolContext": _TOOLS,
    "current_tool_context": _TOOLS,
}

__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_face(__name__, _PUBLIC, fallback="dsh_nb.notebook")
