"""``serve --journal`` writes no registered secret: its lines are redacted
as ``%tool_log --save`` redacts a saved log."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from dsh_nb.mcp.journalfile import JournalFile
from dsh_nb.tools import Agent, ToolExecutionInput, ToolRegistry, tool
from dsh_nb.tools.audit.journal import turn
from dsh_nb.tools.audit.journalfile import read_journal
from dsh_nb.tools.audit.secrets import REDACTED, add_secret


def test_journal_lines_are_redacted(tmp_path: Path) -> None:
    key = "tok-0123456789abcdef"
    undo = add_secret(key)  # as the server registers its bearer token
    try:

        @tool
        def echo(text: str) -> str:
            """Say it back."""
            return f"you said {text}"

        registry = ToolRegistry()
        registry.register(echo)
        path = tmp_path / "journal.jsonl"
        journal = JournalFile(path)
        agent = Agent("client-1")
        journal.attach(agent, "s-1", {"client": f"bot {key}"})

        async def call() -> None:
            with turn(agent):
                await registry.execute(
                    ToolExecutionInput(
                        call_id="c1",
                        name="echo",
                        arguments={"text": f"Bearer {key}"},
                        agent=agent,
                    )
                )

        asyncio.run(call())
        journal.close()
        text = path.read_text()
        assert key not in text
        events = read_journal(path)
        by_type = {e.type: e.data for e in events}
        assert by_type["mcp/session"]["client"] == f"bot {REDACTED}"
        assert by_type["tool/call"]["arguments"] == {"text": f"Bearer {REDACTED}"}
        block = by_type["tool/result"]["result"]["content"][0]
        assert block["text"] == f"you said Bearer {REDACTED}"
        assert all(json.loads(line) for line in text.splitlines())
    finally:
        undo()
