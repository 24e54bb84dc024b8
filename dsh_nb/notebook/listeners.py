"""Listener decorators: a teacher writes a pipeline stage live in a cell.

``@pre_execute``, ``@guard``, ``@post_execute`` and ``@on_result`` register
the function on the kernel registry and return it unchanged. Rerunning the
defining cell replaces the registration (keyed by the function's module and
qualified name, the seam and the scope) instead of stacking a duplicate.
Lambdas and nested functions have no name that survives a rerun, so each
registration of one stays separate. ``remove_listener(fn)`` undoes every
decorator registration of ``fn``, so a teaching notebook can take a stage
out again.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar, overload

from dsh_nb.tools import Disposer

__all__ = ["guard", "on_result", "post_execute", "pre_execute", "remove_listener"]

F = TypeVar("F", bound=Callable[..., Any])

# Each decorated function's live registrations, for remove_listener().
_registrations: weakref.WeakKeyDictionary[Any, list[Disposer]] = (
    weakref.WeakKeyDictionary()
)


def remove_listener(fn: Callable[..., Any]) -> int:
    """Undo every decorator registration of ``fn``; return how many.

    Examples
    --------
    >>> dsh_nb.remove_listener(no_rm)  # doctest: +SKIP
    1
    """
    try:
        disposers = _registrations.pop(fn, [])
    except TypeError:  # not weak-referenceable: it was never registered here
        return 0
    live = [d for d in disposers if not d.disposed]
    for dispose in live:
        dispose()
    return len(live)


def _listener_key(seam: str, fn: object, scope: object) -> tuple[str, str, int] | None:
    qualname = getattr(fn, "__qualname__", None)
    if (
        not isinstance(qualname, str)
        or "<lambda>" in qualname
        or "<locals>" in qualname
    ):
        return None  # no stable identity across reruns: never replaced
    return (seam, f"{getattr(fn, '__module__', '')}.{qualname}", id(scope))


def _add_listener(seam: str, fn: F, scope: object, prepend: bool) -> F:
    from dsh_nb.notebook.current import current_state

    state = current_state()
    reg = state.registry
    if seam == "guard":
        dispose = reg.guard(fn, scope=scope)
    elif seam == "pre-execute":
        dispose = reg.on_pre_execute(fn, scope=scope, prepend=prepend)
    elif seam == "post-execute":
        dispose = reg.on_post_execute(fn, scope=scope, prepend=prepend)
    else:
        dispose = reg.on_result(fn, scope=scope, prepend=prepend)
    try:
        _registrations.setdefault(fn, []).append(dispose)
    except TypeError:
        pass  # e.g. a bound method: replaced on rerun, not removable by name
    key = _listener_key(seam, fn, scope)
    if key is None:
        state.disposers.append(dispose)
        return fn
    previous = state.listeners.pop(key, None)
    if previous is not None:
        previous()
    state.listeners[key] = dispose
    return fn


def _decorator(
    seam: str, fn: F | None, scope: object, prepend: bool
) -> F | Callable[[F], F]:
    if fn is None:
        return lambda f: _add_listener(seam, f, scope, prepend)
    return _add_listener(seam, fn, scope, prepend)


@overload
def pre_execute(fn: F, /) -> F: ...
@overload
def pre_execute(*, scope: object = None, prepend: bool = False) -> Callable[[F], F]: ...
def pre_execute(
    fn: F | None = None, /, *, scope: object = None, prepend: bool = False
) -> F | Callable[[F], F]:
    """Register ``fn(execution, next)`` as a pre-execute listener.

    It returns ``Allow()``, ``Deny(reason)``, ``Ask(reason)`` or ``next()``.
    Rerunning the defining cell replaces the listener (keyed by module and
    qualified name) instead of adding a second one.

    Examples
    --------
    >>> @dsh_nb.pre_execute  # doctest: +SKIP
    ... def no_rm(execution, next):
    ...     if "rm" in str(execution.arguments):
    ...         return Deny("no rm, please")
    ...     return next()
    """
    return _decorator("pre-execute", fn, scope, prepend)


@overload
def guard(fn: F, /) -> F: ...
@overload
def guard(*, scope: object = None) -> Callable[[F], F]: ...
def guard(fn: F | None = None, /, *, scope: object = None) -> F | Callable[[F], F]:
    """Register ``fn(execution)`` as a guard: return a reason to deny, or None.

    Guards run after pre-execute and approval and cannot be overridden.
    Rerunning the defining cell replaces the guard.
    """
    return _decorator("guard", fn, scope, False)


@overload
def post_execute(fn: F, /) -> F: ...
@overload
def post_execute(
    *, scope: object = None, prepend: bool = False
) -> Callable[[F], F]: ...
def post_execute(
    fn: F | None = None, /, *, scope: object = None, prepend: bool = False
) -> F | Callable[[F], F]:
    """Register ``fn(execution, result, next)``: Accept, Block or next().

    Rerunning the defining cell replaces the listener.
    """
    return _decorator("post-execute", fn, scope, prepend)


@overload
def on_result(fn: F, /) -> F: ...
@overload
def on_result(*, scope: object = None, prepend: bool = False) -> Callable[[F], F]: ...
def on_result(
    fn: F | None = None, /, *, scope: object = None, prepend: bool = False
) -> F | Callable[[F], F]:
    """Register ``fn(execution, result)`` to observe every frozen result.

    Rerunning the defining cell replaces the observer.
    """
    return _decorator("result", fn, scope, prepend)
