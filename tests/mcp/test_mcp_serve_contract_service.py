"""``serve`` with a module whose approval service is the contract's shape.

Contract §4.6: a mounted service is ``request(req)`` → outcome and nothing
more. A module that mounts one is served as it is: every ``ask`` reaches
its ``request`` (issue 34 §1), through a real ``serve --stdio`` process and
the SDK's client.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from servekit import serve_argv, stdio

MODULE = '''
from dsh_nb import Ask, ToolRegistry, tool

registry = ToolRegistry()
ASKED = []


class ContractService:
    """request(req) -> outcome; nothing else."""

    async def request(self, req):
        ASKED.append(req.tool_name)
        return "allowed-once" if req.reason == "yes please" else "rejected"


registry.approval = ContractService()


@tool
def launch(target: str) -> str:
    """Launch at a target (asks first)."""
    return f"launched at {target}; asked {len(ASKED)}"


registry.register(launch)


def ask(execution, next_):
    reason = "yes please" if execution.arguments["target"] == "moon" else "no"
    return Ask(reason)


registry.on_pre_execute(ask)
'''


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_served_request_only_service_answers_every_ask(
    runtime: Path, tmp_path: Path, mode: str
) -> None:
    module = tmp_path / "contract_tools.py"
    module.write_text(MODULE)
    async with stdio(serve_argv(str(module), "--stdio"), runtime, mode=mode) as c:
        yes = await c.call_tool("launch", {"target": "moon"})
        no = await c.call_tool("launch", {"target": "mars"})
    assert (yes.is_error, yes.content[0].text) == (False, "launched at moon; asked 1")
    assert no.is_error
    assert no.content[0].text == 'Error: the user rejected tool "launch"'
