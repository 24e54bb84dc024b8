"""The quickstart tells the truth about types and points at every notebook."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dsh_nb import tool

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
QUICKSTART = NOTEBOOKS / "00-quickstart.ipynb"


def _markdown() -> list[str]:
    cells = json.loads(QUICKSTART.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]


def test_what_the_quickstart_says_int_becomes_is_what_it_becomes() -> None:
    def f(a: int) -> str:
        return str(a)

    sent = tool(f).parameters["properties"]["a"]["type"]
    said = [
        m.group(1)
        for text in _markdown()
        for m in re.finditer(r'`int` is sent as `"(\w+)"`', text)
    ]
    assert said, "the quickstart no longer says what `int` is sent as"
    assert set(said) == {sent}, (said, sent)


def test_where_next_lists_every_other_notebook() -> None:
    where = next(t for t in _markdown() if t.startswith("## Where next"))
    linked = set(re.findall(r"\]\(([\w-]+\.ipynb)\)", where))
    present = {p.name for p in NOTEBOOKS.glob("[0-9][0-9]-*.ipynb")}
    assert sorted(present - linked - {QUICKSTART.name}) == []
