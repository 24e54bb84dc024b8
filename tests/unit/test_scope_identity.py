"""Scopes are compared by identity everywhere (contract §0).

The agents here compare equal and hash alike by name, and count every
``__eq__``/``__hash__`` call: the registry must keep them apart in layers,
restrictions, listeners, guards and approval answerers, without asking.
"""

from __future__ import annotations

from typing import Any

from dsh_nb.tools import (
    Agent,
    ApprovalService,
    Ask,
    ToolDefinition,
    ToolExecutionInput,
    ToolRegistry,
)

calls: list[str] = []


class EqualAgent(Agent):
    """An agent whose equality is its name (a tempting but wrong design)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        calls.append("eq")
        return isinstance(other, EqualAgent) and other.name == self.name

    def __hash__(self) -> int:
        calls.append("hash")
        return hash(self.name)


def _make(name: str, text: str) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description="",
        parameters={"type": "object", "properties": {}},
        execute=lambda args, ex: text,
    )


async def _text(reg: ToolRegistry, name: str, agent: Agent) -> str:
    agent.session.start_turn()
    result = await reg.execute(
        ToolExecutionInput(call_id="c1", name=name, arguments={}, agent=agent)
    )
    agent.session.end_turn()
    return result.text


async def test_equal_agents_are_two_scopes_everywhere() -> None:
    one, two = EqualAgent("twin"), EqualAgent("twin")
    assert one == two and hash(one) == hash(two)
    calls.clear()
    reg = ToolRegistry()
    reg.register(_make("echo", "global"))
    reg.register(_make("mine", "global mine"))
    # layers: only `one` shadows echo
    reg.register(_make("echo", "one's echo"), scope=one)
    # restrictions: only `one` loses `mine`
    reg.restrict(one, deny=["mine"])
    # guards and listeners: only `two` is guarded / observed
    reg.guard(lambda ex: "two is guarded" if ex.name == "mine" else None, scope=two)
    seen: list[Any] = []
    reg.on_result(lambda ex, result: seen.append(ex.agent), scope=two)
    # approval answerers: only `one` is allowed
    reg.approval = ApprovalService()
    reg.approval.on_request(lambda request, next_: "allowed-once", scope=one)
    reg.on_pre_execute(
        lambda ex, next_: Ask() if ex.name == "echo" else next_(), prepend=True
    )

    assert reg.get("echo", one).execute({}, None) == "one's echo"  # type: ignore[union-attr]
    assert reg.get("echo", two).execute({}, None) == "global"  # type: ignore[union-attr]
    assert reg.get("mine", one) is None and reg.get("mine", two) is not None
    assert sorted(s["name"] for s in reg.schemas(one)) == ["echo"]
    assert sorted(s["name"] for s in reg.schemas(two)) == ["echo", "mine"]

    assert await _text(reg, "echo", one) == "one's echo"
    assert await _text(reg, "echo", two) == (
        'Error: tool "echo" requires approval, but no approval channel is available'
    )
    assert await _text(reg, "mine", two) == "Error: two is guarded"
    assert await _text(reg, "mine", one) == 'Error: unknown tool "mine"'
    assert [agent is two for agent in seen] == [True, True]

    reg.dispose_scope(one)
    assert reg.get("echo", one).execute({}, None) == "global"  # type: ignore[union-attr]
    assert await _text(reg, "mine", two) == "Error: two is guarded"
    assert calls == [], "the registry asked an agent's __eq__/__hash__"
