"""Helpers of the pipeline contract tests (``test_pipeline_*.py``).

Exact texts and shapes the contract pins, and small builders of inputs,
arguments and definitions; the ``registry``, ``agent`` and ``other``
fixtures are in this folder's ``conftest.py``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.values.execution import (
    ToolExecutionInput,
    ToolExecutionResult,
)

ARGS_NOT_JSON = "Error: tool execution arguments must be losslessly JSON-serializable"
RESULT_NOT_JSON = "Error: tool result must be losslessly JSON-serializable"
CONTRACT = {"name": "ListenerContractError", "code": "LISTENER_CONTRACT"}
AC = {
    "content": [{"type": "text", "text": "remember this"}],
    "source": {"kind": "plugin", "plugin": "test"},
}
AC2 = {
    "content": [{"type": "text", "text": "other context"}],
    "source": {"kind": "plugin", "plugin": "other"},
}


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


def error_json(message: str, call_id: str = "c1", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "callId": call_id,
        "content": [text(message)],
        "isError": True,
    }
    out.update(extra)
    return out


def ok_json(message: str = "ok", call_id: str = "c1") -> dict[str, Any]:
    return {"callId": call_id, "content": [text(message)], "isError": False}


class FakeSignal:
    """An opaque signal object; the registry must only pass it through."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.aborted = False
        self.reason = None

    def __repr__(self) -> str:
        return f"FakeSignal({self.label!r})"


def make_def(name: str = "echo", execute: Any = None) -> ToolDefinition:
    async def body(args: Any, execution: Any) -> Any:
        return [text("ok")]

    return ToolDefinition(
        name=name,
        description=f"the {name} tool",
        parameters={"type": "object", "properties": {}},
        execute=execute if execute is not None else body,
    )


def inp(
    name: str = "echo",
    arguments: Any = None,
    *,
    call_id: str = "c1",
    agent: Agent | None = None,
    parent: Any = None,
    signal: Any = None,
) -> ToolExecutionInput:
    return ToolExecutionInput(
        call_id=call_id,
        name=name,
        arguments={} if arguments is None else arguments,
        agent=agent,
        parent=parent,
        signal=signal,
    )


def err(result: ToolExecutionResult) -> Any:
    return result.to_json().get("error")


def only_text(result: ToolExecutionResult) -> str:
    assert len(result.content) == 1
    value: str = result.content[0]["text"]
    return value


class DictSub(dict):  # type: ignore[type-arg]
    pass


class ListSub(list):  # type: ignore[type-arg]
    pass


def cycle_dict() -> Any:
    d: dict[str, Any] = {}
    d["self"] = d
    return d


def cycle_list() -> Any:
    lst: list[Any] = []
    lst.append({"back": lst})
    return lst


class CountingInput:
    """A duck-typed input whose fields count reads and change on re-read."""

    def __init__(self, **values: list[Any]) -> None:
        self.values = values
        self.reads: Counter[str] = Counter()

    def _read(self, key: str) -> Any:
        self.reads[key] += 1
        seq = self.values[key]
        return seq[min(self.reads[key], len(seq)) - 1]

    @property
    def call_id(self) -> Any:
        return self._read("call_id")

    @property
    def name(self) -> Any:
        return self._read("name")

    @property
    def arguments(self) -> Any:
        return self._read("arguments")

    @property
    def agent(self) -> Any:
        return self._read("agent")

    @property
    def parent(self) -> Any:
        return self._read("parent")

    @property
    def signal(self) -> Any:
        return self._read("signal")


class ExplodingInput(CountingInput):
    def __init__(self, error: BaseException, **values: list[Any]) -> None:
        super().__init__(**values)
        self.error = error

    @property
    def arguments(self) -> Any:
        self.reads["arguments"] += 1
        raise self.error


def counting_values(agent: Agent, other: Agent, arguments: list[Any]) -> Any:
    return {
        "call_id": ["c1", "c2"],
        "name": ["echo", "decoy"],
        "agent": [agent, other],
        "parent": ["parent-1", "parent-2"],
        "signal": [FakeSignal("s1"), FakeSignal("s2")],
        "arguments": arguments,
    }
