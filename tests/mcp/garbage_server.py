"""A stdio MCP server written by hand, which writes garbage mid-call.

The SDK's own stdio server diverts stray writes to stdout into stderr, so
a server built on it cannot corrupt the stream; servers in other languages
or with their own loop can. This one speaks just enough JSON-RPC (the
handshake, ``tools/list``, ``tools/call``): ``echo`` answers, and
``explode`` writes a line that is not JSON-RPC to stdout and never answers.

Start-up faults, by the first argument: ``banner`` writes a line that is
not JSON-RPC before serving normally; ``silent`` never answers anything;
``no-list`` answers ``initialize`` but never ``tools/list``; ``die-on-list``
exits when asked for its tools.
"""

from __future__ import annotations

import json
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else ""

TOOLS = [
    {
        "name": "echo",
        "description": "Echo.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "explode",
        "description": "Write garbage mid-call.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict) -> dict | None:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "garbage", "version": "1.0"},
        }
    if method == "tools/list":
        if MODE == "no-list":
            return None
        if MODE == "die-on-list":
            print("asked for tools: simulated start-up crash", file=sys.stderr)
            sys.exit(4)
        return {"tools": TOOLS}
    if method == "tools/call" and params.get("name") == "echo":
        text = str((params.get("arguments") or {}).get("text", ""))
        return {"content": [{"type": "text", "text": text}], "isError": False}
    if method == "tools/call" and params.get("name") == "explode":
        print("about to write garbage: simulated fault", file=sys.stderr, flush=True)
        sys.stdout.write("this is not JSON-RPC\n")
        sys.stdout.flush()
        return None  # never answered
    if method == "ping":
        return {}
    raise LookupError(method)


def main() -> None:
    print("garbage server up", file=sys.stderr, flush=True)
    if MODE == "banner":
        sys.stdout.write("garbage server listening on stdio\n")
        sys.stdout.flush()
    if MODE == "silent":
        time.sleep(600)
    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification
        try:
            result = answer(request)
        except LookupError:
            error = {
                "code": -32601,
                "message": f"Method not found: {request.get('method')}",
            }
            send({"jsonrpc": "2.0", "id": request["id"], "error": error})
            continue
        if result is not None:
            send({"jsonrpc": "2.0", "id": request["id"], "result": result})


if __name__ == "__main__":
    main()
