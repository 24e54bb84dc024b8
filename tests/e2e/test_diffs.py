"""Every rendered diff is a correct patch from the old to the new text.

``diffs.ipynb`` shows one card per case of ``notebooks/diff_cases.py``;
the test applies the rendered hunks to the old text and must get the new
text back, and checks the unified-diff numbers and the 3-line context.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from e2e_lab import TIMEOUT_MS, LabServer, page_errors, run_notebook

HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
NO_EOL = "\\ No newline at end of file"


def _load_cases() -> ModuleType:
    path = Path(__file__).resolve().parent / "notebooks" / "diff_cases.py"
    spec = importlib.util.spec_from_file_location("dsh_e2e_diff_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = _load_cases()

EXTRACT = """cards => cards.map(card => ({
    title: card.querySelector('.dsh-ToolCard-title').textContent,
    notices: [...card.querySelectorAll('.dsh-ToolCard-notice')]
        .map(n => n.textContent),
    hunks: [...card.querySelectorAll('.dsh-ToolCard-hunk')].map(h => ({
        header: h.querySelector('.dsh-ToolCard-hunkHeader').textContent,
        rows: [...h.querySelectorAll('tr:not(.dsh-ToolCard-hunkHeader)')]
            .map(r => [...r.querySelectorAll('td')].map(td => td.textContent)),
    })),
}))"""


def _lines(text: str | None) -> list[tuple[str, bool]]:
    """Split into (line, ends-with-newline) pairs, as the renderer does."""
    if not text:
        return []
    parts = text.split("\n")
    out = [(p, True) for p in parts[:-1]]
    if parts[-1]:
        out.append((parts[-1], False))
    return out


def _apply(name: str, old: str | None, new: str, hunks: list[Any]) -> None:
    old_lines = _lines(old)
    built: list[tuple[str, bool]] = []
    at = 0  # next old line to copy
    for hunk in hunks:
        match = HEADER.match(hunk["header"])
        assert match, (name, hunk["header"])
        old_start, old_count, new_start, new_count = (
            int(g) if g is not None else 1 for g in match.groups()
        )
        first = old_start - 1 if old_count else old_start
        assert first >= at, (name, "hunks overlap or go backwards")
        built += old_lines[at:first]
        at = first
        assert len(built) + (1 if new_count else 0) == new_start, (name, hunk)
        seen_old = seen_new = 0
        kinds: list[str] = []
        for cells in hunk["rows"]:
            if len(cells) == 1:
                assert cells[0] == NO_EOL, (name, cells)
                if kinds[-1] in (" ", "-"):
                    assert old_lines[at - 1][1] is False, (name, "old eol")
                if kinds[-1] in (" ", "+"):
                    built[-1] = (built[-1][0], False)
                continue
            old_no, new_no, sign, code = cells
            text = code[:-1] + "\r" if code.endswith("\u240d") else code
            kinds.append(sign)
            if sign in (" ", "-"):
                assert old_no == str(at + 1), (name, cells, at)
                assert old_lines[at][0] == text, (name, cells, old_lines[at])
                at += 1
                seen_old += 1
            if sign in (" ", "+"):
                assert new_no == str(len(built) + 1), (name, cells)
                built.append((text, True))
                seen_new += 1
        assert (seen_old, seen_new) == (old_count, new_count), (name, hunk["header"])
        # At most 3 context lines at either end of a hunk.
        lead = len(kinds) - len("".join(kinds).lstrip(" "))
        trail = len(kinds) - len("".join(kinds).rstrip(" "))
        assert lead <= 3 and trail <= 3, (name, kinds)
    built += old_lines[at:]
    want = _lines(new)
    if built and want and old_lines and not old_lines[-1][1] and not want[-1][1]:
        # Both sides lack the final newline: no marker says it (no noise).
        built[-1] = (built[-1][0], False)
    if old is None and built and want and not want[-1][1]:
        built[-1] = (built[-1][0], False)
    assert built == want, name


def test_rendered_diffs_rebuild_the_new_text(page: Any, lab_server: LabServer) -> None:
    run_notebook(page, lab_server, "diffs.ipynb")
    cards = page.locator(".dsh-ToolCard")
    cards.nth(len(CASES.CASES) - 1).wait_for(timeout=TIMEOUT_MS)
    rendered = {c["title"]: c for c in cards.evaluate_all(EXTRACT)}
    assert sorted(rendered) == sorted(name for name, _, _ in CASES.CASES)

    checked = 0
    for name, old, new in CASES.CASES:
        card = rendered[name]
        if name in CASES.TRUNCATED:
            continue
        if old == new:
            assert card["hunks"] == [] and card["notices"] == ["no changes"]
            continue
        assert card["notices"] == [], (name, card["notices"])
        _apply(name, old, new, card["hunks"])
        checked += 1
    assert checked >= 20

    binary = rendered["binary"]
    assert binary["hunks"] == []
    assert binary["notices"][0].startswith("binary content, ")

    # Over the row limit a rewrite shows the start of both sides and says
    # how many rows each cut hides.
    rewrite = rendered["full-rewrite-1500"]
    assert rewrite["notices"][-1].startswith("diff truncated: 2,000 of 3,000 rows")
    (hunk,) = rewrite["hunks"]
    assert hunk["header"].startswith("@@ -1,1500 +1,1500 @@")
    signs = [cells[2] for cells in hunk["rows"] if len(cells) == 4]
    assert signs.count("-") == 1000 and signs.count("+") == 1000
    skips = [cells[0] for cells in hunk["rows"] if len(cells) == 1]
    assert skips == ["\u22ef 500 more rows", "\u22ef 500 more rows"]
    first_added = next(c for c in hunk["rows"] if len(c) == 4 and c[2] == "+")
    assert first_added[1:] == ["1", "+", "new 0"]
    assert page_errors(page) == []
