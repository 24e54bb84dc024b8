"""The one waterfall engine behind every interception seam.

A waterfall is an ordered chain: listener *i*'s ``next()`` runs listener
*i+1*, the innermost ``next()`` runs the stage's base. Unlike pluggy's LIFO
order, the first-registered listener is outermost and ``prepend=True`` puts
a listener in front (contract §4.4). Listeners may be sync or async; a sync
listener may simply ``return next()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from dsh_nb.tools._disposer import Disposer
from dsh_nb.tools.errors import ListenerContractError

__all__ = [
    "UNSETTLED",
    "Decider",
    "noted",
    "passthrough",
    "ListenerList",
    "Ready",
    "Vetting",
    "describe",
    "run_waterfall",
]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def describe(fn: object) -> str:
    """Name a listener for errors and traces: ``module.qualname``."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    if module in (None, "__main__", "builtins"):
        return str(qualname)
    return f"{module}.{qualname}"


@dataclass(frozen=True, slots=True, eq=False)
class _Listener(Generic[F]):
    """One registration; hashed by identity, so a function added twice is two."""

    fn: F
    scope: object | None


class ListenerList(Generic[F]):
    """Registration-ordered listeners with prepend, scopes and snapshots.

    Adding and disposing are O(1) (an insertion-ordered dict; a prepend
    rebuilds it); the per-call snapshot is rebuilt lazily after a change.
    """

    __slots__ = ("_changed", "_entries", "_scoped", "_snapshot")

    def __init__(self, changed: Callable[[], None] | None = None) -> None:
        self._entries: dict[_Listener[F], None] = {}
        self._scoped = 0
        self._snapshot: tuple[F, ...] | None = ()
        self._changed = changed  # tells the owner its cached snapshots are stale

    def add(self, fn: F, *, scope: object | None, prepend: bool, seam: str) -> Disposer:
        """Register ``fn``; validates eagerly, returns an idempotent dispose."""
        if not callable(fn):
            raise TypeError(f"{seam} listener must be callable, not {fn!r}")
        entry = _Listener(fn, scope)
        if prepend:
            self._entries = {entry: None, **self._entries}
        else:
            self._entries[entry] = None
        self._scoped += scope is not None
        self._snapshot = None
        if self._changed is not None:
            self._changed()
        return Disposer(lambda: self._remove(entry))

    def _remove(self, entry: _Listener[F]) -> None:
        if self._entries.pop(entry, 0) is None:
            self._scoped -= entry.scope is not None
            self._snapshot = None
            if not self._entries:
                self._entries.clear()  # an emptied dict keeps its table until cleared
            if self._changed is not None:
                self._changed()

    @property
    def scoped(self) -> bool:
        """Whether any listener is registered on behalf of a scope."""
        return self._scoped > 0

    def drop_scope(self, scope: object) -> bool:
        """Remove every listener registered on behalf of ``scope``."""
        dropped = [e for e in self._entries if e.scope is scope]
        for entry in dropped:
            self._remove(entry)
        return bool(dropped)

    def for_scope(self, scope: object | None) -> tuple[F, ...]:
        """Snapshot the listeners that fire for a call made by ``scope``."""
        if not self._scoped:
            snapshot = self._snapshot
            if snapshot is None:
                snapshot = self._snapshot = tuple(e.fn for e in self._entries)
            return snapshot
        return tuple(e.fn for e in self._entries if e.scope is None or e.scope is scope)

    def registrations(self) -> tuple[tuple[F, object | None], ...]:
        """Every ``(listener, scope)``, in waterfall order, all scopes."""
        return tuple((e.fn, e.scope) for e in self._entries)

    def __len__(self) -> int:
        return len(self._entries)


class Ready(Generic[T]):
    """An awaitable that is already done: a stage default or a sync value.

    Awaiting it returns ``value`` without suspending; the engine also
    reads ``value`` off it to note what an inner level settled to.
    """

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, T]:
        return self.value
        yield  # a generator that returns at once, without suspending


UNSETTLED: Any = object()
"""What a :class:`Decider` holds before anything in its stage settled."""


