"""dsh_nb: a production-grade LLM tool pipeline for Jupyter.

The pipeline (schemas, registry, policies, approvals, timeouts, cards) lives
in :mod:`dsh_nb.tools` and has no Jupyter imports. The notebook names below
(``registry``, ``call``, ``dispatch``, the listener decorators and
``%load_ext dsh_nb``) are imported on first use, so ``import dsh_nb`` in a
script stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dsh_nb._labextension import (
    _jupyter_labextension_paths as _jupyter_labextension_paths,
)
from dsh_nb.tools._disposer import Disposer
from dsh_nb.tools.approval import (
    ApprovalRequest,
    ApprovalService,
    effective_policy,
    set_approval_policy,
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
from dsh_nb.tools.pipeline import TraceRecord
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
from dsh_nb.tools.schema import (
    SchemaProp,
    SchemaSpec,
    schema_spec_to_json_schema,
    validate_args,
)
from dsh_nb.tools.session import Agent, SessionLog
from dsh_nb.tools.signature import spec_from_signature
from dsh_nb.tools.structured import (
    assert_supported_output_schema,
    validate_structured_value,
)
from dsh_nb.tools.timeout import (
    AbortController,
    AbortError,
    AbortSignal,
    TimeoutPolicy,
    TimeoutReason,
)

if TYPE_CHECKING:
    from dsh_nb.notebook.extension import (
        call,
        dispatch,
        guard,
        load_ipython_extension,
        on_result,
        post_execute,
        pre_execute,
        registry,
        remove_listener,
        replay,
        unload_ipython_extension,
    )
    from dsh_nb.notebook.render import render_card

__version__ = "0.1.0"

_NOTEBOOK = {
    "call": "dsh_nb.notebook.extension",
    "dispatch": "dsh_nb.notebook.extension",
    "guard": "dsh_nb.notebook.extension",
    "load_ipython_extension": "dsh_nb.notebook.extension",
    "on_result": "dsh_nb.notebook.extension",
    "post_execute": "dsh_nb.notebook.extension",
    "pre_execute": "dsh_nb.notebook.extension",
    "remove_listener": "dsh_nb.notebook.extension",
    "registry": "dsh_nb.notebook.extension",
    "render_card": "dsh_nb.notebook.render",
    "replay": "dsh_nb.notebook.extension",
    "unload_ipython_extension": "dsh_nb.notebook.extension",
}


def __getattr__(name: str) -> Any:
    # Notebook names import IPython and ipywidgets: only when asked for.
    module = _NOTEBOOK.get(name)
    if module is None:
        raise AttributeError(f"module 'dsh_nb' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AbortController",
    "AbortError",
    "AbortSignal",
    "ABSENT",
    "Accept",
    "Agent",
    "Allow",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalService",
    "Ask",
    "assert_supported_output_schema",
    "Block",
    "call",
    "define_tool",
    "Deny",
    "DiffCallView",
    "DiffResultView",
    "dispatch",
    "Disposer",
    "effective_policy",
    "FileDiff",
    "FileLocation",
    "FrozenDict",
    "FrozenList",
    "GenericCallView",
    "GenericResultView",
    "guard",
    "HarnessError",
    "ListenerContractError",
    "load_ipython_extension",
    "on_result",
    "OutputSchemaError",
    "post_execute",
    "pre_execute",
    "remove_listener",
    "registry",
    "render_card",
    "replay",
    "schema_spec_to_json_schema",
    "SchemaProp",
    "SchemaSpec",
    "SessionLog",
    "set_approval_policy",
    "spec_from_signature",
    "TerminalCallView",
    "TerminalResultView",
    "text_block",
    "TimeoutPolicy",
    "TimeoutReason",
    "tool",
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
    "ToolPresenter",
    "ToolRegistry",
    "ToolResult",
    "ToolResultView",
    "ToolTimeoutError",
    "TraceRecord",
    "unload_ipython_extension",
    "validate_args",
    "validate_structured_value",
]
