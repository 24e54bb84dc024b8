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
