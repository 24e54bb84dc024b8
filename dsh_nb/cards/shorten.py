"""A planned diff shortened for the static parts: both sides of every hunk.

The JSON part keeps every planned row (JupyterLab draws them); the HTML and
Markdown parts, which a saved notebook carries to VS Code, Colab, nbviewer
and GitHub, draw the first ``CardLimits.max_fallback_diff_lines`` rows.
Whole hunks first; the hunk that does not fit is cut again as the plan cuts
(:func:`~dsh_nb.cards.hunks.cut_rows`), so a rewrite shows the start of
what was removed *and* of what was added, each followed by a count of the
rows left out, never only the first rows of the removal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dsh_nb.cards.hunks import FilePlan, Hunk, Row, Skip, cut_rows

__all__ = ["shorten_plans"]

_KINDS = {" ": "=", "-": "-", "+": "+"}


def runs(rows: Sequence[Row | Skip]) -> list[tuple[str, list[Row | Skip]]]:
    """A hunk's rows as its runs again: context, removal, addition.

    A skip or a "no newline" mark belongs to the run before it (a leading
    skip to the first run).
    """
    out: list[tuple[str, list[Row | Skip]]] = []
    held: list[Row | Skip] = []
    for row in rows:
        kind = None if isinstance(row, Skip) else _KINDS.get(row[0])
        if kind is None:
            (out[-1][1] if out else held).append(row)
        elif out and out[-1][0] == kind:
            out[-1][1].append(row)
        else:
            out.append((kind, [*held, row]))
            held = []
    if held:
        out.append(("=", held))
    return out


def _cut(hunk: Hunk, rows: int) -> Hunk:
    return replace(hunk, rows=cut_rows(runs(hunk.rows), rows))


def shorten_plans(plans: Sequence[FilePlan], rows: int) -> list[FilePlan]:
    """The first ``rows`` drawn rows of planned files, both sides per hunk.

    Each file cut short says so, and where the rest is.
    """
    out: list[FilePlan] = []
    left = rows
    for plan in plans:
        if plan.shown <= left:
            out.append(plan)
            left -= plan.shown
            continue
        short = replace(plan, blocks=[], shown=0)
        for block in plan.blocks:
            if isinstance(block, Hunk):
                if block.shown > left and short.shown:
                    break
                if block.shown > left:  # a first hunk alone over the budget
                    block = _cut(block, left)
                short.shown += block.shown
                left -= block.shown
            short.blocks.append(block)
        short.truncated = (
            f"shortened here: {short.shown:,} of {plan.shown:,} rows drawn; "
            "JupyterLab shows the card's whole diff"
        )
        out.append(short)
    return out
