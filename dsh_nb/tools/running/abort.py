"""Abort signals and deadlines: how cooperative work is told to stop.

Split out of ``timeout.py`` because signals are used well beyond the timeout
policy (approvals, the notebook's stop button, tools themselves); the policy
in ``timeout.py`` is one client. ``dsh_nb.tools.running.timeout`` re-exports every
name here, so older imports keep working.

An :class:`AbortSignal` only *notifies*: nothing here cancels a task or kills
work. Tools watch ``execution.signal`` and stop.

Threading: signals take no locks. Abort on the event loop's thread; from any
other thread (an ipywidgets comm handler, a worker) hand the abort to the loop
with ``loop.call_soon_threadsafe(controller.abort, reason)``. Callbacks run
synchronously in whichever thread aborts; awaiters are always resumed on
their own loop, so a direct cross-thread abort still wakes them safely.
"""

from __future__ import annotations

import asyncio
import logging
import math
import weakref
from collections.abc import Callable, Generator, Iterable
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.tools._disposer import Disposer
from dsh_nb.tools.jsonvalue import format_number

if TYPE_CHECKING:
    from dsh_nb.tools.values.refs import SignalRef

__all__ = [
    "is_positive_finite",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "TimeoutReason",
    "clamp_timeout",
    "deadline",
    "timeout_of",
]

_DEFAULT_ABORT_MESSAGE: Final = "This operation was aborted"
# Named for the module these signals came from, so logging set up for it
# still catches a failing abort callback.
_log = logging.getLogger("dsh_nb.tools.running.timeout")


class AbortError(Exception):
    """An operation stopped because its signal was aborted."""


class TimeoutReason(Exception):
    """Abort reason of a deadline: which deadline fired, and its budget."""

    def __init__(self, code: str, timeout_ms: float) -> None:
        super().__init__(f"{code} after {format_number(timeout_ms)}ms")
        self.code = code
        self.timeout_ms = timeout_ms

    @property
    def name(self) -> str:
        """The reason's name, as the reference reports it."""
        return "TimeoutReason"

    def __reduce__(self) -> tuple[type[TimeoutReason], tuple[str, float]]:
        return (TimeoutReason, (self.code, self.timeout_ms))


def _noop() -> None:
    return None


