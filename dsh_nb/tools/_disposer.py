"""An idempotent undo function, returned by every ``register``/``on_*``."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Disposer"]


class Disposer:
    """Undo one registration; calling it again is a no-op."""

    __slots__ = ("_undo",)

    def __init__(self, undo: Callable[[], object]) -> None:
        self._undo: Callable[[], object] | None = undo

    @property
    def disposed(self) -> bool:
        """Whether the undo already ran."""
        return self._undo is None

    def __call__(self) -> None:
        undo, self._undo = self._undo, None
        if undo is not None:
            undo()

    def __enter__(self) -> Disposer:
        return self

    def __exit__(self, *exc: object) -> None:
        self()

    def __repr__(self) -> str:
        return f"<Disposer {'disposed' if self._undo is None else 'live'}>"
