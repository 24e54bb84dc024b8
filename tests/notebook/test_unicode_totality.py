"""Any text, hostile objects and deep values through the notebook's entry points.

``dsh_nb.call``, ``%call``, ``dispatch`` and ``render_card`` must be as
total as ``registry.execute``: never raise, and never produce a display,
a journal line or a model message that cannot be encoded. "Encoded" is
what jupyter_client does with every message: ``json.dumps`` then UTF-8.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ipshell import Cell, fresh_shell, run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.models import wire
from dsh_nb.notebook import extension
from dsh_nb.tools.jsonvalue import to_plain
from dsh_nb.tools.values.execution import ToolExecutionResult

any_text = st.text(st.characters(exclude_categories=()), max_size=10)
json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), any_text),
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(any_text, kids, max_size=3)
    ),
    max_leaves=10,
)

ECHO = """
import dsh_nb
from dsh_nb.tools import define_tool

def _echo(args):
    t = args.get("t")
    return [{"type": "text", "text": str(t)}, {"type": "json", "value": t}]

_echo_dispose = dsh_nb.registry().register(define_tool(
    name="echo", description="Return what it was given.",
    parameters={"type": "object"}, execute=_echo,
))
"""

SHOUT = """%%tool
def shout(t: str) -> str:
    '''Return the text it was given.'''
    return t
"""


class RaisingRepr:
    """An argument whose repr() and str() raise ``exc``."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def __repr__(self) -> str:
        raise self.exc

    __str__ = __repr__


def deep_dict(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    cur = root
    for _ in range(depth):
        cur["a"] = {}
        cur = cur["a"]
    return root


@pytest.fixture(scope="module")
def ip() -> Iterator[InteractiveShell]:
    for shell in fresh_shell():
        run(shell, ECHO)
        run(shell, SHOUT)
        yield shell
        # The whole journal, through the writer itself, once every test has
        # added to it (each example checked only what it added: see below).
        journal().to_jsonl().encode("utf-8")


def assert_sendable(cell: Cell) -> None:
    """Every display and update of the cell encodes as a kernel message."""
    for out in cell.outputs:
        json.dumps(
            {"data": out["data"], "metadata": out["metadata"]}, ensure_ascii=False
        ).encode("utf-8")


def journal() -> Any:
    return extension.current_state().agent.session


def assert_journal_writes(since: int = 0) -> None:
    """Each event recorded from index ``since`` on encodes as its JSON line.

    One line an event, as ``to_jsonl`` writes them: an example checks what
    it added, not the whole journal again (that grew with every example
    and was most of this file's time); the fixture writes it all at the end.
    """
    for event in journal().events[since:]:
        json.dumps(to_plain(event), ensure_ascii=False).encode("utf-8")


def call_cell(ip: InteractiveShell, **args: Any) -> tuple[Cell, Any]:
    ip.user_ns["_args"] = args
    cell = run(ip, "import dsh_nb\n_r = await dsh_nb.call('echo', **_args)")
    return cell, ip.user_ns.get("_r")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_like)
def test_call_is_total_for_any_unicode(ip: InteractiveShell, value: Any) -> None:
    ip.user_ns.pop("_r", None)
    since = len(journal())
    cell, result = call_cell(ip, t=value)
    assert cell.error is None, cell.error
    assert isinstance(result, ToolExecutionResult)
    assert cell.outputs[-1]["data"]["text/plain"].startswith("[done] echo")
    assert_sendable(cell)
    assert_journal_writes(since)


@pytest.mark.parametrize(
    "value",
    [
        RaisingRepr(RuntimeError("no repr")),
        RaisingRepr(SystemExit(3)),
        RaisingRepr(KeyboardInterrupt()),
        deep_dict(10_000),
        deep_dict(300),
        {"k": RaisingRepr(SystemExit(0))},
        "a\ud800b",
        {"\udcff": "\ud83d"},
    ],
    ids=[
        "repr-RuntimeError",
        "repr-SystemExit",
        "repr-KeyboardInterrupt",
        "dict-10000-deep",
        "dict-300-deep",
        "nested-SystemExit",
        "surrogate",
        "surrogate-key",
    ],
)
def test_call_is_as_total_as_execute(ip: InteractiveShell, value: Any) -> None:
    ip.user_ns.pop("_r", None)
    cell, result = call_cell(ip, t=value)
    assert cell.error is None, cell.error
    direct = asyncio.run(_execute(value))
    assert isinstance(result, ToolExecutionResult)
    assert result.is_error == direct.is_error
    assert result.text == direct.text
    # The JSON part may be left out for arguments that are not JSON (its
    # renderErrors says so); the text part always renders.
    status = "error" if direct.is_error else "done"
    assert cell.outputs[-1]["data"]["text/plain"].startswith(f"[{status}] echo")
    assert_sendable(cell)
    assert_journal_writes()


