"""What a served module writes to fd 1 never reaches the ``--stdio`` protocol.

Issue 34 §2.10: ``os.system`` or ``subprocess`` output at import, a helper
process, or a thread printing before the SDK took fd 1 all reached the
protocol stream. A real ``serve --stdio`` process with pipes: every line on
its stdout must be a JSON-RPC message, and the stray text must be on
stderr.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from servekit import HERE, env, serve_argv

MODULE = '''
import os, subprocess, sys, threading, time
from dsh_nb import tool

os.system("echo STRAY-shell-at-import")
subprocess.run(["echo", "STRAY-child-at-import"], check=True)
os.write(1, b"STRAY-fd1-at-import\\n")
print("STRAY-print-at-import")
# A helper process that outlives the import, writing to the fd it inherited.
HELPER = subprocess.Popen(
    [sys.executable, "-c",
     "import time\\nfor _ in range(20):\\n"
     "    print('STRAY-helper', flush=True); time.sleep(0.05)"]
)


def _chatty():
    for _ in range(20):
        os.write(1, b"STRAY-thread-fd1\\n")
        print("STRAY-thread-print", flush=True)
        time.sleep(0.05)


threading.Thread(target=_chatty, daemon=True).start()


@tool
def add(a: int, b: int) -> str:
    """Add two integers, writing to fd 1 on the way."""
    os.write(1, b"STRAY-in-a-call\\n")
    return str(a + b)
'''


def _requests() -> list[dict[str, Any]]:
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}},
        },
    ]


def test_every_stdout_line_is_protocol_and_the_strays_go_to_stderr(
    runtime: Path, tmp_path: Path
) -> None:
    module = tmp_path / "noisy_tools.py"
    module.write_text(MODULE)
    proc = subprocess.Popen(
        serve_argv(str(module), "--stdio"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(runtime),
        cwd=str(HERE),
    )
    assert proc.stdin is not None and proc.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    stdout = proc.stdout
    threading.Thread(
        target=lambda: [lines.put(line) for line in stdout], daemon=True
    ).start()
    seen: list[bytes] = []
    try:
        for request in _requests():
            proc.stdin.write(json.dumps(request).encode() + b"\n")
            proc.stdin.flush()
        deadline = time.monotonic() + 60
        answered: dict[int, Any] = {}
        while 3 not in answered and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            seen.append(line)
            message = json.loads(line)
            if "id" in message:
                answered[message["id"]] = message
        time.sleep(1.5)  # the thread and the helper have written all they will
        while not lines.empty():
            seen.append(lines.get())
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode() if proc.stderr is not None else ""
    for line in seen:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    assert not any(b"STRAY" in line for line in seen)
    assert answered[3]["result"]["content"][0]["text"] == "5"
    for stray in (
        "STRAY-shell-at-import",
        "STRAY-child-at-import",
        "STRAY-fd1-at-import",
        "STRAY-print-at-import",
        "STRAY-helper",
        "STRAY-thread-fd1",
        "STRAY-in-a-call",
    ):
        assert stray in err, stray
