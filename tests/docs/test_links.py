"""Every relative link in the README and the guide points at a real file."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
# docs/spec/ is copied unchanged from dsh-tools: its links point into that
# project's tree, which says so in docs/README.md.
PAGES = [
    ROOT / "README.md",
    ROOT / "notebooks" / "README.md",
    *(p for p in (ROOT / "docs").glob("*.md")),
]


def _targets(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def test_relative_links_resolve() -> None:
    dead = []
    for page in PAGES:
        for target in _targets(page):
            path = target.split("#", 1)[0]
            if path and not (page.parent / path).exists():
                dead.append(f"{page.relative_to(ROOT)} -> {target}")
    assert dead == []


def test_the_readme_links_the_guide_and_the_spec() -> None:
    targets = set(_targets(ROOT / "README.md"))
    for page in (
        "docs/README.md",
        "docs/reference.md",
        "docs/spec/tools.md",
        "docs/spec/contract.md",
    ):
        assert page in targets, f"the README should link {page}"
    assert (ROOT / "docs" / "spec" / "tools.md").read_text().startswith("# Tools")
