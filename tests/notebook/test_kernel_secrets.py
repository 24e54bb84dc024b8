"""No secret reaches a real kernel's outputs or the saved notebook.

nbclient runs a notebook in a fresh ipykernel, as a frontend would, then
the notebook is written to disk. The keys are read from files (so they
are in no cell's source, and the model key keeps the newline a file
gives it). Through both SDKs, the replay server then quotes the key in
its 401 body; a cell prints the key, logs it, raises it; a served MCP
server's token and a connected one's header are printed. Every text the
kernel sent has them as ``[secret]``; the file holds none of them.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

# The notebook serves MCP and starts a model server inside the kernel.
pytestmark = pytest.mark.server

CELLS = [
    """import logging, os, pathlib
import dsh_nb
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ApiError, Turn
%load_ext dsh_nb
read = lambda name: pathlib.Path(name).read_text()
model = ReplayServer(token=read("model.key").strip()).start()
os.environ["REPLAY_KEY"] = read("model.key")  # with its newline""",
    """%config DshChat.base_url = model.openai_url
%config DshChat.api_key_env = "REPLAY_KEY"
%config DshChat.model = "replay-model"
model.add(Turn(text="the key works"))""",
    "%%chat\nhello",
    'model.add(ApiError(status=401, message="Incorrect API key provided: " + model.token))',
    "%%chat --new\nagain",
    """%config DshChat.provider = "anthropic"
%config DshChat.base_url = model.url
model.add(ApiError(status=401, message=f"invalid x-api-key {model.token}"))""",
    "%%chat --new\nand with anthropic",
    'print("the key:", os.environ["REPLAY_KEY"])',
    'logging.getLogger("user").warning("logged key %s", model.token)',
    'raise RuntimeError("refused key " + model.token)',
    """server = dsh_nb.serve_mcp(token=read("mcp.token"))
print("served with", server.token)""",
    """try:
    await dsh_nb.connect_mcp(
        "other", url=server.url, headers={"Authorization": "Bearer " + read("other.token")},
        timeout=5,
    )
except Exception as exc:
    print(type(exc).__name__)
print("header token:", read("other.token"))
server.stop()""",
]


def test_no_secret_in_outputs_or_the_saved_notebook(tmp_path: Path) -> None:
    keys = {
        "model.key": secrets.token_urlsafe(24),
        "mcp.token": secrets.token_urlsafe(24),
        "other.token": secrets.token_urlsafe(24),
    }
    (tmp_path / "model.key").write_text(keys["model.key"] + "\n")
    (tmp_path / "mcp.token").write_text(keys["mcp.token"])
    (tmp_path / "other.token").write_text(keys["other.token"])
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    saved = tmp_path / "saved.ipynb"
    nbformat.write(nb, saved)

    text = saved.read_text(encoding="utf-8")
    for name, key in keys.items():
        assert key not in text, f"{name} is in the saved notebook"
    outputs = [json.dumps(cell.outputs) for cell in nb.cells]
    # The newline-ended key worked: the first chat got its answer.
    assert "the key works" in outputs[2]
    assert "Illegal header" not in text
    # Each place the key would have shown says [secret] instead.
    assert "Incorrect API key provided: [secret]" in outputs[4]
    assert "invalid x-api-key [secret]" in outputs[6]
    assert "the key: [secret]" in outputs[7]
    assert "logged key [secret]" in outputs[8]
    assert "refused key [secret]" in outputs[9]
    assert "served with [secret]" in outputs[10]
    assert "header token: [secret]" in outputs[11]
