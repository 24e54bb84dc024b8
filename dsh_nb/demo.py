"""A 30-second tour of the pipeline, headless: ``python -m dsh_nb demo``.

It walks the quickstart notebook's story without a notebook: typed tools,
what the model sees, a validation error the model can correct from, a
policy that asks and a scripted person who answers, a guard, a shell
command shown as a terminal card and a file edit shown as a diff card;
then a short model-driven turn through the bundled replay server.
Every card is printed as the ``text/plain`` part a notebook would show.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dsh_nb.demo_chat import printed_call, run_model_turn
from dsh_nb.tools import (
    Agent,
    ApprovalService,
    Ask,
    DiffCallView,
    DiffResultView,
    FileDiff,
    TerminalCallView,
    TerminalResultView,
    TimeoutPolicy,
    ToolExecutionResult,
    ToolPresenter,
    ToolRegistry,
    ToolResult,
    tool,
)
from dsh_nb.tools.runner import CallRunner, DoorCall

__all__ = ["build_demo_registry", "main", "run_demo"]


def build_demo_registry(workdir: Path) -> tuple[ToolRegistry, Agent]:
    """Three tools, an ask policy, a guard and a scripted approver."""
    registry = ToolRegistry()
    registry.approval = ApprovalService()
    TimeoutPolicy().install(registry)
    agent = Agent("demo", cwd=str(workdir))

    @tool
    def add(a: int, b: int) -> str:
        """Add two integers.

        Args:
            a: The first addend.
            b: The second addend.
        """
        return str(a + b)

    def show_command(args: Any) -> TerminalCallView:
        return TerminalCallView(title=args["command"], cwd=str(workdir))

    def show_run(args: Any, result: ToolResult) -> TerminalResultView | None:
        meta = result.meta if isinstance(result.meta, dict) else {}
        if "exitCode" not in meta:  # denied or failed: show the raw error
            return None
        return TerminalResultView(
            output=meta.get("output", ""), exit_code=meta.get("exitCode")
        )

    @tool(timeout_ms=10_000, present_call=show_command, present_result=show_run)
    def run(command: str) -> dict[str, Any]:
        """Run a shell command in the demo folder.

        Args:
            command: The command line, run with /bin/sh.
        """
        done = subprocess.run(
            command, shell=True, cwd=workdir, capture_output=True, text=True
        )
        output = done.stdout + done.stderr
        return {
            "content": [{"type": "text", "text": output or "(no output)"}],
            "meta": {"output": output, "exitCode": done.returncode},
        }

    def show_edit(args: Any) -> DiffCallView:
        path = workdir / args["path"]
        old = path.read_text() if path.exists() else None
        return DiffCallView(
            title=f"edit {path}",
            diffs=[FileDiff(path=str(path), old_text=old, new_text=args["text"])],
        )

    def show_edited(args: Any, result: ToolResult) -> DiffResultView | None:
        meta = result.meta if isinstance(result.meta, dict) else {}
        if result.is_error or "old" not in meta:
            return None
        path = str(workdir / args["path"])
        return DiffResultView(
            diffs=[FileDiff(path=path, old_text=meta["old"], new_text=args["text"])]
        )

    @tool(present_call=show_edit, present_result=show_edited)
    def write_file(path: str, text: str) -> dict[str, Any]:
        """Replace a file's text inside the demo folder.

        Args:
            path: A path relative to the demo folder.
            text: The new content.
        """
        target = workdir / path
        old = target.read_text() if target.exists() else None
        target.write_text(text)
        return {
            "content": [{"type": "text", "text": f"wrote {len(text)} chars to {path}"}],
            "meta": {"old": old},
        }

    for definition in (add, run, write_file):
        registry.register(definition)

    registry.on_pre_execute(
        lambda ex, next_: Ask("writes a file") if ex.name == "write_file" else next_()
    )
    registry.guard(
        lambda ex: (
            "rm is not allowed in the demo"
            if ex.name == "run" and "rm " in str(ex.arguments.get("command", ""))
            else None
        )
    )
    registry.approval.on_request(lambda request, next_: "allowed-once")
    return registry, agent


async def run_demo(out: Callable[[str], None] = print) -> list[ToolExecutionResult]:
    """Run the tour and print each card; returns the results."""
    with tempfile.TemporaryDirectory(prefix="dsh-demo-") as tmp:
        workdir = Path(tmp)
        (workdir / "notes.txt").write_text("alpha\nbeta\ngamma\n")
        registry, agent = build_demo_registry(workdir)
        presenter = ToolPresenter(registry)
        out("What the model sees (registry.schemas()):")
        for schema in registry.schemas(agent):
            out(f"  {schema['name']}: {json.dumps(schema['parameters'])}")
        calls = [
            ("add", {"a": 2, "b": 3}),
            ("add", {"a": "two"}),
            ("run", {"command": "printf 'hello from the shell\\n'; ls"}),
            ("run", {"command": "rm notes.txt"}),
            ("write_file", {"path": "notes.txt", "text": "alpha\nBETA\ngamma\n"}),
            ("serch", {}),
        ]
        runner = CallRunner(registry)
        results = []
        for number, (name, args) in enumerate(calls, 1):
            header = f"--- {name}({json.dumps(args)})"
            view = printed_call(presenter, out, str(workdir), "", header)
            answer = await runner.run(
                DoorCall(name=name, arguments=args, wire_id=f"call-{number}"),
                agent=agent,
                door="demo",
                view=view,
            )
            results.append(answer.result)
        out("")
        asked = len(agent.session.of_type("approval/asked"))
        out(f"session log: {len(agent.session)} events, {asked} approval asked")
        await run_model_turn(registry, agent, presenter, out)
        return results


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m dsh_nb``."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] != ["demo"]:
        print("usage: python -m dsh_nb demo", file=sys.stderr)
        return 2
    asyncio.run(run_demo())
    return 0
