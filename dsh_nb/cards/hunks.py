"""Unified-diff hunks of ``FileDiff`` values, planned once for every part.

The plan uses :class:`difflib.SequenceMatcher` opcodes grouped with three
lines of context (``get_grouped_opcodes(3)``), computed by its subclass
:class:`~dsh_nb.cards.linematch.AnchoredMatcher` so scattered edits in a
big file stay fast, and never ``difflib.HtmlDiff``, whose intraline pass is
quadratic. Lines are compared with their endings, so a CRLF-to-LF change
shows; a file whose two sides are all CRLF shows its lines without the CR
and says so once. "\\ No newline at end of file" appears only where the two
sides differ in that respect; it is noise when both end the same way.

A card has one row budget (``CardLimits.max_diff_lines``) shared by all its
hunks. When the hunks need more, every hunk gets a fair share (the smallest
hunks whole, the rest an equal part), and within a hunk a change shows the
start of both its removed and its added lines, so a full rewrite still
shows new text. Each cut is a :class:`Skip` that says how many rows it
hides. The unchanged regions between hunks are counted, never drawn: the
JSON part carries hunks only, and the HTML shows what the JSON does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from dsh_nb.cards.linematch import AnchoredMatcher
from dsh_nb.cards.model import CardLimits
from dsh_nb.tools.presentation import FileDiff

__all__ = [
    "NO_EOL",
    "FilePlan",
    "Gap",
    "Hunk",
    "Row",
    "Skip",
    "cut_rows",
    "looks_binary",
    "plan_diffs",
]

# kind (" ", "-", "+", "\\"), old line number, new line number (0 = none),
# text without its line ending, whether that ending was CRLF.
Row = tuple[str, int, int, str, bool]
_Opcode = tuple[str, int, int, int, int]


class Skip(NamedTuple):
    """Rows a truncated hunk does not show: how many, and the lines they span."""

    rows: int
    old: int
    new: int


_CONTEXT: Final = 3
_MIN_SHARE: Final = 2
NO_EOL: Final = "\\ No newline at end of file"
_UNENDED: Final = "\x00"
_ODD: Final = re.compile("[\x01-\x07\x0e-\x1a\x1c-\x1f\x7f\ufffd]")
_MARK: Final[Row] = ("\\", 0, 0, NO_EOL, False)


@dataclass(slots=True, kw_only=True)
class Hunk:
    """One hunk: its ranges (0-based starts), rows shown and rows in all."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    total: int
    rows: list[Row | Skip] = field(default_factory=list)

    @property
    def header(self) -> str:
        """The unified-diff header, ``@@ -7,7 +7,7 @@``."""
        old = _range(self.old_start, self.old_count)
        new = _range(self.new_start, self.new_count)
        return f"@@ -{old} +{new} @@"

    @property
    def shown(self) -> int:
        """How many rows are drawn (skips excluded)."""
        return sum(1 for row in self.rows if not isinstance(row, Skip))


@dataclass(slots=True, kw_only=True)
class Gap:
    """An unchanged region between hunks, shown as its line count."""

    count: int
    old_start: int
    new_start: int


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
    total: int = 0
    shown: int = 0
    blocks: list[Hunk | Gap] = field(default_factory=list)

    def hunks(self) -> list[Hunk]:
        """The plan's hunks, in file order."""
        return [b for b in self.blocks if isinstance(b, Hunk)]


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


def _range(start: int, length: int) -> str:
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


class _Side(NamedTuple):
    lines: list[str]
    end: int  # index one past a last line lacking its newline, to mark; or -1


def _sides(a: list[str], b: list[str]) -> tuple[_Side, _Side]:
    """Mark a missing final newline only where the two sides differ on it."""
    a_open = bool(a) and a[-1].endswith(_UNENDED)
    b_open = bool(b) and b[-1].endswith(_UNENDED)
    mark = a_open != b_open and bool(a) and bool(b)
    return (
        _Side(a, len(a) if mark and a_open else -1),
        _Side(b, len(b) if mark and b_open else -1),
    )


