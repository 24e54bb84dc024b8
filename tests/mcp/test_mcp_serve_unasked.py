"""An ``ask`` a served client cannot answer: the denial says why.

The core's denial is the contract's text ("no approval channel is
available"); a client that declared no elicitation support (the Inspector
CLI, openai-agents) reads, after it, that it declared none and which server
option chooses what it gets. Each test starts ``python -m dsh_nb serve`` in
its own process and talks to it with the official MCP SDK client.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import types
from mcpkit import client as http_client
from servekit import TOOLS, http_server, journal, serve_argv, stdio

DENIED = (
    'Error: tool "delete_file" requires approval, but no approval channel is available'
)


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    folder = tmp_path / "runtime"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # handshake era, 2026-07-28
async def test_a_client_without_elicitation_is_told_it_declared_none(
    runtime: Path, tmp_path: Path, mode: str
) -> None:
    log = tmp_path / "calls.jsonl"
    argv = serve_argv(str(TOOLS), "--stdio", "--journal", str(log))
    async with stdio(argv, runtime, mode=mode, name="inspector-cli") as c:
        denied = await c.call_tool("delete_file", {"path": "a"})
        plain = await c.call_tool("add", {"a": 1, "b": 2})
    assert denied.is_error
    text = denied.content[0].text  # type: ignore[union-attr]
    assert text.startswith(DENIED + ". ")
    assert "The MCP client declared no elicitation support" in text
    assert "--without-elicitation" in text
    assert "(deny, reject or allow)" in text
    assert len(denied.content) == 1  # one answer, not a second block
    assert (plain.is_error, plain.content[0].text) == (False, "3")  # type: ignore[union-attr]
    # The journal keeps the core's own words: the sentence is the door's.
    results = [x["data"] for x in journal(log) if x["type"] == "tool/result"]
    assert results[0]["result"]["content"][0]["text"] == DENIED
    assert (results[0]["status"], results[0]["approval"]) == ("denied", "unavailable")


async def test_a_client_that_can_be_asked_reads_no_such_sentence(
    runtime: Path,
) -> None:
    async def decline(ctx: object, params: types.ElicitRequestParams) -> object:
        return types.ElicitResult(action="decline")

    async with stdio(serve_argv(str(TOOLS), "--stdio"), runtime, elicit=decline) as c:
        no = await c.call_tool("delete_file", {"path": "a"})
    assert no.content[0].text == 'Error: the user rejected tool "delete_file"'  # type: ignore[union-attr]


async def test_an_operator_who_chose_reject_gets_the_choice_without_the_hint(
    runtime: Path,
) -> None:
    argv = serve_argv(str(TOOLS), "--stdio", "--without-elicitation", "reject")
    async with stdio(argv, runtime) as c:
        no = await c.call_tool("delete_file", {"path": "a"})
    assert no.is_error
    assert no.content[0].text == 'Error: the user rejected tool "delete_file"'  # type: ignore[union-attr]


async def test_a_stateless_server_says_it_cannot_know_what_the_client_declared(
    runtime: Path,
) -> None:
    with http_server(runtime, "--stateless") as server:
        async with http_client(server.url, server.token()) as c:
            denied = await c.call_tool("delete_file", {"path": "a"})
    text = denied.content[0].text  # type: ignore[union-attr]
    assert denied.is_error and text.startswith(DENIED + ". ")
    assert "keeps no session (stateless)" in text
    assert "--without-elicitation" in text
    assert "declared no elicitation support" not in text
