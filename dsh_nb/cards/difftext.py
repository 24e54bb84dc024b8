"""Say what a planned diff shows, in words and as unified-diff text.

The HTML, the labextension and the text parts count unchanged regions and
cut rows the same way; the phrases live here.
"""

from __future__ import annotations

from dsh_nb.cards.hunks import FilePlan, Skip

__all__ = ["diff_text", "gap_text", "skip_text"]


def gap_text(count: int) -> str:
    """Say how long an unchanged region is: ``⋯ 96 unchanged lines``."""
    return f"\u22ef {count:,} unchanged line{'s' * (count != 1)}"


def skip_text(skip: Skip) -> str:
    """Say what a cut hides: ``⋯ 12 more rows``."""
    return f"\u22ef {skip.rows:,} more row{'s' * (skip.rows != 1)}"


def diff_text(plan: FilePlan, max_rows: int | None = None) -> str:
    """Return one planned file as unified-diff text (hunks and cut markers).

    ``max_rows`` stops after that many rows with a count of the rest.
    """
    out = [
        "--- /dev/null" if plan.new_file else f"--- {plan.path}",
        f"+++ {plan.path}",
    ]
    if plan.skipped:
        out.append(plan.skipped)
    rows = 0
    for hunk in plan.hunks():
        if max_rows is not None and rows >= max_rows:
            break
        out.append(hunk.header)
        for row in hunk.rows:
            if max_rows is not None and rows >= max_rows:
                break
            if isinstance(row, Skip):
                out.append(skip_text(row))
                continue
            kind, _, _, text, _ = row
            out.append(text if kind == "\\" else kind + text)
            rows += 1
    if rows < plan.shown:
        out.append(f"\u22ef {plan.shown - rows:,} more rows in the rich display")
    if plan.truncated:
        out.append(plan.truncated)
    return "\n".join(out)