def _pieces(
    group: Sequence[_Opcode], a: _Side, b: _Side
) -> list[tuple[str, list[Row]]]:
    """Split a hunk into runs: ``("=", rows)``, ``("-", rows)``, ``("+", rows)``."""
    out: list[tuple[str, list[Row]]] = []
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            rows = [
                _row(" ", i1 + k + 1, j1 + k + 1, a.lines[i1 + k])
                for k in range(i2 - i1)
            ]
            if i2 == a.end:
                rows.append(_MARK)
            out.append(("=", rows))
            continue
        if i2 > i1:
            rows = [_row("-", i + 1, 0, a.lines[i]) for i in range(i1, i2)]
            if i2 == a.end:
                rows.append(_MARK)
            out.append(("-", rows))
        if j2 > j1:
            rows = [_row("+", 0, j + 1, b.lines[j]) for j in range(j1, j2)]
            if j2 == b.end:
                rows.append(_MARK)
            out.append(("+", rows))
    return out


def _count(group: Sequence[_Opcode], a: _Side, b: _Side) -> int:
    total = 0
    for tag, i1, i2, j1, j2 in group:
        total += (i2 - i1) + (0 if tag == "equal" else j2 - j1)
        total += i2 == a.end and (tag == "equal" or i2 > i1)
        total += tag != "equal" and j2 == b.end and j2 > j1
    return total


def _skip(items: Sequence[Row | Skip]) -> Skip:
    """One :class:`Skip` for ``items`` (rows, and skips already made)."""
    rows = old = new = 0
    for item in items:
        if isinstance(item, Skip):
            rows, old, new = rows + item.rows, old + item.old, new + item.new
        else:
            rows += 1
            old += item[0] in " -" and item[1] > 0
            new += item[0] in " +" and item[2] > 0
    return Skip(rows=rows, old=old, new=new)


def _split_at(items: Sequence[Row | Skip], keep: int) -> int:
    """The index after the first ``keep`` rows of ``items`` (skips count 0)."""
    seen = 0
    for index, item in enumerate(items):
        if seen == keep:
            return index
        seen += not isinstance(item, Skip)
    return len(items)


def _shown(items: Sequence[Row | Skip]) -> int:
    return sum(1 for item in items if not isinstance(item, Skip))


def _head(items: Sequence[Row | Skip], keep: int) -> list[Row | Skip]:
    """The first ``keep`` rows of ``items``, then one skip for the rest."""
    cut = _split_at(items, keep)
    rest = items[cut:]
    return [*items[:cut], _skip(rest)] if rest else list(items)