class AbortSignal:
    """Tell cooperative work to stop; settable only through its controller.

    A signal aborts at most once and keeps its first reason, which is never
    ``None`` (an abort without a reason gets an :class:`AbortError`). Await it
    (``reason = await signal``) or register callbacks. Unlike the web API, a
    callback added to an already-aborted signal runs at once, so checking
    :attr:`aborted` and then subscribing can never miss the abort.
    """

    __slots__ = ("__weakref__", "_aborted", "_callbacks", "_next_key", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: object = None
        self._callbacks: dict[int, Callable[[Any], object]] = {}
        self._next_key = 0

    @property
    def aborted(self) -> bool:
        """Whether the signal has aborted."""
        return self._aborted

    @property
    def reason(self) -> BaseException | object | None:
        """The abort reason; ``None`` while not aborted."""
        return self._reason

    def __repr__(self) -> str:
        if self._aborted:
            return f"<AbortSignal aborted reason={self._reason!r}>"
        return "<AbortSignal pending>"

    def add_callback(self, fn: Callable[[Any], object]) -> Disposer:
        """Call ``fn(reason)`` once on abort; return an idempotent disposer.

        Callbacks run synchronously in registration order. One that raises is
        logged and skipped; the abort and the other callbacks go on. On an
        already-aborted signal ``fn`` runs immediately and the disposer is a
        no-op.
        """
        if not callable(fn):
            raise TypeError(f"add_callback() needs a callable, got {fn!r}")
        if self._aborted:
            _run_callback(fn, self._reason)
            return Disposer(_noop)
        key = self._next_key
        self._next_key += 1
        self._callbacks[key] = fn
        return Disposer(lambda: self._callbacks.pop(key, None))

    def throw_if_aborted(self) -> None:
        """Raise the reason (or ``AbortError(reason)``) if aborted."""
        if not self._aborted:
            return
        reason = self._reason
        if isinstance(reason, BaseException):
            raise reason
        raise AbortError(reason)

    def __await__(self) -> Generator[Any, None, object]:
        return self.wait().__await__()

    async def wait(self, timeout: float | None = None) -> object:
        """Wait until aborted and return the reason.

        ``timeout`` is in seconds, as in asyncio; when it elapses first the
        result is ``None`` (an aborted signal's reason is never ``None``).
        """
        if self._aborted:
            return self._reason
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[object] = loop.create_future()
        dispose = self.add_callback(lambda reason: _settle(waiter, reason))
        timer = None
        if timeout is not None:
            timer = loop.call_later(timeout, _settle, waiter, None)
        try:
            return await waiter
        finally:
            dispose()
            if timer is not None:
                timer.cancel()

    def _abort(self, reason: object) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = AbortError(_DEFAULT_ABORT_MESSAGE) if reason is None else reason
        while self._callbacks:
            fn = self._callbacks.pop(next(iter(self._callbacks)))
            _run_callback(fn, self._reason)

    @staticmethod
    def any(signals: Iterable[AbortSignal]) -> AbortSignal:
        """Fuse signals: abort when any does, with the first reason."""
        fused, _detach = _fuse(list(signals))
        return fused

    @staticmethod
    def aborted_with(reason: object = None) -> AbortSignal:
        """Return a signal that is already aborted with ``reason``."""
        signal = AbortSignal()
        signal._abort(reason)
        return signal

    @staticmethod
    def never() -> AbortSignal:
        """Return a signal that never aborts."""
        return AbortSignal()


class AbortController:
    """Own an :class:`AbortSignal` and abort it."""

    __slots__ = ("_signal",)

    def __init__(self) -> None:
        self._signal = AbortSignal()

    @property
    def signal(self) -> AbortSignal:
        """The signal this controller aborts."""
        return self._signal

    def abort(self, reason: object = None) -> None:
        """Abort the signal; later calls keep the first reason.

        Without a reason (or with ``None``) the reason is
        ``AbortError("This operation was aborted")``.
        """
        self._signal._abort(reason)

    def __repr__(self) -> str:
        return f"<AbortController signal={self._signal!r}>"


def _run_callback(fn: Callable[[Any], object], reason: object) -> None:
    try:
        fn(reason)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - not even sys.exit() may stop an abort
        _log.exception("AbortSignal callback %r raised; ignored", fn)


def _settle(waiter: asyncio.Future[object], value: object) -> None:
    loop = waiter.get_loop()
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        if not waiter.done():
            waiter.set_result(value)
    elif not loop.is_closed():
        loop.call_soon_threadsafe(_settle, waiter, value)


def _fuse(
    sources: list[SignalRef], *, collectable: bool = True
) -> tuple[AbortSignal, Callable[[], None]]:
    """Return a signal following ``sources`` and a detacher.

    The sources hold the fused signal only weakly, so an unused fused signal
    can be collected even while long-lived sources live on; aborting it, or
    collecting it when ``collectable``, detaches it from the sources.
    """
    fused = AbortSignal()
    for source in sources:
        if source.aborted:
            fused._abort(source.reason)
            return fused, _noop
    disposers: list[Callable[[], None]] = []

    def detach() -> None:
        while disposers:
            disposers.pop()()

    ref = weakref.ref(fused)

    def follow(reason: object) -> None:
        target = ref()
        if target is not None:
            target._abort(reason)

    if sources:
        fused.add_callback(lambda _reason: detach())
        if collectable:
            weakref.finalize(fused, detach)
        disposers.extend(source.add_callback(follow) for source in sources)
    return fused, detach


def deadline(
    upstream: SignalRef | None, timeout_ms: float, code: str
) -> tuple[SignalRef, Disposer]:
    """Return ``upstream`` fused with a timer, and a disposer (§5.1).

    The timer aborts with ``TimeoutReason(code, timeout_ms)`` on the running
    loop; whichever of timer and upstream aborts first sets the reason for
    good. ``timeout_ms <= 0`` (or infinite) means no timer: the result is
    ``upstream`` itself, or a never-aborting signal. A pre-aborted upstream
    yields an aborted signal with its reason and no timer. Dispose clears the
    timer and detaches from ``upstream``; it is idempotent.
    """
    if not timeout_ms > 0 or math.isinf(timeout_ms):
        signal = upstream if upstream is not None else AbortSignal.never()
        return signal, Disposer(_noop)
    # The timer holds the fused signal until it fires or is disposed, and
    # either way detaches it, so no finalizer is needed on this hot path.
    fused, detach = _fuse([upstream] if upstream is not None else [], collectable=False)
    if fused.aborted:
        return fused, Disposer(_noop)
    timer = asyncio.get_running_loop().call_later(
        timeout_ms / 1000, lambda: fused._abort(TimeoutReason(code, timeout_ms))
    )
    fused.add_callback(lambda _reason: timer.cancel())

    def dispose() -> None:
        timer.cancel()
        detach()

    return fused, Disposer(dispose)


def timeout_of(carrier: object, code: str | None = None) -> TimeoutReason | None:
    """Return the carrier's :class:`TimeoutReason`, if it is one (with ``code``).

    ``carrier`` is a signal, anything with a ``reason`` attribute, or a
    reason itself. Scoping by ``code`` makes a foreign deadline read as an
    ordinary cancel. Never raises.
    """
    if isinstance(carrier, TimeoutReason):
        reason: object = carrier
    else:
        try:
            reason = getattr(carrier, "reason", None)
        except Exception:  # noqa: BLE001 - a hostile carrier reads as no timeout
            return None
    if not isinstance(reason, TimeoutReason):
        return None
    if code is not None and reason.code != code:
        return None
    return reason


def is_positive_finite(value: object) -> bool:
    """Whether ``value`` is a usable budget: a finite number above zero.

    The one check for every timeout and budget (definitions, the registry,
    the timeout policy, clamps, the notebook's config and magics): a
    ``bool`` is not a number, an ``int`` of any size is finite.
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value > 0
    return isinstance(value, float) and math.isfinite(value) and value > 0


def clamp_timeout(
    requested: float | None,
    default: float,
    maximum: float,
    name: str = "timeoutMs",
) -> float:
    """Return ``min(requested or default, maximum)`` for a timeout hint.

    Raises ``ValueError("<name> must be a positive finite number")`` for a
    supplied hint that is not a finite number above zero.
    """
    if requested is None:
        return min(default, maximum)
    if not is_positive_finite(requested):
        raise ValueError(f"{name} must be a positive finite number")
    return min(requested, maximum)
