"""The tool presenter: a tool's own cards, or the contract's fallbacks.

A UI asks :class:`ToolPresenter` for the pending card when a call starts and
for the completed card when its result lands. The tool's ``present_call`` and
``present_result`` decide the cards; when they are missing, return nothing,
raise or return something that is not a view, the presenter falls back to the
generic card (contract §7.2), reports to an error sink and never raises. The
same code serves live calls and replays from a session log, where arguments
arrive as the logged JSON text.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from dsh_nb.tools.definition import ToolResult
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.presentation import (
    DiffCallView,
    DiffResultView,
    GenericCallView,
    GenericResultView,
    TerminalCallView,
    TerminalResultView,
    ToolCallKind,
    ToolCallView,
    ToolResultView,
    view_from_json,
)

__all__ = [
    "PresentableTool",
    "PresentedResult",
    "ToolLookup",
    "ToolPresenter",
    "console_fence",
    "parse_presented_args",
    "relativize_title",
]

_log = logging.getLogger("dsh_nb.tools.presenter")

# A presenter that raises anything else (SystemExit, KeyboardInterrupt, a
# BaseException of its own) falls back like one raising an Exception; only
# cancellation (an interrupt delivered as CancelledError) goes through.
_ESCAPES = (asyncio.CancelledError,)

_CALL_VIEWS = (GenericCallView, TerminalCallView, DiffCallView)
_RESULT_VIEWS = (GenericResultView, TerminalResultView, DiffResultView)


class PresentableTool(Protocol):
    """What the presenter reads from a tool definition."""

    @property
    def name(self) -> str: ...

    @property
    def present_call(self) -> Callable[[Any], Any] | None: ...

    @property
    def present_result(self) -> Callable[[Any, ToolResult], Any] | None: ...


class ToolLookup(Protocol):
    """Resolves a tool name as one agent sees it (``ToolRegistry.get``)."""

    def get(self, name: str, scope: Any = None, /) -> PresentableTool | None: ...


class PresentedResult(Protocol):
    """A finished call's result; ``meta`` is read when present."""

    @property
    def content(self) -> Sequence[Any]: ...

    @property
    def is_error(self) -> bool: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class _Pending:
    """What a call's result needs from its call: remembered per call id."""

    name: str
    args: Any
    card: str
    agent: Any


def _warn(message: str) -> None:
    _log.warning("%s", message)


