"""Per-scope tables keyed by identity, never by ``==`` or ``hash``.

A scope is an agent object, and two agents that compare equal (an agent
class with ``__eq__``/``__hash__`` on its name, say) are still two scopes
(contract §0). A plain dict would merge them, or call user ``__hash__``
and ``__eq__`` on every lookup; this table keys by ``id`` and holds the
scope itself, so an id cannot be reused while its entry lives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

__all__ = ["ScopeMap"]

V = TypeVar("V")


class ScopeMap(Generic[V]):
    """A mapping from scope objects (by identity) to values."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[int, tuple[object, V]] = {}

    def get(self, scope: object, default: V | None = None) -> V | None:
        entry = self._items.get(id(scope))
        return default if entry is None else entry[1]

    def setdefault(self, scope: object, make: Callable[[], V]) -> V:
        """The value for ``scope``, made and stored first if there is none."""
        entry = self._items.get(id(scope))
        if entry is None:
            value = make()
            self._items[id(scope)] = (scope, value)
            return value
        return entry[1]

    def __setitem__(self, scope: object, value: V) -> None:
        self._items[id(scope)] = (scope, value)

    def pop(self, scope: object) -> V | None:
        entry = self._items.pop(id(scope), None)
        return None if entry is None else entry[1]

    def __contains__(self, scope: object) -> bool:
        return id(scope) in self._items

    def scopes(self) -> Iterator[object]:
        return (scope for scope, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)
