"""Deterministic old/new text pairs for the diff-rendering e2e test.

The notebook ``diffs.ipynb`` displays one diff card per case and the test
rebuilds each new text from the rendered hunks, so both sides import this.
"""

from __future__ import annotations

import random

from IPython.display import display

__all__ = ["MIME", "TRUNCATED", "CASES", "cases", "show_all"]

MIME = "application/vnd.dsh.tool-card+json"

# Cases whose rendering is simplified on purpose (no full rebuild possible).
TRUNCATED = {"full-rewrite-1500", "binary"}


def _random_pair(rng: random.Random) -> tuple[str, str]:
    # A tiny alphabet makes many equal lines, so the diff is ambiguous.
    size = rng.randint(0, 80)
    old = [f"line {rng.randint(0, 6)}" for _ in range(size)]
    new = list(old)
    for _ in range(rng.randint(1, 6)):
        where = rng.randint(0, len(new))
        action = rng.choice(("insert", "delete", "replace"))
        if action == "insert" or not new:
            new[where:where] = [f"new {rng.randint(0, 6)}"] * rng.randint(1, 3)
        elif action == "delete":
            del new[where : where + rng.randint(1, 4)]
        else:
            new[where : where + 1] = [f"changed {rng.randint(0, 6)}"]
    old_eol = "\n" if rng.random() < 0.8 else ""
    new_eol = "\n" if rng.random() < 0.8 else ""
    old_text = "\n".join(old) + (old_eol if old else "")
    new_text = "\n".join(new) + (new_eol if new else "")
    return old_text, new_text


def cases() -> list[tuple[str, str | None, str]]:
    """Return ``(name, old_text, new_text)`` triples, the same every run."""
    rng = random.Random(20240607)
    out: list[tuple[str, str | None, str]] = []
    for i in range(16):
        old, new = _random_pair(rng)
        out.append((f"random-{i:02d}", old, new))
    long_old = "".join(f"row {i}\n" for i in range(300))
    long_new = long_old.replace("row 10\n", "row ten\n").replace(
        "row 200\n", "row 200\nrow 200.5\n"
    )
    out += [
        ("two-hunks", long_old, long_new),
        ("new-file", None, "alpha\nbeta\n"),
        ("delete-all", "alpha\nbeta\n", ""),
        ("add-final-newline", "a\nb", "a\nb\n"),
        ("drop-final-newline", "a\nb\n", "a\nb"),
        ("crlf-to-lf", "one\r\ntwo\r\nthree\r\n", "one\ntwo\nthree\n"),
        ("unchanged", "same\ntext\n", "same\ntext\n"),
        ("binary", "PNG\x00\x01\x02", "PNG\x00\x01\x03"),
        (
            "full-rewrite-1500",
            "".join(f"old {i}\n" for i in range(1500)),
            "".join(f"new {i}\n" for i in range(1500)),
        ),
    ]
    return out


CASES = cases()


def show_all() -> None:
    """Display one diff card per case."""
    from cardjson import payload  # next to this file, as the notebook runs

    for name, old, new in CASES:
        card = {
            "tool": "edit_file",
            "callId": f"call-{name}",
            "status": "done",
            "isError": False,
            "call": {
                "card": "diff",
                "title": name,
                "diffs": [
                    {"path": f"cases/{name}.txt", "oldText": old, "newText": new}
                ],
            },
        }
        display({MIME: payload(card), "text/plain": name}, raw=True)  # type: ignore[no-untyped-call]
