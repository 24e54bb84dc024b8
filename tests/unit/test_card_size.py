"""A big diff card stays light in a saved notebook, and loses nothing in Lab."""

from __future__ import annotations

import json

import nbformat

from dsh_nb.cards import CARD_MIME, CardModel, render_card
from dsh_nb.tools import DiffCallView, DiffResultView, FileDiff


def big_edit() -> CardModel:
    old = "".join(f"    value_{i} = compute({i}, 'key_{i}')\n" for i in range(10_000))
    lines = old.splitlines(keepends=True)
    for k in range(3, len(lines), 100):  # 1% of the lines change
        lines[k] = f"    edited_{k} = 0\n"
    diff = FileDiff(path="big.py", old_text=old, new_text="".join(lines))
    return CardModel(
        tool="edit",
        status="done",
        call=DiffCallView(title="edit big.py", diffs=[diff]),
        result=DiffResultView(diffs=[diff]),
    )


def notebook_bytes(outputs: list[object]) -> int:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%call edit")
    cell.outputs = outputs
    nb.cells.append(cell)
    return len(nbformat.writes(nb).encode())


def test_a_10000_line_1_percent_diff_card_adds_at_most_120_kb() -> None:
    card = render_card(big_edit())
    output = nbformat.v4.new_output(
        "display_data", data=card.data, metadata=card.metadata
    )
    added = notebook_bytes([output]) - notebook_bytes([])
    assert added <= 120_000, added
    assert set(card.data) == {CARD_MIME, "text/html", "text/plain"}


def test_the_json_part_keeps_every_hunk_and_the_html_says_it_is_shortened() -> None:
    card = render_card(big_edit())
    payload = card.data[CARD_MIME]
    (diff,) = payload["result"]["diffs"]
    assert len(diff["hunks"]) == 100 and diff["added"] == diff["removed"] == 100
    html = card.data["text/html"]
    assert "edited_3 " in html and "edited_9903 " not in html
    assert "JupyterLab shows the card&#x27;s whole diff" in html
    assert "edited_9903 " in json.dumps(payload)


def test_a_small_diff_card_keeps_every_part_whole() -> None:
    diff = FileDiff(path="a.txt", old_text="a\nb\n", new_text="a\nc\n")
    card = render_card(
        CardModel(tool="edit", status="done", result=DiffResultView(diffs=[diff]))
    )
    assert set(card.data) == {CARD_MIME, "text/html", "text/markdown", "text/plain"}
    assert "shortened" not in card.data["text/html"]


def rewrite(n: int) -> CardModel:
    old = "".join(f"old line {i}\n" for i in range(n))
    new = "".join(f"new line {i}\n" for i in range(n))
    diff = FileDiff(path="r.py", old_text=old, new_text=new)
    return CardModel(tool="edit", status="done", result=DiffResultView(diffs=[diff]))


def test_a_shortened_rewrite_shows_both_sides_with_what_was_left_out() -> None:
    """A 2,000-line rewrite in the static HTML: removed AND added lines."""
    card = render_card(rewrite(2_000))
    html = card.data["text/html"]
    assert html.count("-old line ") == 100 and html.count("+new line ") == 100
    assert "-old line 0" in html and "+new line 0" in html
    assert "+new line 100" not in html
    # what the plan left (1,000 of each side), then the 900 more the HTML leaves
    assert html.count("\u22ef 1,900 more rows") == 2
    assert "shortened here: 200 of 2,000 rows drawn" in html
    hunk = card.data[CARD_MIME]["result"]["diffs"][0]["hunks"][0]
    assert hunk["lines"][1000] == {"more": 1000, "old": 1000, "new": 0}


def test_every_drawn_hunk_of_a_shortened_card_has_both_sides() -> None:
    from dsh_nb.cards.hunks import Hunk, Skip, plan_diffs
    from dsh_nb.cards.model import CardLimits
    from dsh_nb.cards.shorten import shorten_plans

    old = "".join(f"line {i}\n" for i in range(3_000))
    new = old.replace("line 5\n", "".join(f"x{i}\n" for i in range(400)))
    new = new.replace("line 2000\n", "".join(f"y{i}\n" for i in range(50)))
    diff = FileDiff(path="f", old_text=old, new_text=new)
    (plan,) = shorten_plans(plan_diffs([diff], CardLimits()), 200)
    hunks = [b for b in plan.blocks if isinstance(b, Hunk)]
    for hunk in hunks:
        kinds = {r[0] for r in hunk.rows if not isinstance(r, Skip)}
        assert {"-", "+"} <= kinds
        hidden = sum(r.rows for r in hunk.rows if isinstance(r, Skip))
        assert hunk.shown + hidden == hunk.total
    assert plan.shown <= 200
