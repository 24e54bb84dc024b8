"""Wire formats and ``dispatch`` of a recorded OpenAI-style assistant message."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from ipshell import run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.models import wire
from dsh_nb.notebook import extension
from dsh_nb.tools.values.execution import ToolExecutionResult, text_result

SCHEMAS = [
    {
        "name": "add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "number"}},
            "required": ["a"],
        },
    }
]

# A recorded assistant message (Chat Completions) asking for four calls.
RECORDED: dict[str, Any] = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_ok",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
        },
        {
            "id": "call_denied",
            "type": "function",
            "function": {"name": "shell", "arguments": '{"cmd": "rm -rf /"}'},
        },
        {
            "id": "call_broken",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2,'},
        },
        {
            "id": "call_context",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 40, "b": 2}'},
        },
    ],
}

TOOLS = '''%%tool
def add(a: int, b: int = 0) -> str:
    """Add two integers."""
    return str(a + b)
'''

SHELL = '''%%tool --deny
def shell(cmd: str) -> str:
    """Run a shell command."""
    raise AssertionError("never runs")
'''

CONTEXT = """
import dsh_nb.notebook.extension as ext
from dsh_nb.tools.values.execution import Accept

@ext.post_execute
def remind(execution, result, next):
    if execution.arguments.get("a") == 40:
        return Accept(additional_context={
            "content": [{"type": "text", "text": "The answer is 42."}],
            "source": {"kind": "plugin", "plugin": "test"},
        })
    return next()
