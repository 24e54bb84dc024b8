"""A model's hostile text, streamed by ``%%chat``, shows no live markup.

The replay server sends each payload as the assistant's reply through the
openai SDK; the cell's outputs are then read the way a frontend would:
``text/html`` as is, ``text/markdown`` through a CommonMark renderer that
keeps raw HTML (as JupyterLab does for a trusted output). Nothing in
either may be a tag Markdown does not make, a handler or a script
address. ``dsh_nb.replay`` of a saved conversation is held to the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chatkit import configure
from html_audit import live_markup
from ipshell import fresh_shell, run
from IPython.core.interactiveshell import InteractiveShell
from markdown_it import MarkdownIt
from xss_payloads import MARKDOWN_PAYLOADS, PAYLOADS

from dsh_nb.cards import CARD_MIME
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import Turn

# 149 chats, each through a model server over loopback HTTP: out of the
# quick loop with the tests that start servers.
pytestmark = pytest.mark.server

CORPUS = (*PAYLOADS, *MARKDOWN_PAYLOADS)
# How a frontend renders text/markdown in a trusted output: raw HTML and
# every link kept (JupyterLab's marked checks no scheme).
FRONTEND = MarkdownIt("commonmark", {"html": True})
FRONTEND.validateLink = lambda url: True


# One shell for the module: each payload is its own cell, and loading the
# extension afresh for each of the 148 replayed payloads took most of this
# file's time (about 1.5 s a test).
ip = pytest.fixture(scope="module", name="ip")(fresh_shell)


def _as_rendered(data: dict[str, object]) -> str:
    if "text/html" in data:
        return str(data["text/html"])
    if "text/markdown" in data:
        return str(FRONTEND.render(str(data["text/markdown"])))
    return ""


def _problems(cell_outputs: tuple[dict[str, object], ...]) -> list[str]:
    found: list[str] = []
    for output in cell_outputs:
        data = output["data"]
        assert isinstance(data, dict)
        if CARD_MIME in data:
            continue
        found += live_markup(_as_rendered(data))
    return found


def test_streamed_model_text_is_never_live(
    ip: InteractiveShell, server: ReplayServer
) -> None:
    configure(ip, server)
    failed: dict[str, list[str]] = {}
    for name, payload in CORPUS:
        # The payload alone (where Markdown's blocks start), then inline.
        for text in (payload, f"Hello {payload} and [y]({payload}) done"):
            # Small chunks: the text is re-rendered while it grows.
            server.add(Turn(text=text, chunk=7))
            cell = run(ip, "%%chat --new\nsay it")
            assert cell.error is None, (name, cell.error)
            final: dict[object, str] = {}
            for o in cell.outputs:
                key = (o["transient"] or {}).get("display_id") or id(o)
                final[key] = str(o["data"].get("text/plain", ""))
            assert "".join(final.values()).startswith(text[:20]), name
            problems = _problems(cell.outputs)  # type: ignore[arg-type]
            if problems:
                failed[name] = problems[:3]
    assert failed == {}, f"{len(failed)} of {len(CORPUS)} payloads live: {failed}"


@pytest.mark.parametrize(("name", "payload"), CORPUS, ids=[n for n, _ in CORPUS])
def test_replayed_conversation_is_never_live(
    ip: InteractiveShell, tmp_path: Path, name: str, payload: str
) -> None:
    saved = tmp_path / "chat.json"
    messages = [
        {"role": "user", "content": payload},
        {"role": "assistant", "content": payload},
    ]
    saved.write_text(json.dumps(messages), encoding="utf-8")
    log = tmp_path / "empty.jsonl"
    log.write_text("", encoding="utf-8")
    cell = run(
        ip,
        f"import dsh_nb\n_ = dsh_nb.replay({str(log)!r}, messages={str(saved)!r})",
    )
    assert cell.error is None, cell.error
    assert len(cell.outputs) == 2
    assert _problems(cell.outputs) == []  # type: ignore[arg-type]