class Vetting(Generic[T]):
    """A listener's pending value, vetted by ``check`` once it settles.

    Awaiting it awaits ``awaitable``, vets the value with ``check`` and,
    while tracing, notes the level with :func:`noted`.
    """

    __slots__ = ("awaitable", "check", "fn", "who")

    def __init__(
        self,
        awaitable: Awaitable[object],
        fn: Any,
        check: Callable[[object, Any], T],
        who: Decider | None,
    ) -> None:
        self.awaitable = awaitable
        self.fn: Any = fn  # the listener, or None for a noted base
        self.check = check
        self.who = who

    def __await__(self) -> Generator[Any, None, T]:
        value = yield from self.awaitable.__await__()
        checked = self.check(value, self.fn)
        who = self.who
        if who is not None:
            noted(who, checked, self.fn)
        return checked


class Decider(Protocol):
    """Where the engine notes who decided a stage, while tracing.

    Levels settle innermost first, each into ``value``; a listener decided
    when the value it settled to is not the very value settled just inside
    it (what its ``next()`` gave), so ``fn`` ends as the outermost listener
    that did not pass its value on, or None when the stage's base did.
    :class:`dsh_nb.tools.pipeline.trace.Recorder` is the one implementation.
    """

    fn: Callable[..., Any] | None
    value: Any


def noted(who: Decider, value: T, fn: Callable[..., Any] | None) -> T:
    """Note that the level of ``fn`` (None: the base) settled to ``value``."""
    if fn is not None and value is not who.value:
        who.fn = fn
    who.value = value
    return value


def passthrough(value: object, fn: object) -> Any:
    return value


def run_waterfall(
    listeners: Sequence[Callable[..., Any]],
    payload: tuple[Any, ...],
    base: Callable[[], Awaitable[T]] | T,
    check: Callable[[object, Callable[..., Any]], T],
    who: Decider | None = None,
) -> Awaitable[T]:
    """Run ``listeners`` around ``base``; ``check`` vets each listener's return.

    ``base`` is the stage default: a function making an awaitable (dispatch)
    or a plain value (allow, accept). ``check(value, listener)`` returns the
    typed value or raises :class:`ListenerContractError` naming the
    listener. A listener calling ``next()`` twice gets a
    :class:`ListenerContractError`.

    With ``who`` (a :class:`Decider`, for traces), ``who.fn`` ends as the
    listener whose value won: the outermost one that did not pass on what
    ``next()`` gave it; it stays None when the base decided.
    """
    if not listeners:
        return _innermost(base, who)
    return _step(listeners, 0, payload, base, check, who)


def _innermost(
    base: Callable[[], Awaitable[T]] | T, who: Decider | None
) -> Awaitable[T]:
    if not callable(base):
        if who is not None:
            who.value = base
        return Ready(base)
    made: Awaitable[T] = base()
    if who is not None:
        # Note what the base settled to, so a pass-through can tell.
        if isinstance(made, Ready):
            who.value = made.value
        elif not isinstance(made, Vetting):
            return Vetting(made, None, passthrough, who)
    return made


def _step(
    listeners: Sequence[Callable[..., Any]],
    i: int,
    payload: tuple[Any, ...],
    base: Callable[[], Awaitable[T]] | T,
    check: Callable[[object, Callable[..., Any]], T],
    who: Decider | None,
) -> Awaitable[T]:
    # A plain function, not a coroutine: a listener that returns exactly
    # what next() gave it (the common pass-through) adds no frame, and the
    # level that made that awaitable has already vetted its value. Plain
    # arguments rather than closures over run_waterfall: fewer cells per call.
    fn = listeners[i]
    given: Awaitable[T] | None = None

    def next_(*_ignored: object) -> Awaitable[T]:
        nonlocal given
        if given is not None:
            raise ListenerContractError(f"{describe(fn)} called next() twice")
        j = i + 1
        if j < len(listeners):
            given = _step(listeners, j, payload, base, check, who)
        else:
            given = _innermost(base, who)
        return given

    out = fn(*payload, next_)
    if given is not None and out is given:
        return given
    if hasattr(out, "__await__"):
        return Vetting(out, fn, check, who)
    value = check(out, fn)
    if who is not None:
        who.fn = fn
        who.value = value
    return Ready(value)