"""


# --- wire ----------------------------------------------------------------------------


def test_openai_and_anthropic_tool_formats() -> None:
    openai = wire.to_openai_tools(SCHEMAS)
    assert openai == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers.",
                "parameters": SCHEMAS[0]["parameters"],
            },
        }
    ]
    anthropic = wire.to_anthropic_tools(SCHEMAS)
    assert anthropic == [
        {
            "name": "add",
            "description": "Add two integers.",
            "input_schema": SCHEMAS[0]["parameters"],
        }
    ]
    anthropic[0]["input_schema"]["required"].append("b")
    assert SCHEMAS[0]["parameters"]["required"] == ["a"]  # copies, not views
    assert json.loads(json.dumps(openai)) == openai


def test_parse_tool_calls_shapes() -> None:
    from_dict = wire.parse_tool_calls(RECORDED)
    from_list = wire.parse_tool_calls(RECORDED["tool_calls"])
    sdk = SimpleNamespace(
        tool_calls=[
            SimpleNamespace(
                id=c["id"],
                type="function",
                function=SimpleNamespace(**c["function"]),
            )
            for c in RECORDED["tool_calls"]
        ]
    )
    assert from_dict == from_list == wire.parse_tool_calls(sdk)
    assert [c.call_id for c in from_dict] == [
        "call_ok",
        "call_denied",
        "call_broken",
        "call_context",
    ]
    assert from_dict[0].arguments == {"a": 2, "b": 3} and from_dict[0].error is None
    broken = from_dict[2]
    assert broken.arguments == '{"a": 2,'
    assert broken.error == (
        "Error: tool call arguments are not valid JSON: "
        "Expecting property name enclosed in double quotes at line 1, column 9"
    )
    assert wire.parse_tool_calls({"role": "assistant", "content": "hi"}) == []
    assert wire.parse_tool_calls(SimpleNamespace(tool_calls=None)) == []


def test_parse_tool_calls_edge_cases() -> None:
    [empty, constant, no_id, no_name] = wire.parse_tool_calls(
        [
            {"id": "a", "function": {"name": "t", "arguments": ""}},
            {"id": "b", "function": {"name": "t", "arguments": '{"x": NaN}'}},
            {"function": {"name": "t", "arguments": {"already": "decoded"}}},
            {"id": "d", "function": {"arguments": "{}"}},
        ]
    )
    assert empty.arguments == {} and empty.error is None
    assert constant.error is not None and "NaN is not a JSON value" in constant.error
    assert no_id.call_id == "call_2" and no_id.arguments == {"already": "decoded"}
    assert no_name.error == "Error: tool call has no function name"
    with pytest.raises(TypeError, match="not a str"):
        wire.parse_tool_calls('{"tool_calls": []}')
    with pytest.raises(TypeError, match="got int"):
        wire.parse_tool_calls(3)


def test_messages() -> None:
    result = ToolExecutionResult(
        call_id="c",
        content=[{"type": "text", "text": "a"}, {"type": "image", "data": "x"}],
        is_error=False,
    )
    assert wire.tool_message("c", result) == {
        "role": "tool",
        "tool_call_id": "c",
        "content": 'a\n{"type":"image","data":"x"}',
    }
    plain = text_result("d", "ok", is_error=False)
    assert wire.context_message([plain]) is None
    with_context = [
        ToolExecutionResult(
            call_id=str(i),
            content=[],
            is_error=False,
            additional_context={"content": [{"type": "text", "text": text}]},
        )
        for i, text in enumerate(["one", "two"])
    ]
    assert wire.context_message([plain, *with_context]) == {
        "role": "user",
        "content": "one\n\ntwo",
    }


# --- dispatch ---------------------------------------------------------------------------


def test_dispatch_a_recorded_message(ip: InteractiveShell) -> None:
    run(ip, TOOLS)
    run(ip, SHELL)
    run(ip, CONTEXT)
    ip.user_ns["message"] = RECORDED
    cell = run(ip, "messages = await ext.dispatch(message)")
    assert cell.error is None
    assert ip.user_ns["messages"] == [
        {"role": "tool", "tool_call_id": "call_ok", "content": "5"},
        {
            "role": "tool",
            "tool_call_id": "call_denied",
            "content": 'Error: tool "shell" is denied by %tool_policy',
        },
        {
            "role": "tool",
            "tool_call_id": "call_broken",
            "content": "Error: tool call arguments are not valid JSON: "
            "Expecting property name enclosed in double quotes at line 1, column 9",
        },
        {"role": "tool", "tool_call_id": "call_context", "content": "42"},
        {"role": "user", "content": "The answer is 42."},
    ]
    finals = cell.final_cards()
    assert [(c["callId"], c["status"]) for c in finals.values()] == [
        ("call_ok", "done"),
        ("call_denied", "denied"),
        ("call_broken", "error"),
        ("call_context", "done"),
    ]
    assert list(finals.values())[2]["call"]["rawInput"] == '{"a": 2,'
    log = extension.current_state().agent.session
    # The calls run concurrently, as a Chat runs them: each is journaled
    # once, in the order they settled.
    assert sorted(e["data"]["callId"] for e in log.of_type("tool/result")) == [
        "call_broken",
        "call_context",
        "call_denied",
        "call_ok",
    ]


def test_dispatch_accepts_an_sdk_object(ip: InteractiveShell) -> None:
    run(ip, TOOLS)
    ip.user_ns["message"] = SimpleNamespace(
        role="assistant",
        tool_calls=[
            SimpleNamespace(
                id="x1",
                type="function",
                function=SimpleNamespace(name="add", arguments='{"a": 1}'),
            )
        ],
    )
    run(ip, "import dsh_nb.notebook.extension as ext")
    run(ip, "messages = await ext.dispatch(message)")
    assert ip.user_ns["messages"] == [
        {"role": "tool", "tool_call_id": "x1", "content": "1"}
    ]


def test_dispatch_with_no_tool_calls(ip: InteractiveShell) -> None:
    run(ip, "import dsh_nb.notebook.extension as ext")
    cell = run(
        ip, "messages = await ext.dispatch({'role': 'assistant', 'content': 'hi'})"
    )
    assert ip.user_ns["messages"] == [] and cell.outputs == ()


# An Anthropic Messages assistant message (anthropic-version 2023-06-01 shape)
# asking for the same four calls as RECORDED, as tool_use blocks.
RECORDED_ANTHROPIC: dict[str, Any] = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Let me run these."},
        {
            "type": "tool_use",
            "id": "toolu_ok",
            "name": "add",
            "input": {"a": 2, "b": 3},
        },
        {
            "type": "tool_use",
            "id": "toolu_denied",
            "name": "shell",
            "input": {"cmd": "ls"},
        },
        {
            "type": "tool_use",
            "id": "toolu_context",
            "name": "add",
            "input": {"a": 40, "b": 2},
        },
    ],
    "stop_reason": "tool_use",
}


def test_dispatch_an_anthropic_message(ip: InteractiveShell) -> None:
    run(ip, TOOLS)
    run(ip, SHELL)
    run(ip, CONTEXT)
    ip.user_ns["message"] = RECORDED_ANTHROPIC
    cell = run(ip, "blocks = await ext.dispatch(message)")
    assert cell.error is None
    assert ip.user_ns["blocks"] == [
        {"type": "tool_result", "tool_use_id": "toolu_ok", "content": "5"},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_denied",
            "content": 'Error: tool "shell" is denied by %tool_policy',
            "is_error": True,
        },
        {"type": "tool_result", "tool_use_id": "toolu_context", "content": "42"},
        {"type": "text", "text": "The answer is 42."},
    ]
    assert [(c["callId"], c["status"]) for c in cell.final_cards().values()] == [
        ("toolu_ok", "done"),
        ("toolu_denied", "denied"),
        ("toolu_context", "done"),
    ]


def test_dispatch_an_anthropic_sdk_message(ip: InteractiveShell) -> None:
    from anthropic.types import Message

    run(ip, TOOLS)
    ip.user_ns["message"] = Message.model_validate(
        {
            **RECORDED_ANTHROPIC,
            "model": "m",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": RECORDED_ANTHROPIC["content"][:2],
            "stop_sequence": None,
        }
    )
    run(ip, "import dsh_nb.notebook.extension as ext")
    run(ip, "blocks = await ext.dispatch(message.content)")
    assert ip.user_ns["blocks"] == [
        {"type": "tool_result", "tool_use_id": "toolu_ok", "content": "5"}
    ]
