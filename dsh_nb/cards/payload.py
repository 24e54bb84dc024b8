"""The card's JSON part: the render intent the JupyterLab renderer draws.

It is built from the same :class:`~dsh_nb.cards.layout.CardLayout` as the
HTML, so both parts show the same content, bounded the same way:

- ``call`` and ``result`` are the views' wire form. Once a result is there,
  it replaces the pending content (contract §7.3): the call keeps its title,
  kind, raw input and locations, but not its ``content`` or ``diffs``.
- A diff view's ``diffs`` are planned hunks, never the two whole texts:
  ``{"path", "newFile"?, "crlf"?, "added", "removed", "rows", "shown",
  "skipped"?, "notice"?, "after"?, "hunks": [{"header", "oldStart",
  "newStart", "gap"?, "lines"}]}``. ``oldStart``/``newStart`` are the first
  line numbers; a line is its kind (``" "``, ``"-"``, ``"+"``, ``"\\"``)
  followed by its text, or ``{"more", "old", "new"}`` for rows a cut hides.
- Content blocks, the raw input and terminal output are cut to the limits;
  a cut one says so in ``truncated``: ``{"shown", "total", "unit"}``.
- ``limits`` (``maxOutputLines``, ``maxOutputChars``, ``maxDiffLines``),
  where they differ from ``CardLimits()``: the renderer never draws more.
- Terminal output is parsed here: ``outputSpans`` (``[text, style]``) and
  ``outputStyles`` (``{"fg"?, "bg"?, "bold"?, ...}``, colours ``#rrggbb``).
"""

from __future__ import annotations

import math
from typing import Any

from dsh_nb.cards.ansi import ansi_spans
from dsh_nb.cards.bounds import Shown
from dsh_nb.cards.hunks import FilePlan, Gap, Skip
from dsh_nb.cards.layout import CardLayout
from dsh_nb.cards.model import CardLimits
from dsh_nb.cards.talk import talk_json
from dsh_nb.tools.shown import shown

__all__ = ["card_payload", "plan_json"]


def _truncated(shown: int, total: int, unit: str) -> dict[str, Any]:
    return {"shown": shown, "total": total, "unit": unit}


def plan_json(plan: FilePlan) -> dict[str, Any]:
    """One file's planned diff in wire form (see the module docstring)."""
    out: dict[str, Any] = {"path": plan.path}
    if plan.new_file:
        out["newFile"] = True
    if plan.crlf:
        out["crlf"] = True
    out["added"] = plan.added
    out["removed"] = plan.removed
    out["rows"] = plan.total
    out["shown"] = plan.shown
    if plan.skipped:
        out["skipped"] = plan.skipped
    if plan.truncated:
        out["notice"] = plan.truncated
    hunks: list[dict[str, Any]] = []
    gap = 0
    for block in plan.blocks:
        if isinstance(block, Gap):
            gap = block.count
            continue
        lines: list[Any] = []
        for row in block.rows:
            if isinstance(row, Skip):
                lines.append({"more": row.rows, "old": row.old, "new": row.new})
                continue
            kind, _, _, text, cr = row
            if kind == "\\":
                lines.append(text)
                continue
            lines.append(kind + text + ("\r" if cr and not plan.crlf else ""))
        hunk: dict[str, Any] = {
            "header": block.header,
            "oldStart": block.old_start + 1,
            "newStart": block.new_start + 1,
        }
        if gap:
            hunk["gap"] = gap
            gap = 0
        hunk["lines"] = lines
        hunks.append(hunk)
    out["hunks"] = hunks
    if gap:
        out["after"] = gap
    return out


def _bound_fields(view: dict[str, Any], limit: int) -> None:
    """Cut one-line fields (title, description, cwd) as the HTML does."""
    for key in ("title", "description", "cwd"):
        value = view.get(key)
        if isinstance(value, str) and len(value) > limit:
            view[key] = value[:limit] + "\u2026"
            view[key + "Truncated"] = _truncated(limit, len(value), "characters")


