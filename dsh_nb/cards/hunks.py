"""Unified diffs of ``FileDiff`` values, planned once, drawn as HTML or text.

The plan uses :class:`difflib.SequenceMatcher` opcodes grouped with three
lines of context (``get_grouped_opcodes(3)``), computed by its subclass
:class:`AnchoredMatcher` so scattered edits in a big file stay fast, and
never ``difflib.HtmlDiff``, whose intraline pass is quadratic (10 s for a
1,000-line rewrite). Lines are compared with their
endings, so a CRLF-to-LF change shows; a file whose two sides are all CRLF
shows its lines without the CR and says so once.

A card has one row budget (``CardLimits.max_diff_lines``). Hunks spend it
first, in file order; what is left pays for the unchanged regions between
hunks, which render collapsed in ``<details>``. A region that no longer fits
shows only its line count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Final

from dsh_nb.cards.linematch import AnchoredMatcher
from dsh_nb.cards.model import CardLimits
from dsh_nb.tools.presentation import FileDiff

__all__ = [
    "NO_EOL",
    "FilePlan",
    "Gap",
    "Hunk",
    "Row",
    "diff_text",
    "gap_rows",
    "looks_binary",
    "plan_diffs",
]

# kind (" ", "-", "+", "\\"), old line number, new line number (0 = none),
# text without its line ending, whether that ending was CRLF.
Row = tuple[str, int, int, str, bool]
_Opcode = tuple[str, int, int, int, int]

_CONTEXT: Final = 3
NO_EOL: Final = "\\ No newline at end of file"
_UNENDED: Final = "\x00"
_ODD: Final = re.compile("[\x01-\x07\x0e-\x1a\x1c-\x1f\x7f\ufffd]")


@dataclass(slots=True, kw_only=True)
class Hunk:
    header: str
    rows: list[Row]


@dataclass(slots=True, kw_only=True)
class Gap:
    """An unchanged region; ``included`` when the budget covers its rows."""

    count: int
    old_start: int
    new_start: int
    included: bool = False

    def ends_file(self, plan: FilePlan) -> bool:
        """Whether the region holds the file's last line, lacking a newline."""
        a = plan.old_lines
        return self.old_start + self.count == len(a) and a[-1].endswith(_UNENDED)


@dataclass(slots=True, kw_only=True)
class FilePlan:
    """What one file's diff shows; built by :func:`plan_diffs`."""

    path: str
    new_file: bool = False
    skipped: str | None = None
    truncated: str | None = None
    added: int = 0
    removed: int = 0
    crlf: bool = False
    width: int = 1
    blocks: list[Hunk | Gap] = field(default_factory=list)
    old_lines: list[str] = field(default_factory=list)


def looks_binary(text: str) -> bool:
    """Return whether ``text`` looks like decoded binary data.

    A NUL anywhere, or more than 10% odd control or replacement characters in
    the first 8 KiB (tab, newline, CR, form feed, backspace and ESC are not
    odd: logs use them).
    """
    if "\x00" in text:
        return True
    sample = text[:8192]
    return bool(sample) and len(_ODD.findall(sample)) * 10 > len(sample)


def _byte_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _split(text: str) -> list[str]:
    """Split into lines without ``\\n``; a last line lacking one gets a NUL.

    The NUL (never in text that reaches here: :func:`looks_binary` rejects
    it) makes ``"x"`` and ``"x\\n"`` differ as last lines, as in ``diff``.
    """
    lines = text.split("\n")
    last = lines.pop()
    if last:
        lines.append(last + _UNENDED)
    return lines


def _row(kind: str, old: int, new: int, line: str) -> Row:
    line = line.removesuffix(_UNENDED)
    if line.endswith("\r"):
        return (kind, old, new, line[:-1], True)
    return (kind, old, new, line, False)


_MARK: Final[Row] = ("\\", 0, 0, NO_EOL, False)


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _hunk_rows(group: Sequence[_Opcode], a: list[str], b: list[str]) -> Iterator[Row]:
    a_end = len(a) if a and a[-1].endswith(_UNENDED) else -1
    b_end = len(b) if b and b[-1].endswith(_UNENDED) else -1
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            for k in range(i2 - i1):
                yield _row(" ", i1 + k + 1, j1 + k + 1, a[i1 + k])
            if i2 == a_end:
                yield _MARK
            continue
        for i in range(i1, i2):
            yield _row("-", i + 1, 0, a[i])
        if i2 == a_end and i2 > i1:
            yield _MARK
        for j in range(j1, j2):
            yield _row("+", 0, j + 1, b[j])
        if j2 == b_end and j2 > j1:
            yield _MARK


