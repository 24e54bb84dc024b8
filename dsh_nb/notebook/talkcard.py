"""A live card hears its call's ``ToolContext``: progress and log lines.

It also draws what a sample asked and answered (lines of source
``"sample"``, from :mod:`~dsh_nb.notebook.sampling`), and keeps its status
through the approval a sample asks for (:meth:`TalkingCard.beside_call`).

Mixed into :class:`~dsh_nb.notebook.live.LiveCall`, which is a hearer of
its call as the view the runner hands the pipeline. The card keeps a
:class:`~dsh_nb.cards.talk.CardTalk` snapshot and redraws at most about
ten times a second however fast the tool talks (the context already
throttles progress and bounds lines; this bounds the redraws of a tool
that prints in a tight loop).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from dsh_nb.cards.talk import CardTalk
from dsh_nb.tools.context import LogLine, Progress

__all__ = ["TalkingCard"]

_REDRAW_S: Final = 0.1
_SILENT: Final = CardTalk()


class TalkingCard:
    """Progress and lines for a live card; it redraws through ``_refresh``."""

    _talk: CardTalk = _SILENT
    _talk_redraw: asyncio.TimerHandle | None = None
    _status: str  # the card's own
    _approval: str | None

    @contextmanager
    def beside_call(self) -> Iterator[None]:
        """An approval for what the running call does (a model request).

        The prompt shows under the card as a call's own does, but the call
        is not what was asked about: afterwards the card is back to its
        status and its call's approval (the sample's outcome is drawn in
        the talk lines, and journaled by the approval service).
        """
        status, approval = self._status, self._approval
        try:
            yield
        finally:
            if self._status == "awaiting-approval":
                self._status, self._approval = status, approval
                self._refresh()

    def _refresh(self, *, now: bool = False) -> None:  # the card's own
        raise NotImplementedError

    def progress(self, ctx: Any, report: Progress) -> None:
        self._talk = self._talk.with_progress(report)
        self._redraw_soon()

    def log(self, ctx: Any, line: LogLine) -> None:
        self._talk = self._talk.with_line(line)
        self._redraw_soon()

    def _redraw_soon(self) -> None:
        if self._talk_redraw is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._refresh()
            return
        self._talk_redraw = loop.call_later(_REDRAW_S, self._redraw)

    def _redraw(self) -> None:
        self._talk_redraw = None
        self._refresh()

    def _drop_redraw(self) -> None:
        """The card is being sent whole now: a redraw queued for the talk
        would only resend it, after the call ended, into whichever cell
        then runs."""
        if self._talk_redraw is not None:
            self._talk_redraw.cancel()
            self._talk_redraw = None
