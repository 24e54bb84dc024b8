"""A model stand-in that answers evaluation cases with error rates we chose.

It serves the loopback ``ReplayServer`` (so the official SDKs parse real
wire traffic). Each case's trials get the behaviours of a fixed plan, in
the order their first requests arrive, so over a run the true rates are
exact whatever the concurrency. A behaviour rides in the call id it puts
on its tool calls, so a follow-up request (the retry after an
``INVALID_ARGS``) knows which trial it belongs to.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from dsh_nb.evals import Case, call, no_call
from dsh_nb.models.replay_server import RecordedRequest
from dsh_nb.models.scripted import Reply, ToolCallSpec, Turn
from dsh_nb.tools import ToolRegistry, tool

#: What one call case's ten trials do.
CALL_PLAN = (
    "right",
    "right",
    "right",
    "wrong_tool",
    "wrong_type_fix",
    "wrong_type",
    "missing_fix",
    "wrong_value",
    "extra_call",
    "no_call",
)
#: What one no-call case's ten trials do.
NO_CALL_PLAN = ("text",) * 8 + ("stray_call",) * 2
CITIES = ("Paris", "Lima", "Oslo", "Kyiv", "Quito", "Hanoi")
_TAG = re.compile(r"CASE-(\d+)")


def registry() -> ToolRegistry:
    @tool
    def get_weather(city: str, unit: Literal["celsius", "fahrenheit"]) -> str:
        """The weather in a city."""
        raise AssertionError("a dry run never runs a body")

    @tool
    def get_time(city: str) -> str:
        """The local time in a city."""
        raise AssertionError("a dry run never runs a body")

    reg = ToolRegistry()
    reg.register(get_weather)
    reg.register(get_time)
    return reg


def cases() -> list[Case]:
    out = [
        Case(
            f"CASE-{i}: what is the weather in {city}, in celsius?",
            expect=call("get_weather", city=city, unit="celsius"),
            id=f"weather-{city}",
        )
        for i, city in enumerate(CITIES)
    ]
    out += [
        Case(f"CASE-{i}: just say hello", expect=no_call(), id=f"hello-{i}")
        for i in (len(CITIES), len(CITIES) + 1)
    ]
    return out


#: The true counts of a run of cases() with ten trials each.
TRUE = {
    "trials": 80,
    "selected": 6 * 7 + 2 * 8,
    "args_valid_first_try": 6 * 7 + 2 * 10,
    "args_correct": 6 * 3 + 2 * 8,
    "recovered": (6 * 2, 6 * 3),
    "passed": 6 * 3 + 2 * 8,
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or () if isinstance(b, Mapping))


def _call_ids(message: Mapping[str, Any]) -> list[str]:
    ids = [c["id"] for c in message.get("tool_calls") or ()]
    content = message.get("content")
    if isinstance(content, list):
        ids += [b["id"] for b in content if b.get("type") == "tool_use"]
    return ids


class Responder:
    """``ReplayServer(Responder())``: answers from the cases' plans."""

    def __init__(
        self,
        plans: Mapping[str, Sequence[str]] | None = None,
        *,
        delay: float = 0.0,
    ) -> None:
        self.plans = dict(plans or {})
        self.delay = delay
        self.seen: dict[int, int] = {}
        self.ids = itertools.count(1)

    def plan(self, index: int) -> Sequence[str]:
        if index < len(CITIES):
            return self.plans.get("call", CALL_PLAN)
        return self.plans.get("no_call", NO_CALL_PLAN)

    def __call__(self, request: RecordedRequest) -> Reply:
        messages = request.body["messages"]
        users = [m for m in messages if m["role"] == "user"]
        match = _TAG.search(_text(users[0]["content"]))
        assert match is not None, users
        index = int(match[1])
        city = CITIES[index] if index < len(CITIES) else "Paris"
        assistants = [m for m in messages if m["role"] == "assistant"]
        if not assistants:
            count = self.seen.get(index, 0)
            self.seen[index] = count + 1
            plan = self.plan(index)
            return self.first(plan[count % len(plan)], city)
        ids = _call_ids(assistants[-1])
        behaviour = ids[0].split("-")[1] if ids else "text"
        if len(assistants) == 1 and behaviour in ("wrong_type_fix", "missing_fix"):
            return self.calls(
                "fixed", ("get_weather", {"city": city, "unit": "celsius"})
            )
        if len(assistants) == 1 and behaviour == "wrong_type":
            return self.calls(
                behaviour, ("get_weather", {"city": 42, "unit": "celsius"})
            )
        return Turn(text="Done.", delay=self.delay)

    def calls(self, behaviour: str, *calls: tuple[str, Any]) -> Turn:
        specs = tuple(
            ToolCallSpec(
                name=name,
                arguments=json.dumps(args),
                call_id=f"call-{behaviour}-{next(self.ids)}",
            )
            for name, args in calls
        )
        return Turn(tool_calls=specs, delay=self.delay)

    def first(self, behaviour: str, city: str) -> Turn:
        right = ("get_weather", {"city": city, "unit": "celsius"})
        table: dict[str, tuple[tuple[str, Any], ...]] = {
            "right": (right,),
            "wrong_tool": (("get_time", {"city": city}),),
            "wrong_type_fix": (("get_weather", {"city": 42, "unit": "celsius"}),),
            "wrong_type": (("get_weather", {"city": 42, "unit": "celsius"}),),
            "missing_fix": (("get_weather", {"city": city}),),
            "wrong_value": (("get_weather", {"city": city, "unit": "fahrenheit"}),),
            "extra_call": (right, ("get_time", {"city": city})),
            "stray_call": (("get_time", {"city": city}),),
            "stray_bad": (("get_time", {"city": 7}),),
        }
        if behaviour in ("no_call", "text"):
            return Turn(text="Hello!", delay=self.delay)
        return self.calls(behaviour, *table[behaviour])
