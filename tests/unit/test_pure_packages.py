"""dsh_nb.tools and dsh_nb.cards run with no Jupyter package loaded."""

from __future__ import annotations

import subprocess
import sys

JUPYTER = ("IPython", "ipykernel", "ipywidgets", "traitlets", "comm")

CODE = f"""
import asyncio, importlib, pkgutil, sys
import dsh_nb.tools, dsh_nb.cards
for package in (dsh_nb.tools, dsh_nb.cards):
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
from dsh_nb.tools import Agent, ToolExecutionInput, ToolRegistry, tool

@tool
def add(a: int, b: int) -> str:
    return str(a + b)

async def main():
    for mode in ("inline", "thread"):
        registry = ToolRegistry(sync_tools=mode)
        registry.register(add)
        registry.on_trace(lambda ex, result, records: list(records))
        agent = Agent("script")
        run = await registry.run(ToolExecutionInput(
            call_id="c1", name="add", arguments={{"a": 1, "b": 2}}, agent=agent))
        assert run.result.text == "3" and run.outcome.status == "done"
        assert agent.session.to_jsonl()

asyncio.run(main())
print([m for m in {JUPYTER!r} if m in sys.modules])
"""


def test_tools_and_cards_import_and_run_without_jupyter() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
