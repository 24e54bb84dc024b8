"""The client the conformance suite runs: ``connect_mcp`` and our runner.

``conformance client --command "python conformance_client.py"`` starts a
test server for a scenario, then runs this program with the server's URL
as its last argument and the scenario's name in
``MCP_CONFORMANCE_SCENARIO``. The program connects with
:func:`dsh_nb.mcp.client.connect_mcp` (never the SDK directly), so the
suite checks what a notebook's connection does, and calls tools through
:class:`~dsh_nb.tools.runner.CallRunner`, as every door does.

A question from the server is answered by a person who accepts the form
as shown, changing nothing: what the client sends back is what the form
pre-fills (SEP-1034 defaults).

Exit 0 when the scenario's calls ran; 1, with the reason on stderr, when
they did not.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

# jsonschema imports rfc3987_syntax, where installed, for its "iri"
# formats, and that compiles a grammar at import: 4 to 5 s of CPU per
# process on a CI machine, four processes per run. No scenario's schema
# uses those formats (they are then not checked, as without the package).
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from dsh_nb.mcp.client import connect_mcp  # noqa: E402
from dsh_nb.tools import Agent, Answer, ToolContext, ToolRegistry  # noqa: E402
from dsh_nb.tools.runner import CallRunner, DoorCall  # noqa: E402

#: The tool each scenario calls, with its arguments (``initialize`` calls none).
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}


class AcceptAsShown:
    """A person who accepts every question without changing a field."""

    async def ask(self, ctx: ToolContext, question: Any) -> Answer:
        return Answer("accept", {})


async def main(url: str, scenario: str) -> int:
    registry = ToolRegistry()
    conn = await connect_mcp("srv", url=url, registry=registry, timeout=20)
    try:
        call = CALLS.get(scenario)
        if call is None:
            return 0
        tool, arguments = call
        runner = CallRunner(registry, talk=AcceptAsShown())
        answer = await runner.run(
            DoorCall(name=f"srv_{tool}", arguments=arguments), agent=Agent("conf")
        )
        text = "".join(b.get("text", "") for b in answer.result.content)
        print(f"{tool}: {text}")
        if answer.result.is_error:
            print(f"{tool} failed: {text}", file=sys.stderr)
            return 1
        return 0
    finally:
        await conn.close()


if __name__ == "__main__":
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    sys.exit(asyncio.run(main(sys.argv[-1], scenario)))