def _count_rows(group: Sequence[_Opcode], a: list[str], b: list[str]) -> int:
    a_end = len(a) if a and a[-1].endswith(_UNENDED) else -1
    b_end = len(b) if b and b[-1].endswith(_UNENDED) else -1
    total = 0
    for tag, i1, i2, j1, j2 in group:
        total += (i2 - i1) + (0 if tag == "equal" else j2 - j1)
        total += i2 == a_end and (tag == "equal" or i2 > i1)
        total += tag != "equal" and j2 == b_end and j2 > j1
    return total


def _all_crlf(lines: list[str]) -> bool:
    ended = lines[:-1] if lines and lines[-1].endswith(_UNENDED) else lines
    return all(line.endswith("\r") for line in ended)


def _plan_text(
    plan: FilePlan, old: str | None, new: str, budget: int, limit: int
) -> int:
    a = _split(old) if old is not None else []
    b = _split(new)
    plan.new_file = old is None
    plan.old_lines = a
    has_crlf = "\r\n" in new or (old is not None and "\r\n" in old)
    plan.crlf = has_crlf and _all_crlf(a) and _all_crlf(b)
    plan.width = len(str(max(len(a), len(b), 1)))
    groups: list[list[_Opcode]]
    if old is None:
        groups = [[("insert", 0, 0, 0, len(b))]] if b else []
        plan.added = len(b)
    else:
        matcher = AnchoredMatcher(a, b)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                plan.removed += i2 - i1
                plan.added += j2 - j1
        groups = list(matcher.get_grouped_opcodes(_CONTEXT))
    if not groups:
        plan.skipped = "empty file" if old is None else "no changes"
        return budget
    total = sum(_count_rows(g, a, b) for g in groups)
    shown = 0
    prev_i = prev_j = 0
    for group in groups:
        if budget <= 0:
            break
        first_i, first_j = group[0][1], group[0][3]
        if first_i > prev_i:
            plan.blocks.append(
                Gap(count=first_i - prev_i, old_start=prev_i, new_start=prev_j)
            )
        header = (
            f"@@ -{_range(first_i, group[-1][2])} +{_range(first_j, group[-1][4])} @@"
        )
        rows = list(islice(_hunk_rows(group, a, b), budget))
        budget -= len(rows)
        shown += len(rows)
        plan.blocks.append(Hunk(header=header, rows=rows))
        prev_i, prev_j = group[-1][2], group[-1][4]
    if shown < total:
        plan.truncated = (
            f"diff truncated: {shown:,} of {total:,} rows shown "
            f"(limit {limit:,} rows per card)"
        )
    elif prev_i < len(a):
        plan.blocks.append(
            Gap(count=len(a) - prev_i, old_start=prev_i, new_start=prev_j)
        )
    return budget


def gap_rows(plan: FilePlan, gap: Gap) -> list[Row]:
    """Return an unchanged region's rows (the HTML draws them faster)."""
    a = plan.old_lines
    rows = [
        _row(" ", gap.old_start + k + 1, gap.new_start + k + 1, a[gap.old_start + k])
        for k in range(gap.count)
    ]
    if gap.ends_file(plan):
        rows.append(_MARK)
    return rows


def plan_diffs(diffs: Sequence[FileDiff], limits: CardLimits) -> list[FilePlan]:
    """Plan every file's hunks and collapsed regions within the card budget."""
    budget = limits.max_diff_lines
    plans = []
    for diff in diffs:
        plan = FilePlan(path=diff.path)
        old, new = diff.old_text, diff.new_text
        size = max(_byte_len(new), 0 if old is None else _byte_len(old))
        if size > limits.max_diff_bytes:
            plan.skipped = (
                f"too large to diff: {size:,} bytes "
                f"(limit {limits.max_diff_bytes:,} bytes per file)"
            )
        elif looks_binary(new) or (old is not None and looks_binary(old)):
            plan.skipped = f"binary content, {_byte_len(new):,} bytes, not shown"
        elif budget <= 0:
            plan.skipped = (
                f"not shown: the card's limit of {limits.max_diff_lines:,} "
                "diff rows was reached"
            )
        else:
            budget = _plan_text(plan, old, new, budget, limits.max_diff_lines)
        plans.append(plan)
    for plan in plans:
        for block in plan.blocks:
            if isinstance(block, Gap):
                cost = block.count + block.ends_file(plan)
                if cost <= budget:
                    block.included = True
                    budget -= cost
    return plans


def diff_text(plan: FilePlan) -> str:
    """Return one planned file as unified-diff text (hunks only)."""
    out = [
        "--- /dev/null" if plan.new_file else f"--- {plan.path}",
        f"+++ {plan.path}",
    ]
    if plan.skipped:
        out.append(plan.skipped)
    for block in plan.blocks:
        if isinstance(block, Hunk):
            out.append(block.header)
            out.extend(
                text if kind == "\\" else kind + text
                for kind, _, _, text, _ in block.rows
            )
    if plan.truncated:
        out.append(plan.truncated)
    return "\n".join(out)