def _blocks(shown: list[Shown]) -> list[Any]:
    out: list[Any] = []
    for item in shown:
        if item.block is not None:
            out.append(item.block)
            continue
        block: dict[str, Any] = {"type": item.kind or "text", "text": item.text}
        if item.caption is not None:
            block["caption"] = item.caption
        if item.picture is not None:
            block["mimeType"] = item.mime
            block["data"] = item.picture
        if item.notice:
            block["notice"] = item.notice
        if item.total > len(item.text):
            block["truncated"] = _truncated(len(item.text), item.total, "characters")
        out.append(block)
    return out


def _call(card: CardLayout, done: bool) -> dict[str, Any] | None:
    call = card.model.call
    if call is None:
        return None
    out = call.to_json()
    _bound_fields(out, card.limits.max_output_chars)
    if card.raw is not None:
        out["rawInput"] = card.raw.text if card.raw.notice else out["rawInput"]
        if card.raw.notice:
            out["rawInputTruncated"] = _truncated(
                len(card.raw.text), card.raw.total, "characters"
            )
    if done:
        # The result's content replaces the pending content (contract §7.3).
        out.pop("content", None)
        out.pop("diffs", None)
    elif "content" in out:
        out["content"] = _blocks(card.blocks)
    if "diffs" in out:
        out["diffs"] = [plan_json(p) for p in card.plans()]
    return out


def _result(card: CardLayout) -> dict[str, Any] | None:
    result = card.model.result
    if result is None:
        return None
    out = result.to_json()
    _bound_fields(out, card.limits.max_output_chars)
    if "content" in out:
        out["content"] = _blocks(card.blocks)
    if "diffs" in out:
        out["diffs"] = [plan_json(p) for p in card.plans()]
    if "output" in out:
        del out["output"]
        spans, styles = ansi_spans(card.output or "")
        out["outputSpans"] = spans
        out["outputStyles"] = styles
        if card.output_dropped:
            out["outputTruncated"] = _truncated(
                card.output_total - card.output_dropped,
                card.output_total,
                "characters",
            )
    return out


_DEFAULT = CardLimits()


def _limits(card: CardLayout) -> dict[str, int]:
    """The limits the renderer must keep to, where they differ from default."""
    pairs = (
        ("maxOutputLines", "max_output_lines"),
        ("maxOutputChars", "max_output_chars"),
        ("maxDiffLines", "max_diff_lines"),
    )
    return {
        wire: getattr(card.limits, name)
        for wire, name in pairs
        if getattr(card.limits, name) != getattr(_DEFAULT, name)
    }


def card_payload(card: CardLayout) -> dict[str, Any]:
    """Build the JSON render intent of one call (wire names, JSON only)."""
    model = card.model
    out: dict[str, Any] = {"tool": model.tool}
    if model.call_id is not None:
        out["callId"] = model.call_id
    out["status"] = model.status
    out["isError"] = model.is_error
    # The title as the HTML card shows it (relative to the session's cwd,
    # cut to one line): renderers draw it, never work it out again.
    out["title"] = card.title
    call = _call(card, model.result is not None)
    if call is not None:
        out["call"] = call
    result = _result(card)
    if result is not None:
        out["result"] = result
    if model.approval is not None:
        out["approval"] = model.approval
    limits = _limits(card)
    if limits:
        out["limits"] = limits
    if model.talk is not None and not model.talk.empty:
        out["talk"] = talk_json(model.talk)
    failure = model.failure
    if failure is not None:
        limit = card.limits.max_output_chars
        out["failure"] = {
            "type": failure.type,
            "message": failure.message[:limit],
            "traceback": failure.traceback[-limit:],
        }
    if model.trace:
        out["trace"] = [
            {"stage": e.stage, "actor": e.actor, "decision": e.decision}
            for e in model.trace
        ]
    # A value that cannot serialize would lose the whole display later, so
    # find it now and drop only this part. to_json() already detached it.
    _check_json(out)
    return out


def _check_json(value: Any) -> None:
    """Raise if ``value`` is not JSON; cost is per node, not per character."""
    stack = [value]
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, (str, bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError(f"{item!r} is not JSON")
        elif isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    raise TypeError(f"JSON object keys must be str; got {shown(key)}")
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            raise TypeError(f"{type(item).__name__} is not JSON: {shown(item)}")
