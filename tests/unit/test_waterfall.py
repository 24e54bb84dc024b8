"""The waterfall engine on its own, as pluggy tests ``_multicall`` directly.

``run_waterfall(listeners, payload, base, check, who)``: the first listener
is outermost, each ``next()`` runs the next one and the innermost runs the
base; listeners may be sync or async; ``check`` vets every value a listener
returns; ``who`` notes which listener decided.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dsh_nb.tools.errors import ListenerContractError
from dsh_nb.tools.pipeline.waterfall import (
    ListenerList,
    Ready,
    passthrough,
    run_waterfall,
)


class Who:
    """A Decider: the listener whose value won, and that value."""

    def __init__(self) -> None:
        self.fn: Any = None
        self.value: Any = None


def only_str(value: object, fn: Any) -> str:
    if not isinstance(value, str):
        raise ListenerContractError(f"{fn.__name__} returned {value!r}")
    return value


async def test_no_listener_answers_the_base_value() -> None:
    who = Who()
    assert await run_waterfall([], ("p",), "default", only_str, who) == "default"
    assert who.fn is None and who.value == "default"


async def test_a_callable_base_runs_innermost_once() -> None:
    calls: list[str] = []

    def base() -> Ready[str]:
        calls.append("base")
        return Ready("ran")

    def outer(p: str, next_: Any) -> Any:
        calls.append("outer")
        return next_()

    assert await run_waterfall([outer], ("p",), base, only_str) == "ran"
    assert calls == ["outer", "base"]


async def test_first_listener_is_outermost_and_sees_the_payload() -> None:
    order: list[str] = []

    def make(name: str) -> Any:
        def listener(payload: str, next_: Any) -> Any:
            order.append(f"{name}:{payload}")
            return next_()

        listener.__name__ = name
        return listener

    result = await run_waterfall(
        [make("a"), make("b"), make("c")], ("x",), "base", only_str
    )
    assert result == "base"
    assert order == ["a:x", "b:x", "c:x"]


async def test_a_listener_that_answers_stops_the_chain_and_is_noted() -> None:
    reached: list[str] = []

    def deny(p: str, next_: Any) -> str:
        return "deny"

    def inner(p: str, next_: Any) -> Any:
        reached.append("inner")
        return next_()

    who = Who()
    assert await run_waterfall([deny, inner], ("p",), "allow", only_str, who) == "deny"
    assert reached == []
    assert who.fn is deny and who.value == "deny"


async def test_async_listeners_mix_with_sync_ones() -> None:
    async def slow(p: str, next_: Any) -> str:
        await asyncio.sleep(0)
        inner = await next_()
        return f"slow({inner})"

    def sync(p: str, next_: Any) -> Any:
        return next_()

    who = Who()
    out = await run_waterfall([sync, slow], ("p",), "base", only_str, who)
    assert out == "slow(base)"
    assert who.fn is slow


async def test_an_outer_listener_can_rewrite_what_next_gave() -> None:
    def upper(p: str, next_: Any) -> Any:
        async def later() -> str:
            return (await next_()).upper()

        return later()

    assert await run_waterfall([upper], ("p",), "base", only_str) == "BASE"


async def test_check_vets_every_returned_value_naming_the_listener() -> None:
    def bad(p: str, next_: Any) -> int:
        return 42

    with pytest.raises(ListenerContractError, match="bad returned 42"):
        await run_waterfall([bad], ("p",), "base", only_str)


async def test_check_vets_an_awaited_value_too() -> None:
    async def bad_async(p: str, next_: Any) -> int:
        return 7

    with pytest.raises(ListenerContractError, match="bad_async returned 7"):
        await run_waterfall([bad_async], ("p",), "base", only_str)


async def test_next_twice_is_a_contract_error() -> None:
    def twice(p: str, next_: Any) -> Any:
        next_()
        return next_()

    with pytest.raises(ListenerContractError, match="called next\\(\\) twice"):
        await run_waterfall([twice], ("p",), "base", only_str)


async def test_passthrough_keeps_anything() -> None:
    def odd(p: str, next_: Any) -> object:
        return {"any": "value"}

    assert await run_waterfall([odd], ("p",), None, passthrough) == {"any": "value"}


def test_listener_list_orders_prepends_and_scopes() -> None:
    changes: list[None] = []
    listeners: ListenerList[Any] = ListenerList(lambda: changes.append(None))

    def a() -> None: ...
    def b() -> None: ...
    def front() -> None: ...
    def mine() -> None: ...

    agent = object()
    listeners.add(a, scope=None, prepend=False, seam="s")
    dispose_b = listeners.add(b, scope=None, prepend=False, seam="s")
    listeners.add(front, scope=None, prepend=True, seam="s")
    listeners.add(mine, scope=agent, prepend=False, seam="s")
    assert listeners.for_scope(None) == (front, a, b)
    assert listeners.for_scope(agent) == (front, a, b, mine)
    assert listeners.scoped
    dispose_b()
    dispose_b()  # idempotent
    assert listeners.for_scope(agent) == (front, a, mine)
    assert len(changes) == 5
    assert listeners.drop_scope(agent)
    assert listeners.for_scope(agent) == (front, a)