async def _execute(value: Any) -> ToolExecutionResult:
    from dsh_nb.tools.values.execution import ToolExecutionInput

    registry = extension.registry()
    return await registry.execute(
        ToolExecutionInput(call_id="direct", name="echo", arguments={"t": value})
    )


def test_a_tool_returning_a_surrogate_finishes_its_card(ip: InteractiveShell) -> None:
    cell = run(ip, '_r = await __import__("dsh_nb").call("shout", t="a\\ud800b")')
    assert cell.error is None
    assert ip.user_ns["_r"].text == "a\ud800b"  # the caller's value, unchanged
    [card] = cell.final_cards().values()
    assert card["status"] == "done"
    assert card["result"]["content"] == [{"type": "text", "text": "a[U+D800]b"}]
    assert_sendable(cell)
    last = extension.current_state().agent.session.of_type("tool/result")[-1]
    assert last["data"]["result"]["content"][0]["text"] == "a[U+D800]b"


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_like)
def test_percent_call_is_total_for_any_unicode(
    ip: InteractiveShell, value: Any
) -> None:
    body = json.dumps({"t": value})  # ASCII: surrogates travel as \\udXXX
    cell = run(ip, f"%%call echo\n{body}\n")
    if any(isinstance(v, str) and _has_lone(v) for v in _strings(value)):
        assert cell.error is not None and "lone surrogate" in str(cell.error)
        assert cell.cards() == []
    else:
        assert cell.error is None, cell.error
        assert cell.statuses()[-1] == "done"
    assert_sendable(cell)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_like, call_id=any_text)
def test_dispatch_is_total_for_any_unicode(
    ip: InteractiveShell, value: Any, call_id: str
) -> None:
    message = {
        "tool_calls": [
            {
                "id": call_id or "c1",
                "function": {"name": "echo", "arguments": json.dumps({"t": value})},
            }
        ]
    }
    ip.user_ns["_m"] = message
    since = len(journal())
    cell = run(ip, "import dsh_nb\n_out = await dsh_nb.dispatch(_m)")
    assert cell.error is None, cell.error
    [reply] = ip.user_ns["_out"]
    json.dumps(reply, ensure_ascii=False).encode("utf-8")
    if any(_has_lone(s) for s in _strings(value)):
        assert "lone surrogate" in reply["content"]
        assert reply["content"].startswith("Error: tool call arguments")
    assert_sendable(cell)
    assert_journal_writes(since)


def test_dispatch_answers_half_an_emoji_with_an_error(ip: InteractiveShell) -> None:
    ip.user_ns["_m"] = [
        {"id": "c1", "function": {"name": "shout", "arguments": '{"t": "\\ud83d"}'}},
        {
            "id": "c2",
            "function": {"name": "shout", "arguments": '{"t": "\\ud83d\\ude00"}'},
        },
    ]
    cell = run(ip, "import dsh_nb\n_out = await dsh_nb.dispatch(_m)")
    assert cell.error is None
    half, whole = ip.user_ns["_out"]
    assert half == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "Error: tool call arguments are not valid JSON: the string at "
        "$.t holds a lone surrogate (half of a UTF-16 pair); send whole characters",
    }
    assert whole["content"] == "\U0001f600"
    statuses = [c["status"] for c in cell.final_cards().values()]
    assert statuses == ["error", "done"]


def test_wire_messages_escape_what_they_cannot_send() -> None:
    from dsh_nb.tools.values.execution import text_result

    message = wire.tool_message(
        "id\ud800", text_result("id\ud800", "x\udfffy", is_error=False)
    )
    assert message == {
        "role": "tool",
        "tool_call_id": "id[U+D800]",
        "content": "x[U+DFFF]y",
    }
    tools = wire.to_openai_tools(
        [{"name": "t", "description": "d\ud800", "parameters": {"type": "object"}}]
    )
    assert tools[0]["function"]["description"] == "d[U+D800]"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _has_lone(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)
