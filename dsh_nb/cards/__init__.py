"""Cards: how one tool call is drawn, with no Jupyter imports.

A :class:`CardModel` (the call's state) becomes a :class:`ToolCard` through
:func:`render_card`: the JSON render intent for the JupyterLab renderer
(:data:`CARD_MIME`), a self-contained ``text/html`` card, and ``text/markdown``
and ``text/plain`` fallbacks. Everything here is pure Python, so a script, a
server or a test draws the same cards the notebook shows.

Module map: :mod:`~dsh_nb.cards.model` (the values), :mod:`~.layout`
(what every part draws), :mod:`~.bounds` (the limits, applied once),
:mod:`~.hunks`, :mod:`~.linematch` and :mod:`~.difftext` (diff rows, hunks
and their words), :mod:`~.ansi` (terminal colours), :mod:`~.escape` (the
one escape), :mod:`~.markup` (palette and tags), :mod:`~.cardhtml`,
:mod:`~.diffhtml` and :mod:`~.cardtext` (the parts), :mod:`~.payload` (the
JSON part), :mod:`~.bundle` (the MIME bundle), :mod:`~.listing` (the
magics' tables), :mod:`~.arguments` (a call's arguments for the prompt),
:mod:`~.shorten` (a big diff cut for the static parts, both sides per
hunk), :mod:`~.question` (a question for a person as one line, and its
answers), :mod:`~.callcard` (one card from one call, or from a journal's
call: the live card, replay, the evaluation report and the demo all draw
through it) and :mod:`~.callbook` (a journal's calls, event by event).
"""

# ruff: noqa: F401 - the type checkers' view of the names below, which
# are exported by the table: ``__all__`` is built from it, not written out.

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.cards.bundle import ToolCard, render_card
    from dsh_nb.cards.callcard import CardView, call_card, entry_card
    from dsh_nb.cards.model import (
        CARD_MIME,
        STATUSES,
        CardLimits,
        CardModel,
        TraceEntry,
    )

# The one list of this face: each public name and the module that defines
# it. ``__all__`` is built from it; the imports above are the type
# checkers' view of the same names (tests/unit/test_lazy_faces.py holds
# the two together).
_PUBLIC = {
    "CARD_MIME": "dsh_nb.cards.model",
    "STATUSES": "dsh_nb.cards.model",
    "CardLimits": "dsh_nb.cards.model",
    "CardModel": "dsh_nb.cards.model",
    "CardView": "dsh_nb.cards.callcard",
    "ToolCard": "dsh_nb.cards.bundle",
    "TraceEntry": "dsh_nb.cards.model",
    "call_card": "dsh_nb.cards.callcard",
    "entry_card": "dsh_nb.cards.callcard",
    "render_card": "dsh_nb.cards.bundle",
}

__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_face(__name__, _PUBLIC)
