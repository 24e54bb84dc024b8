"""``ToolRegistry.plan`` and ``ToolRegistry.registrations``: the public views.

The plan is what one call runs through, fixed when it starts; the
registrations are what the export replays. Both read the same listener
lists, so both are checked for order (first registered outermost, a
``prepend`` in front), scopes and disposal.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.pipeline.plan import CallPlan, Registration
from dsh_nb.tools.registry import ToolRegistry


def pre_a(ex: Any, next_: Any) -> Any:
    return next_()


def pre_b(ex: Any, next_: Any) -> Any:
    return next_()


def pre_front(ex: Any, next_: Any) -> Any:
    return next_()


def wrap(ex: Any, next_: Any) -> Any:
    return next_()


def post(ex: Any, result: Any, next_: Any) -> Any:
    return next_()


def observe(ex: Any, result: Any) -> None:
    return None


def tracer(ex: Any, result: Any, records: Any) -> None:
    return None


def no_rm(ex: Any) -> str | None:
    return None


def test_the_plan_holds_each_seam_in_run_order() -> None:
    registry = ToolRegistry()
    registry.on_pre_execute(pre_a)
    registry.on_pre_execute(pre_b)
    registry.on_pre_execute(pre_front, prepend=True)
    registry.on_execute(wrap)
    registry.on_post_execute(post)
    registry.on_result(observe)
    registry.on_trace(tracer)
    assert registry.plan() == CallPlan(
        pre_execute=(pre_front, pre_a, pre_b),
        execute=(wrap,),
        post_execute=(post,),
        result=(observe,),
        trace=(tracer,),
    )


def test_a_plan_is_frozen_and_outlives_later_registrations() -> None:
    registry = ToolRegistry()
    dispose = registry.on_pre_execute(pre_a)
    kept = registry.plan()
    with pytest.raises(dataclasses.FrozenInstanceError):
        kept.pre_execute = ()  # type: ignore[misc]
    registry.on_pre_execute(pre_b)
    dispose()
    assert kept.pre_execute == (pre_a,)  # what a running call keeps
    assert registry.plan().pre_execute == (pre_b,)  # what the next call gets


def test_a_scoped_listener_is_in_its_scope_plan_only() -> None:
    registry = ToolRegistry()
    mine, other = Agent("mine"), Agent("other")
    registry.on_pre_execute(pre_a)
    registry.on_pre_execute(pre_b, scope=mine)
    assert registry.plan(mine).pre_execute == (pre_a, pre_b)
    assert registry.plan(other).pre_execute == (pre_a,)
    assert registry.plan().pre_execute == (pre_a,)
    registry.dispose_scope(mine)
    assert registry.plan(mine).pre_execute == (pre_a,)


def test_registrations_list_every_seam_with_scope_in_order() -> None:
    registry = ToolRegistry()
    agent = Agent("a")
    registry.on_pre_execute(pre_a)
    registry.on_pre_execute(pre_b, scope=agent)
    registry.on_pre_execute(pre_front, prepend=True)
    registry.on_execute(wrap, scope=agent)
    registry.on_post_execute(post)
    registry.on_result(observe)
    registry.on_trace(tracer)
    registry.guard(no_rm, scope=agent)
    registry.guard(no_rm)
    registry.on_change(lambda: None)  # not part of a call: not listed
    assert registry.registrations() == (
        Registration(seam="pre_execute", fn=pre_front),
        Registration(seam="pre_execute", fn=pre_a),
        Registration(seam="pre_execute", fn=pre_b, scope=agent),
        Registration(seam="execute", fn=wrap, scope=agent),
        Registration(seam="post_execute", fn=post),
        Registration(seam="result", fn=observe),
        Registration(seam="trace", fn=tracer),
        Registration(seam="guard", fn=no_rm),
        Registration(seam="guard", fn=no_rm, scope=agent),
    )


def test_disposed_registrations_are_no_longer_listed() -> None:
    registry = ToolRegistry()
    agent = Agent("a")
    undo_pre = registry.on_pre_execute(pre_a)
    undo_guard = registry.guard(no_rm)
    registry.on_result(observe, scope=agent)
    undo_pre()
    undo_guard()
    assert registry.registrations() == (
        Registration(seam="result", fn=observe, scope=agent),
    )
    registry.dispose_scope(agent)
    assert registry.registrations() == ()


def test_a_guard_added_while_a_call_awaits_approval_applies_to_it() -> None:
    import asyncio

    from dsh_nb.tools import Ask, ToolExecutionInput, define_tool
    from dsh_nb.tools.pipeline.approval import ApprovalService

    registry = ToolRegistry()
    registry.register(
        define_tool(name="t", description="d", parameters={}, execute=lambda a: "ran")
    )
    registry.on_pre_execute(lambda ex, next_: Ask("check"))
    service = ApprovalService()
    registry.approval = service
    agent = Agent("a")

    async def answer(request: Any, next_: Any) -> str:
        registry.guard(lambda ex: "closed meanwhile", scope=agent)
        return "allowed-once"

    service.on_request(answer)
    assert registry.guards_for(agent) == ()
    agent.session.start_turn()
    result = asyncio.run(
        registry.execute(
            ToolExecutionInput(call_id="c1", name="t", arguments={}, agent=agent)
        )
    )
    assert result.is_error and "closed meanwhile" in result.content[0]["text"]
    assert len(registry.guards_for(agent)) == 1 and registry.guards_for() == ()
