"""Plain Python classes as a data scientist writes them, for the door tests.

``SOURCE`` is the code itself, so a kernel test runs it in a cell exactly as
a notebook would, and the in-process tests ``exec`` the same text. The
methods are what issue 22 names: a setter returning ``None``, getters
returning dicts and lists, a method returning a dict with a ``content`` key,
an untyped getter, and docstrings with ``Args:`` straight under the summary.
``CALLS`` lists one call of each and what the model or client must read.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CALLS", "SOURCE", "build"]

SOURCE = '''
from typing import Any


class Thermostat:
    """A thermostat that remembers what it was set to."""

    def __init__(self):
        self.target = 20.0
        self.log = []

    def set_target(self, celsius: float) -> None:
        """Set the target temperature.
        Args:
            celsius: the new target, in degrees Celsius
        """
        self.target = celsius
        self.log.append(celsius)

    def get_state(self) -> dict:
        """The current target and how often it changed."""
        return {"target": self.target, "changes": len(self.log)}

    def history(self, last: int | None = None) -> list[float]:
        """The targets set so far, newest last.
        Args:
            last: how many to return (all when null)
        """
        return self.log if last is None else self.log[-last:]


class Feed:
    """A tiny social feed."""

    def __init__(self):
        self.posts = []

    def post(self, text: str, tags: list[str] | None = None) -> dict[str, Any]:
        """Post a message.
        Args:
            text: what to say
            tags: hashtags to add
        """
        item = {"id": len(self.posts), "content": text, "tags": tags or []}
        self.posts.append(item)
        return item

    def latest(self):
        """The newest post, or nothing."""
        return self.posts[-1] if self.posts else None
'''

# (tool, arguments, the text a model reads, structured content or None)
CALLS: tuple[tuple[str, dict[str, Any], str, Any], ...] = (
    ("set_target", {"celsius": 22.5}, "", None),
    ("get_state", {}, '{"target":22.5,"changes":1}', None),
    ("history", {"last": 2}, "[22.5]", {"result": [22.5]}),
    (
        "post",
        {"text": "hi", "tags": ["#lab"]},
        '{"id":0,"content":"hi","tags":["#lab"]}',
        {"id": 0, "content": "hi", "tags": ["#lab"]},
    ),
    ("latest", {}, '{"id":0,"content":"hi","tags":["#lab"]}', None),
)

METHODS = ("set_target", "get_state", "history", "post", "latest")


def build() -> list[Any]:
    """The tools, built from fresh instances by ``@tool`` on bound methods."""
    from dsh_nb.tools import tool

    space: dict[str, Any] = {}
    exec(compile(SOURCE, "plainapi", "exec"), space)
    thermostat, feed = space["Thermostat"](), space["Feed"]()
    owners = {"set_target": thermostat, "get_state": thermostat}
    owners.update(history=thermostat, post=feed, latest=feed)
    return [tool(getattr(owners[m], m)) for m in METHODS]