def cut_rows(
    pieces: Sequence[tuple[str, Sequence[Row | Skip]]], budget: int
) -> list[Row | Skip]:
    """Keep at most ``budget`` rows of a hunk, changes before context.

    ``pieces`` are the hunk's runs (``"="``, ``"-"`` or ``"+"`` and their
    rows, which may hold skips from an earlier cut). Context shrinks first
    (to the lines nearest the change); a removal followed by an addition
    (a change) shares what is left, so the reader sees the start of both.
    Every cut leaves a :class:`Skip`.
    """
    context = min(_CONTEXT, max(1, budget // 6))
    out: list[Row | Skip] = []
    for k, (kind, rows) in enumerate(pieces):
        if kind == "+" and k and pieces[k - 1][0] == "-":
            continue  # drawn with its removal
        if budget <= 0:
            out.append(_skip([r for _, more in pieces[k:] for r in more]))
            break
        count = _shown(rows)
        if kind == "=":
            keep = min(count, context, budget)
            if k == 0 and keep < count:  # leading: keep the nearest lines
                cut = _split_at(rows, count - keep)
                out.append(_skip(rows[:cut]))
                out.extend(rows[cut:])
            else:
                out.extend(_head(rows, keep))
            budget -= keep
            continue
        added: Sequence[Row | Skip] = ()
        if kind == "-" and k + 1 < len(pieces) and pieces[k + 1][0] == "+":
            added = pieces[k + 1][1]
        more = _shown(added)
        keep_old = min(count, max(budget - more, (budget + 1) // 2))
        keep_new = min(more, budget - keep_old)
        out.extend(_head(rows, keep_old))
        if added:
            out.extend(_head(added, keep_new))
        budget -= keep_old + keep_new
    return out


def _shares(totals: list[int], budget: int) -> list[int]:
    """Share ``budget`` rows fairly: small hunks whole, the rest equal parts."""
    if sum(totals) <= budget:
        return list(totals)
    order = sorted(range(len(totals)), key=totals.__getitem__)
    shares = [0] * len(totals)
    left, count = budget, len(totals)
    for pos, index in enumerate(order):
        fair = left // (count - pos)
        if fair < _MIN_SHARE:
            break
        give = min(totals[index], fair)
        shares[index] = give
        left -= give
    else:
        # The floor division left a few rows: give them in file order.
        for index in range(len(totals)):
            extra = min(left, totals[index] - shares[index])
            shares[index] += extra
            left -= extra
        return shares
    # More hunks than the budget can start: the first ones get a minimum.
    shares = [0] * len(totals)
    left = budget
    for index, total in enumerate(totals):
        give = min(total, _MIN_SHARE, left)
        shares[index] = give
        left -= give
    for index, total in enumerate(totals):
        if shares[index]:
            extra = min(left, total - shares[index])
            shares[index] += extra
            left -= extra
    return shares


@dataclass(slots=True)
class _Work:
    plan: FilePlan
    a: _Side
    b: _Side
    groups: list[list[_Opcode]]
    totals: list[int]


def _prepare(plan: FilePlan, old: str | None, new: str) -> _Work | None:
    a_lines = _split(old) if old is not None else []
    b_lines = _split(new)
    a, b = _sides(a_lines, b_lines)
    plan.new_file = old is None
    has_crlf = "\r\n" in new or (old is not None and "\r\n" in old)
    plan.crlf = has_crlf and _all_crlf(a_lines) and _all_crlf(b_lines)
    plan.width = len(str(max(len(a_lines), len(b_lines), 1)))
    groups: list[list[_Opcode]]
    if old is None:
        groups = [[("insert", 0, 0, 0, len(b_lines))]] if b_lines else []
        plan.added = len(b_lines)
    else:
        matcher = AnchoredMatcher(a_lines, b_lines)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "equal":
                plan.removed += i2 - i1
                plan.added += j2 - j1
        groups = list(matcher.get_grouped_opcodes(_CONTEXT))
    if not groups:
        plan.skipped = "empty file" if old is None else "no changes"
        return None
    totals = [_count(g, a, b) for g in groups]
    plan.total = sum(totals)
    return _Work(plan, a, b, groups, totals)


def _all_crlf(lines: list[str]) -> bool:
    ended = lines[:-1] if lines and lines[-1].endswith(_UNENDED) else lines
    return all(line.endswith("\r") for line in ended)


def _build(work: _Work, shares: list[int], limit: int) -> None:
    plan, a = work.plan, work.a
    prev_i = prev_j = 0
    hidden_hunks = 0
    for group, total, share in zip(work.groups, work.totals, shares, strict=True):
        first_i, first_j = group[0][1], group[0][3]
        last_i, last_j = group[-1][2], group[-1][4]
        if share <= 0:
            hidden_hunks += 1
            continue
        if first_i > prev_i:
            plan.blocks.append(
                Gap(count=first_i - prev_i, old_start=prev_i, new_start=prev_j)
            )
        hunk = Hunk(
            old_start=first_i,
            old_count=last_i - first_i,
            new_start=first_j,
            new_count=last_j - first_j,
            total=total,
        )
        pieces = _pieces(group, a, work.b)
        if share >= total:
            hunk.rows = [r for _, rows in pieces for r in rows]
        else:
            hunk.rows = cut_rows(pieces, share)
        plan.shown += hunk.shown
        plan.blocks.append(hunk)
        prev_i, prev_j = last_i, last_j
    if hidden_hunks == 0 and prev_i < len(a.lines):
        plan.blocks.append(
            Gap(count=len(a.lines) - prev_i, old_start=prev_i, new_start=prev_j)
        )
    if plan.shown < plan.total:
        more = f"; {hidden_hunks:,} later hunks not shown" if hidden_hunks else ""
        plan.truncated = (
            f"diff truncated: {plan.shown:,} of {plan.total:,} rows shown "
            f"(limit {limit:,} rows per card){more}"
        )


def plan_diffs(diffs: Sequence[FileDiff], limits: CardLimits) -> list[FilePlan]:
    """Plan every file's hunks within the card's one row budget."""
    plans = []
    work: list[_Work] = []
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
        else:
            prepared = _prepare(plan, old, new)
            if prepared is not None:
                work.append(prepared)
        plans.append(plan)
    totals = [t for w in work for t in w.totals]
    shares = _shares(totals, limits.max_diff_lines)
    start = 0
    for w in work:
        _build(w, shares[start : start + len(w.totals)], limits.max_diff_lines)
        start += len(w.totals)
    return plans
