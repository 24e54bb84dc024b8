"""docs/reference.md names every magic, config option and public name.

The names come from the code, not from a list kept here: every ``Magics``
class and every traitlets ``Configurable`` defined anywhere in ``dsh_nb``,
and ``dsh_nb.__all__``. A name added without a line in the reference fails,
and so does a documented default that is not the trait's real default, or a
documented name the package no longer has.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Any

import pytest
from IPython.core.magic import Magics
from traitlets.config import Configurable

import dsh_nb

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference.md"
ROW = re.compile(r"^\| `([^`]+)` \|(.*)\|\s*$", re.M)


def _section(title: str) -> str:
    text = REFERENCE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _classes(base: type) -> list[type]:
    """Every subclass of ``base`` defined in a module of dsh_nb."""
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(dsh_nb.__path__, "dsh_nb."):
        if info.name.endswith("__main__"):
            continue  # running it is the demo, not an import
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, base) and value.__module__.startswith("dsh_nb."):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return list(found.values())


def _rows(section: str) -> dict[str, list[str]]:
    return {
        name: [cell.strip() for cell in rest.split("|")]
        for name, rest in ROW.findall(section)
    }


def test_every_magic_has_its_own_heading() -> None:
    section = _section("Magics")
    headings = set(re.findall(r"^### `(%%?\w+)`", section, re.M))
    magics: set[str] = set()
    for cls in _classes(Magics):
        table: dict[str, dict[str, Any]] = getattr(cls, "magics", {})
        for kind, names in table.items():
            for name in names:
                # A line-and-cell magic is documented under its line form.
                if kind == "line" or name not in table.get("line", {}):
                    magics.add(("%" if kind == "line" else "%%") + name)
    assert magics, "no magics found: the discovery is broken"
    assert sorted(magics - headings) == [], "document these magics"
    assert sorted(headings - magics) == [], "these magics no longer exist"
    for heading in headings:
        body = section.split(f"### `{heading}`", 1)[1].split("\n### ", 1)[0]
        assert "```" in body, f"{heading} needs an example block"


def test_every_config_trait_is_listed_with_its_real_default() -> None:
    rows = _rows(_section("Configuration"))
    expected: dict[str, Any] = {}
    for cls in _classes(Configurable):
        for name, trait in cls.class_traits(config=True).items():
            expected[f"{cls.__name__}.{name}"] = trait.default()
    assert "DshConfig.approval_policy" in expected, "the discovery is broken"
    missing = sorted(set(expected) - set(rows))
    assert missing == [], f"document these options in docs/reference.md: {missing}"
    stale = sorted(set(rows) - set(expected))
    assert stale == [], f"these documented options do not exist: {stale}"
    for name, cells in rows.items():
        default, _meaning, example = cells[0], cells[1], cells[2]
        documented = ast.literal_eval(default.strip("`"))
        assert documented == expected[name], (name, default, expected[name])
        assert name in example and "%config" in example, (name, example)


def test_every_public_name_is_listed_with_an_example() -> None:
    rows = _rows(_section("Public names"))
    public = set(dsh_nb.__all__)
    missing = sorted(public - set(rows))
    assert missing == [], f"document these names in docs/reference.md: {missing}"
    stale = sorted(set(rows) - public)
    assert stale == [], f"these documented names are not in dsh_nb.__all__: {stale}"
    for name, cells in rows.items():
        assert len(cells) == 2, (name, "want: | `name` | what it is | example |")
        what, example = cells
        assert what and example.startswith("`"), (name, cells)


# Each room's face, and the section that lists what it adds to dsh_nb's.
# dsh_nb.mcp adds nothing (its four names are on dsh_nb's face); the
# evaluation section also lists dsh_nb.evals.bfcl's names.
ROOM_SECTIONS = {
    "dsh_nb.tools": "More of the pipeline (`dsh_nb.tools`)",
    "dsh_nb.notebook": "Notebook helpers (`dsh_nb.notebook`)",
    "dsh_nb.cards": "Cards (`dsh_nb.cards`)",
    "dsh_nb.models": "Models (`dsh_nb.models`)",
    "dsh_nb.export": "Export (`dsh_nb.export`)",
    "dsh_nb.evals": "Evaluation (`dsh_nb.evals`)",
}


@pytest.mark.parametrize("package", sorted(ROOM_SECTIONS))
def test_names_outside_the_face_are_listed_under_their_package(package: str) -> None:
    face = importlib.import_module(package)
    title = ROOM_SECTIONS[package]
    rows = _rows(_section(title))
    expected = set(face.__all__) - set(dsh_nb.__all__)
    assert expected, f"{package} exports nothing of its own"
    assert sorted(expected - set(rows)) == [], f"document these under {title}"
    if package != "dsh_nb.evals":
        assert sorted(set(rows) - expected) == [], f"not {package}'s own"


def test_every_room_with_names_of_its_own_has_a_section() -> None:
    import dsh_nb.mcp

    rooms = {
        f"dsh_nb.{path.parent.name}"
        for path in Path(dsh_nb.__file__).parent.glob("*/__init__.py")
    }
    assert rooms - set(ROOM_SECTIONS) == {"dsh_nb.mcp"}
    assert set(dsh_nb.mcp.__all__) <= set(dsh_nb.__all__)


def test_other_modules_rows_name_real_objects() -> None:
    rows = _rows(_section("Other modules"))
    for dotted, cells in rows.items():
        module, _, attr = dotted.rpartition(".")
        assert hasattr(importlib.import_module(module), attr), dotted
        assert len(cells) == 2 and cells[1].startswith("`"), (dotted, cells)
    # What a newcomer reads about in the notebooks and needs to look up.
    for needed in (
        "dsh_nb.models.replay_server.ReplayServer",
        "dsh_nb.models.scripted.Turn",
        "dsh_nb.models.scripted.ToolCallSpec",
        "dsh_nb.notebook.magics.chat.kernel_chat",
    ):
        assert needed in rows, f"document {needed} under 'Other modules'"


def test_every_command_is_listed() -> None:
    import subprocess
    import sys

    usage = subprocess.run(
        [sys.executable, "-m", "dsh_nb", "--no-such-command"],
        capture_output=True,
        text=True,
        check=False,
    ).stderr
    assert usage.startswith("usage: python -m dsh_nb"), usage
    commands = set(re.findall(r"(?:dsh_nb|\|) ([a-z][a-z-]+)", usage))
    assert "demo" in commands, usage
    rows = _rows(_section("Commands"))
    documented = {name.removeprefix("python -m dsh_nb ") for name in rows}
    assert sorted(commands - documented) == [], "document these commands"
