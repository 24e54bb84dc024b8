"""``dsh_nb`` is design.md's public API: those names, from one table, lazily.

The list below is copied from design.md ("Public API (importable from
dsh_nb)", then the second and third versions' names it gives as dsh_nb's),
so a name added to or dropped from the package face fails here first.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import types

import pytest

import dsh_nb
import dsh_nb.notebook
import dsh_nb.tools

DESIGN = [
    # Schema DSL
    "SchemaProp",
    "SchemaSpec",
    "schema_spec_to_json_schema",
    "validate_args",
    "ToolArgsError",
    "spec_from_signature",
    # Tools
    "define_tool",
    "tool",
    "ToolDefinition",
    # Registry, scopes
    "ToolRegistry",
    "Agent",
    "SessionLog",
    # Execution
    "ToolExecutionInput",
    "ToolExecution",
    "ToolExecutionResult",
    "ToolErrorInfo",
    # Decisions
    "Allow",
    "Deny",
    "Ask",
    "Accept",
    "Block",
    # Errors, with the timeout and approval ones
    "HarnessError",
    "ToolNotFoundError",
    "OutputSchemaError",
    "ToolTimeoutError",
    "ApprovalError",
    # Approval
    "ApprovalService",
    "ApprovalRequest",
    "set_approval_policy",
    # Timeouts
    "AbortController",
    "AbortSignal",
    "TimeoutPolicy",
    # Structured output
    "assert_supported_output_schema",
    "validate_structured_value",
    # Presentation
    "GenericCallView",
    "TerminalCallView",
    "DiffCallView",
    "GenericResultView",
    "TerminalResultView",
    "DiffResultView",
    "FileLocation",
    "FileDiff",
    "ToolCallKind",
    "ToolPresenter",
    # Notebook
    "load_ipython_extension",
    "unload_ipython_extension",
    "registry",
    "call",
    "render_card",
    # Second version
    "Chat",
    "serve_mcp",
    "connect_mcp",
    "McpServer",
    "McpConnection",
    # Third version
    "replay",
    # Fourth version
    "ToolContext",
    "current_tool_context",
]


def test_all_is_design_list_once() -> None:
    assert len(set(DESIGN)) == len(DESIGN) == 57
    assert dsh_nb.__all__ == DESIGN
    assert set(DESIGN) <= set(dir(dsh_nb))


def test_star_import_gives_exactly_the_public_names() -> None:
    namespace: dict[str, object] = {}
    exec("from dsh_nb import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(DESIGN)


def test_other_pipeline_names_come_from_their_sub_package() -> None:
    for name in ("ABSENT", "Disposer", "ToolOutcome", "TraceRecord", "text_block"):
        assert name in dsh_nb.tools.__all__
        assert name not in dsh_nb.__all__
        with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
            getattr(dsh_nb, name)
    # Sub-packages answer as attributes, imported or not.
    assert dsh_nb.evals.__name__ == "dsh_nb.evals"


def test_notebook_helpers_answer_in_a_cell_but_are_not_public() -> None:
    for name in dsh_nb.notebook.__all__:
        assert name not in dsh_nb.__all__
        assert getattr(dsh_nb, name) is getattr(dsh_nb.notebook, name)
    assert dsh_nb.guard.__module__ == "dsh_nb.notebook.listeners"


def test_public_names_keep_the_module_that_defines_them() -> None:
    # Set lazily on first access, a borrowed ``__module__`` made a class's
    # name in messages depend on which door touched it first, and broke
    # pydantic's and typing's reading of string annotations: each keeps
    # its own.
    for name in DESIGN:
        value = getattr(dsh_nb, name)
        if isinstance(value, type | types.FunctionType):
            assert value.__module__.startswith("dsh_nb."), name
            # The notebook tests reload the extension's module, so its
            # functions are compared by name; the pipeline's classes by
            # identity, through pickle.
            assert hasattr(sys.modules[value.__module__], value.__name__), name
            if isinstance(value, type):
                assert pickle.loads(pickle.dumps(value)) is value


def test_import_dsh_nb_loads_only_the_face() -> None:
    code = (
        "import sys, dsh_nb\n"
        "print(sorted(m for m in sys.modules if m.startswith('dsh_nb')))\n"
        "dsh_nb.ToolRegistry\n"
        "bad = ('IPython', 'ipywidgets', 'pydantic', 'jsonschema', 'dsh_nb.notebook')\n"
        "print([m for m in bad if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["['dsh_nb', 'dsh_nb._labextension', 'dsh_nb._lazy']", "[]"]


def test_one_lazy_loader_serves_every_face() -> None:
    import dsh_nb.mcp

    for face in (dsh_nb, dsh_nb.mcp, dsh_nb.notebook):
        assert face.__getattr__.__module__ == "dsh_nb._lazy"
    with pytest.raises(AttributeError, match=r"module 'dsh_nb\.mcp' has no attribute"):
        dsh_nb.mcp.McpServr  # noqa: B018 - the lookup is the test
