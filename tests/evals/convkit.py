"""A small stateful tool set (a cart) and a model that shops with it.

The model answers from the loopback ``ReplayServer`` through the official
SDK, reading the conversation as a model would: the last user turn says
what to do, and a tool result in the last message means the turn's calls
are done. ``mistakes`` names the turns it gets wrong, per trial.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from dsh_nb.evals import Case, call, no_call
from dsh_nb.models.replay_server import RecordedRequest
from dsh_nb.models.scripted import Reply, ToolCallSpec, Turn


class Cart:
    """A shopping cart: the state a conversation changes."""

    def __init__(self) -> None:
        self.items: dict[str, int] = {}
        self.paid = False

    def add(self, item: str, qty: int = 1) -> str:
        """Put ``qty`` of ``item`` in the cart.

        Args:
            item: What to add.
            qty: How many.
        """
        self.items[item] = self.items.get(item, 0) + qty
        return f"{qty} {item} in the cart"

    def remove(self, item: str) -> str:
        """Take every ``item`` out of the cart.

        Args:
            item: What to remove.
        """
        self.items.pop(item, None)
        return f"no {item} in the cart"

    def checkout(self) -> dict[str, Any]:
        """Pay for the cart."""
        self.paid = True
        return {"paid": True, "items": sum(self.items.values())}


def cases() -> list[Case]:
    return [
        Case(
            ["Add two apples.", "Add a pear too.", "Check out."],
            tools=Cart,
            expect=[
                call("add", item="apple", qty=2),
                call("add", item="pear"),
                call("checkout"),
            ],
            end_state=lambda cart: cart.paid and cart.items == {"apple": 2, "pear": 1},
            final=lambda text: "paid" in text,
            id="shop",
        ),
        Case(
            ["Add three plums.", "Actually, no plums. Remove them.", "Thanks!"],
            tools=Cart,
            expect=[
                call("add", item="plum", qty=3),
                call("remove", item="plum"),
                no_call(),
            ],
            end_state=lambda cart: cart.items == {},
            id="change-mind",
        ),
    ]


PLANS: dict[str, list[tuple[str, dict[str, Any]] | None]] = {
    "Add two apples.": [("add", {"item": "apple", "qty": 2})],
    "Add a pear too.": [("add", {"item": "pear"})],
    "Check out.": [("checkout", {})],
    "Add three plums.": [("add", {"item": "plum", "qty": 3})],
    "Actually, no plums. Remove them.": [("remove", {"item": "plum"})],
    "Thanks!": [],
}
WRONG: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "Add two apples.": [("add", {"item": "apple", "qty": 1})],
    "Add a pear too.": [("add", {"item": "pear"}), ("add", {"item": "pear"})],
    "Check out.": [],
    "Add three plums.": [("add", {"item": "plums", "qty": 3})],
    "Actually, no plums. Remove them.": [("add", {"item": "plum", "qty": -3})],
    "Thanks!": [("checkout", {})],
}
_TRIAL = re.compile(r"T(\d+)-")


class Shopper:
    """Answers each case's turns; trial ``n`` of a case errs on the turns
    ``mistakes(case_first_turn, n)`` names (1-based)."""

    def __init__(self, mistakes: Callable[[str, int], set[int]] | None = None) -> None:
        self.mistakes = mistakes or (lambda first, n: set())
        self._lock = threading.Lock()
        self._seen: dict[str, int] = {}

    def __call__(self, request: RecordedRequest) -> Reply:
        messages = request.body["messages"]
        users = [m for m in messages if m["role"] == "user"]
        first, last = users[0]["content"], users[-1]["content"]
        if messages[-1]["role"] == "tool":
            done = "paid" if "checkout" in json.dumps(messages[-3:]) else "done"
            return Turn(text=f"All {done}.")
        trial = self._trial(messages, first)
        wrong = len(users) in self.mistakes(first, trial)
        plan = (WRONG if wrong else PLANS)[last]
        if not plan:
            return Turn(text="You are welcome." if last == "Thanks!" else "Hmm.")
        return Turn(
            tool_calls=tuple(
                ToolCallSpec(
                    name=name,
                    arguments=json.dumps(args),
                    call_id=f"T{trial}-{len(users)}-{i}",
                )
                for i, (name, args) in enumerate(plan)
            )
        )

    def _trial(self, messages: list[Mapping[str, Any]], first: str) -> int:
        """Which trial this is: from an earlier call id, else the next one."""
        for m in messages:
            for c in m.get("tool_calls") or ():
                found = _TRIAL.match(c["id"])
                if found:
                    return int(found.group(1))
        with self._lock:
            self._seen[first] = self._seen.get(first, 0) + 1
            return self._seen[first]
