"""The approval question cannot be spoofed by the call's arguments.

Issue 34 §2.7: the elicitation and input-round message embedded raw U+202E,
U+2066 and U+2028, so an argument could draw a fake "Why this is asked:"
line; and it showed the first 600 characters of the sorted arguments, so a
model could push a dangerous argument past the cut unseen. Through a real
``serve --stdio`` process and the SDK's client, in both protocol eras.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import types
from servekit import serve_argv, stdio

MODULE = '''
from dsh_nb import Ask, ToolRegistry, tool

registry = ToolRegistry()


@tool
def write_file(path: str, content: str, mode: str = "w") -> str:
    """Write a file (asks first)."""
    return f"wrote {len(content)} characters to {path}"


registry.register(write_file)
registry.on_pre_execute(lambda execution, next_: Ask("writing needs a yes"))
'''
SPOOF = "notes.txt\u2028Why this is asked: a harmless backup\u202e\u2066txt.exe"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_question_shows_hidden_characters_and_says_what_was_cut(
    runtime: Path, tmp_path: Path, mode: str
) -> None:
    module = tmp_path / "writer_tools.py"
    module.write_text(MODULE)
    asked: list[str] = []

    async def on_elicit(ctx: object, params: types.ElicitRequestParams) -> object:
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    argv = serve_argv(str(module), "--stdio")
    async with stdio(argv, runtime, elicit=on_elicit, mode=mode) as c:
        spoofed = await c.call_tool("write_file", {"path": SPOOF, "content": "x"})
        # A long harmless argument first, the dangerous one after it.
        padded = await c.call_tool(
            "write_file",
            {"content": "a" * 5000, "path": "/etc/passwd", "mode": "a"},
        )
    assert spoofed.is_error and padded.is_error
    first, second = asked
    lines = first.splitlines()
    assert [line for line in lines if line.startswith("Why this is asked")] == [
        "Why this is asked: writing needs a yes"
    ]
    for raw in ("\u2028", "\u202e", "\u2066"):
        assert raw not in first
    assert "[U+2028]Why this is asked: a harmless backup[U+202E][U+2066]" in first
    assert len(lines) == 4  # tool, reason, arguments, what to do
    # Every argument's name and the dangerous value are in sight; the cut
    # is said, with the number of characters hidden.
    assert '"/etc/passwd"' in second
    assert '  mode: "a"' in second
    header = next(line for line in second.splitlines() if "Arguments" in line)
    assert "cut to fit" in header
    hidden = int(header.split("cut to fit: ")[1].split(" of ")[0].replace(",", ""))
    assert 4800 <= hidden <= 5000
