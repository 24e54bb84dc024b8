"""The README's ``%%tool`` example shows the schema the tool really has."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dsh_nb.tools.definition import tool

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_shows_the_schema_of_its_tool_cell() -> None:
    text = README.read_text()
    cell = re.search(r"```ipython\n%%tool\n(.*?)```", text, re.S)
    shown = re.search(r"```text\n(\{\n.*?\n\})\n```", text, re.S)
    assert cell is not None and shown is not None
    namespace: dict[str, object] = {}
    exec(cell.group(1), namespace)
    definition = tool(namespace["add"])  # type: ignore[arg-type]
    assert json.loads(shown.group(1)) == definition.parameters
    assert shown.group(1) == json.dumps(definition.parameters, indent=2)
