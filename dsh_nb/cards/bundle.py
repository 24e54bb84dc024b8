"""Render one tool call as a rich display: JSON intent, HTML, Markdown, text.

:func:`render_card` returns a :class:`ToolCard`, whose MIME bundle carries:

``application/vnd.dsh.tool-card+json`` (:data:`CARD_MIME`)
    The render intent for the JupyterLab renderer, with wire names::

        {"tool", "callId"?, "status", "isError", "call"?, "result"?,
         "approval"?, "trace"?: [{"stage", "actor", "decision"}]}

    ``call``/``result`` are the views' wire form, bounded and with diffs as
    planned hunks (see :mod:`~dsh_nb.cards.payload`). The session working
    folder (``cwd``, which file paths resolve against) differs per machine,
    so it travels in the display metadata with the other volatile values.
``text/html``
    A self-contained card: inline styles, theme variables with fallbacks, no
    script, no links, every tool string escaped.
``text/markdown``, ``text/plain``
    Fallbacks; a terminal card's Markdown is a fenced ``console`` block, a
    diff card's a fenced ``diff`` block.

A big diff is drawn whole only in the JSON part: the HTML draws its first
``CardLimits.max_fallback_diff_lines`` rows and says where the rest is, and
the Markdown part is left out (every frontend that draws Markdown draws the
HTML too), so a saved notebook does not carry every row three times.

The same model always gives byte-identical parts (nbval compares them):
volatile values (``CardModel.meta``, trace durations) go in the display
metadata under :data:`CARD_MIME`, and the call id is never drawn. Each part
is built on its own; one that raises is left out (the error is named in the
metadata under ``renderErrors``) and ``text/plain`` always renders.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Collection
from typing import Any

from dsh_nb.cards.cardhtml import card_html
from dsh_nb.cards.cardtext import card_markdown, card_plain
from dsh_nb.cards.escape import visible
from dsh_nb.cards.layout import CardLayout
from dsh_nb.cards.model import (
    CALL_VIEWS,
    CARD_MIME,
    RESULT_VIEWS,
    CardLimits,
    CardModel,
    TraceEntry,
)
from dsh_nb.cards.payload import card_payload
from dsh_nb.cards.shorten import shorten_plans
from dsh_nb.tools.errors import error_message
from dsh_nb.tools.presentation import ToolCallView, ToolResultView
from dsh_nb.tools.surrogates import escape_tree

__all__ = [
    "CARD_MIME",
    "CardLimits",
    "CardModel",
    "ToolCard",
    "TraceEntry",
    "render_card",
]


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {error_message(exc)}"


def _metadata(model: CardModel, errors: dict[str, str]) -> dict[str, Any]:
    volatile: dict[str, Any] = {}
    if model.meta:
        try:
            volatile["meta"] = json.loads(json.dumps(dict(model.meta), default=str))
        except (TypeError, ValueError) as exc:
            errors["metadata"] = _describe(exc)
    durations = [e.duration_ms for e in model.trace]
    if any(d is not None for d in durations):
        volatile["traceDurationsMs"] = durations
    if model.cwd is not None:
        volatile["cwd"] = model.cwd
    if errors:
        volatile["renderErrors"] = dict(errors)
    return {CARD_MIME: volatile} if volatile else {}


class ToolCard:
    """A rendered card: display it, or read its MIME parts.

    Built by :func:`render_card`; ``repr()`` is the ``text/plain`` part.
    """

    __slots__ = ("_data", "_metadata")

    def __init__(self, data: dict[str, Any], metadata: dict[str, Any]) -> None:
        self._data = data
        self._metadata = metadata

    @property
    def data(self) -> dict[str, Any]:
        """The MIME bundle's data, keyed by MIME type."""
        return dict(self._data)

    @property
    def metadata(self) -> dict[str, Any]:
        """The display metadata: volatile values under :data:`CARD_MIME`."""
        return dict(self._metadata)

    def _repr_mimebundle_(
        self,
        include: Collection[str] | None = None,
        exclude: Collection[str] | None = None,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        keep = [
            mime
            for mime in self._data
            if (include is None or mime in include)
            and (exclude is None or mime not in exclude)
        ]
        data = {mime: self._data[mime] for mime in keep}
        metadata = {m: v for m, v in self._metadata.items() if m in keep}
        return data, metadata

    def __repr__(self) -> str:
        text: str = self._data["text/plain"]
        return text


def _as_model(obj: object) -> CardModel:
    if isinstance(obj, CardModel):
        return obj
    if isinstance(obj, CALL_VIEWS):
        call: ToolCallView = obj
        return CardModel(tool="", status="pending", call=call)
    if isinstance(obj, RESULT_VIEWS):
        result: ToolResultView = obj
        return CardModel(tool="", status="done", result=result)
    raise TypeError(
        "render_card() takes a CardModel, a call view or a result view "
        f"(see dsh_nb.tools.presentation); got {obj!r}"
    )


def _for_fallbacks(card: CardLayout) -> CardLayout:
    """The card the HTML and Markdown parts draw: its diffs cut to
    ``max_fallback_diff_lines`` rows (the JSON part keeps them all).

    A 10,000-line file with 1% changed adds 100 KB to a saved notebook,
    not 250 KB (benchmarks/render.py prints the figure).
    """
    rows = card.limits.max_fallback_diff_lines
    if not card.diffs or sum(p.shown for p in card.plans()) <= rows:
        return card
    lean = copy.copy(card)
    lean._plans = shorten_plans(card.plans(), rows)
    return lean


def render_card(obj: object, *, limits: CardLimits | None = None) -> ToolCard:
    """Render a call as a displayable card.

    Parameters
    ----------
    obj
        A :class:`CardModel`; or a call view alone (shown as ``pending``); or
        a result view alone (shown as ``done``).
    limits
        Size limits; ``CardLimits()`` by default.

    Returns
    -------
    ToolCard
        Display it (``display(card)``) or read ``card.data``.
    """
    model = _as_model(obj)
    if limits is None:
        limits = CardLimits()
    elif not isinstance(limits, CardLimits):
        raise TypeError(f"limits must be a CardLimits; got {limits!r}")
    errors: dict[str, str] = {}
    data: dict[str, Any] = {}
    card: CardLayout | None = None
    try:
        card = CardLayout(model, limits)
    except Exception as exc:  # noqa: BLE001 - the plain fallback still renders
        errors["card"] = _describe(exc)
    if card is not None:
        try:
            data[CARD_MIME] = card_payload(card)
        except Exception as exc:  # noqa: BLE001 - one broken part hides no other
            errors[CARD_MIME] = _describe(exc)
    if card is not None:
        lean = _for_fallbacks(card)
        parts = [("text/html", card_html), ("text/markdown", card_markdown)]
        if lean is not card:
            # A big card: every frontend that draws Markdown draws the HTML
            # too, so a third copy of the rows would only weigh the file.
            del parts[1]
        for mime, build in parts:
            try:
                data[mime] = build(lean)
            except Exception as exc:  # noqa: BLE001 - named in renderErrors
                errors[mime] = _describe(exc)
    plain = None
    if card is not None:
        try:
            plain = card_plain(card)
        except Exception as exc:  # noqa: BLE001 - the plain fallback renders
            errors["text/plain"] = _describe(exc)
    if plain is None:
        plain = f"[{model.status}] {visible(model.tool or 'tool call')}"
    data["text/plain"] = plain
    # Lone surrogates cannot be encoded to send the display: the JSON part
    # and the metadata get the [U+D800] marker the text parts already show.
    return ToolCard(escape_tree(data), escape_tree(_metadata(model, errors)))
