"""Secrets that reach a real kernel's outputs in pieces or encoded.

A key printed in two flushes reached the page as two stream messages,
neither the key, shown joined; an HTTP Basic header and a hex dump showed
the key encoded; and a 600-deep display failed in the redaction itself
(``RecursionError``). nbclient runs the cells in a fresh ipykernel.
"""

from __future__ import annotations

import base64
import secrets
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

CELLS = [
    """import base64, pathlib, sys, time
from dsh_nb.tools.audit.secrets import add_secret
%load_ext dsh_nb
key = pathlib.Path("api.key").read_text()
add_secret(key)  # as a chat registers its API key""",
    """print("the key: " + key[:12], end="")
sys.stdout.flush()
time.sleep(0.5)
print(key[12:])""",
    'print("Authorization: Basic " + base64.b64encode(("user:" + key).encode()).decode())',
    'print("hex", key.encode().hex())',
    """deep = "end"
for _ in range(600):
    deep = [deep]
display({"application/json": {"deep": deep, "k": key}}, raw=True)
print("displayed")""",
]


def _texts(cell: nbformat.NotebookNode) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(str(output.get("text", "")))
        parts.append(str(output.get("data", "")))
        parts.append(str(output.get("evalue", "")))
    return "\n".join(parts)


def test_a_key_in_pieces_or_encoded_is_redacted(tmp_path: Path) -> None:
    key = secrets.token_urlsafe(30)
    (tmp_path / "api.key").write_text(key)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)  # nbformat reads the deep output recursively
    try:
        client.execute()
        saved = tmp_path / "saved.ipynb"
        nbformat.write(nb, saved)
    finally:
        sys.setrecursionlimit(limit)
    text = saved.read_text(encoding="utf-8")

    split, basic, hexed, deep = (_texts(cell) for cell in nb.cells[1:])
    assert "the key: " in split and "[secret]" in split
    assert key not in split and key[:12] not in split and key[12:] not in split
    header = base64.b64encode(("user:" + key).encode()).decode()
    assert "Authorization: Basic " in basic and "[secret]" in basic
    assert header not in basic and header[8:-4] not in basic
    assert key.encode().hex() not in hexed and "hex [secret]" in hexed
    assert "displayed" in deep and "RecursionError" not in deep
    assert "[secret]" in deep and key not in deep
    for form in (key, key[:12], key[12:], header[8:-4], key.encode().hex()):
        assert form not in text