def parse_presented_args(value: object) -> Any:
    """Parse logged arguments JSON for display; non-``str`` passes through.

    An empty string is ``{}``; text that is not strict JSON (``NaN`` and
    ``Infinity`` included) is returned as the raw string, so a model's broken
    arguments still show up on the card.
    """
    if not isinstance(value, str):
        return value
    if value == "":
        return {}
    try:
        return json.loads(value, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def relativize_title(title: str, path: str | None, cwd: str | None) -> str:
    """Show ``path`` in ``title`` relative to ``cwd`` when it lies inside.

    Unchanged when either is missing or not absolute, or when ``path`` is
    ``cwd`` itself or outside it (a ``..`` segment); a name that merely
    starts with two dots (``..cache/x.ts``) is inside. Every occurrence of
    the raw path is replaced.
    """
    if not path or not cwd or not posixpath.isabs(path) or not posixpath.isabs(cwd):
        return title
    rel = posixpath.relpath(path, cwd)
    if rel in ("", ".", "..") or rel.startswith("../"):
        return title
    return title.replace(path, rel)


def console_fence(output: str | None) -> str:
    """Fence terminal output as a console block, trailing newlines dropped.

    The fallback body of a terminal result card where no terminal renders.
    """
    body = (output or "").rstrip("\n")
    return f"```console\n{body}\n```"


class ToolPresenter:
    """Turn calls and results into cards, falling back where a tool fails.

    Parameters
    ----------
    registry
        Anything with ``get(name, scope)`` returning a tool definition (or
        None), normally the ``ToolRegistry``.
    on_error
        Receives one line per presenter failure. Default: a warning on the
        ``dsh_nb.tools.presenter`` logger.
    """

    def __init__(
        self,
        registry: ToolLookup,
        *,
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        self._registry = registry
        self._on_error = on_error if on_error is not None else _warn
        self._pending: dict[str, _Pending] = {}

    def present_call(
        self, call_id: str, name: str, args: Any, agent: Any = None
    ) -> ToolCallView:
        """Return the pending card for a call and remember it for the result.

        ``args`` may be the logged JSON text (see
        :func:`parse_presented_args`) or the arguments themselves.
        """
        parsed = parse_presented_args(args)
        view: ToolCallView | None = None
        try:
            view = self._call_view(name, parsed, agent)
        except _ESCAPES:
            raise
        except BaseException as exc:  # noqa: BLE001 - a broken presenter never breaks a UI
            self._report(
                f'dsh_nb: tool "{name}" presentCall threw, '
                f"using generic presentation: {error_message(exc)}"
            )
        if view is None:
            view = GenericCallView(
                title=name, kind=ToolCallKind.OTHER, raw_input=parsed
            )
        self._pending[call_id] = _Pending(
            name=name, args=parsed, card=view.card, agent=agent
        )
        return view

    def present_result(self, call_id: str, result: PresentedResult) -> ToolResultView:
        """Return the completed card for a call's result (error results too).

        Consumes what :meth:`present_call` remembered; a call id with nothing
        remembered (unknown, late, already consumed) shows the raw content.
        """
        content = tuple(result.content)
        entry = self._pending.pop(call_id, None)
        if entry is None:
            return GenericResultView(content=content)
        view: ToolResultView | None = None
        try:
            view = self._result_view(entry, result)
        except _ESCAPES:
            raise
        except BaseException as exc:  # noqa: BLE001 - a broken presenter never breaks a UI
            self._report(
                f'dsh_nb: tool "{entry.name}" presentResult threw, '
                f"using raw result: {error_message(exc)}"
            )
        if view is None:
            return GenericResultView(content=content)
        if view.card == "terminal" and entry.card != "terminal":
            # No terminal was opened for this call, so none can be completed.
            return GenericResultView(content=content)
        if isinstance(view, GenericResultView) and view.content is None:
            return replace(view, content=content)
        return view

    def forget(self, call_id: str) -> None:
        """Drop what was remembered for a call that will get no result."""
        self._pending.pop(call_id, None)

    def _call_view(self, name: str, args: Any, agent: Any) -> ToolCallView | None:
        definition = self._registry.get(name, agent)
        present = None if definition is None else definition.present_call
        if present is None:
            return None
        view = _coerce(present(args), result=False)
        return view if isinstance(view, _CALL_VIEWS) else None

    def _result_view(
        self, entry: _Pending, result: PresentedResult
    ) -> ToolResultView | None:
        definition = self._registry.get(entry.name, entry.agent)
        present = None if definition is None else definition.present_result
        if present is None:
            return None
        if not isinstance(result, ToolResult):
            result = ToolResult(
                content=result.content,
                is_error=result.is_error,
                meta=getattr(result, "meta", ABSENT),
            )
        view = _coerce(present(entry.args, result), result=True)
        return view if isinstance(view, _RESULT_VIEWS) else None

    def _report(self, message: str) -> None:
        try:
            self._on_error(message)
        except Exception:  # noqa: BLE001 - the sink must not turn a fallback into a crash
            _log.exception("on_error sink raised while reporting: %s", message)


def _coerce(value: object, *, result: bool) -> ToolCallView | ToolResultView | None:
    """Accept a view, its wire-form dict or None; raise on anything else."""
    allowed = _RESULT_VIEWS if result else _CALL_VIEWS
    if value is None or isinstance(value, allowed):
        return value
    if isinstance(value, Mapping):
        try:
            return view_from_json(value, result=result)
        except KeyError as exc:
            raise ValueError(f"returned a view missing {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"returned an invalid view: {error_message(exc)}"
            ) from None
    if inspect.isawaitable(value):
        if inspect.iscoroutine(value):
            value.close()
        raise TypeError("returned an awaitable; presenters must be synchronous")
    expected = "a result view" if result else "a call view"
    raise TypeError(
        f"returned {type(value).__name__}, expected {expected}, "
        "its dict form (with a 'card' key) or None"
    )
