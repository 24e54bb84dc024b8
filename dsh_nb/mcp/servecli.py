"""``python -m dsh_nb serve MODULE[:ATTR]``: a module's tools as an MCP server.

Examples::

    python -m dsh_nb serve tools --stdio              # what a client launches
    python -m dsh_nb serve tools.py:registry --http --port 8765
    python -m dsh_nb serve tools --http --stateless --token-file token \\
        --journal calls.jsonl                         # one of N replicas

Nothing here imports the notebook layer, IPython or ipywidgets: a server
is a script. A mistake on the command line is one line on stderr and exit
status 2; the server's own failures are logged to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dsh_nb.mcp.elicit import HEADLESS

if TYPE_CHECKING:
    from dsh_nb.mcp.standalone import StandaloneAdapter

__all__ = ["main", "read_token_file"]

_PROG = "python -m dsh_nb serve"


class UsageError(Exception):
    """A command-line mistake, said in one line."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Serve a module's dsh_nb tools over MCP, without a kernel.",
        epilog="mcp-config MODULE prints the settings a client needs to launch it.",
    )
    parser.add_argument(
        "target",
        metavar="MODULE[:ATTR]",
        help="a module name or a .py file; ATTR names a ToolRegistry, a module "
        "or a tool (default: the module's `registry`, else its @tool functions)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--stdio",
        action="store_true",
        help="serve one client on stdin/stdout (default)",
    )
    mode.add_argument(
        "--http", action="store_true", help="serve Streamable HTTP at /mcp"
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP: address (loopback)")
    parser.add_argument(
        "--port", type=int, default=0, help="HTTP: port (default: a free one)"
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="HTTP: allow a --host other machines can reach",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="HTTP: another Host header to accept (a proxy's name); repeatable",
    )
    parser.add_argument(
        "--stateless",
        action="store_true",
        help="HTTP: keep no session between requests, so replicas can share a "
        "load balancer",
    )
    parser.add_argument(
        "--session-idle",
        type=float,
        default=None,
        metavar="SECONDS",
        help="HTTP: end a client's session after this long without a request "
        "(default: 3600, as %%tools serve); the client then starts a new one",
    )
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        help="HTTP: read the bearer token from FILE (default: a random one)",
    )
    parser.add_argument(
        "--name",
        help="HTTP: the name mcp-config --kernel and the bridge find it by "
        "(default: the module's, e.g. tools)",
    )
    parser.add_argument(
        "--journal", metavar="FILE", help="append every session's events as JSONL"
    )
    parser.add_argument(
        "--without-elicitation",
        choices=sorted(HEADLESS),
        default="deny",
        help="what an `ask` gets when the client cannot be asked (default: deny)",
    )
    return parser


def read_token_file(path: str) -> str:
    """The token in ``path``; a file others can read is refused."""
    try:
        info = os.stat(path)
        text = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(
            f"cannot read the token file {path!r}: {exc.strerror}"
        ) from None
    except UnicodeDecodeError:
        raise UsageError(f"the token file {path!r} is not text") from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UsageError(
            f"the token file {path!r} is readable by others; run chmod 600 {path}"
        )
    if len(text) < 16 or any(c.isspace() for c in text):
        raise UsageError(
            f"the token in {path!r} must be one word of at least 16 characters"
        )
    return text


def _check(args: argparse.Namespace) -> None:
    http_only = {
        "--stateless": args.stateless,
        "--token-file": args.token_file,
        "--allow-remote": args.allow_remote,
        "--allowed-host": args.allowed_host,
        "--name": args.name,
        "--session-idle": args.session_idle is not None,
    }
    if not args.http:
        given = [flag for flag, value in http_only.items() if value]
        if given or args.port or args.host != "127.0.0.1":
            flags = ", ".join(given) or "--host/--port"
            raise UsageError(f"{flags} needs --http (stdio has no address)")
        return
    from dsh_nb.mcp.server import _is_loopback

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be in 0..65535, not {args.port}")
    idle = args.session_idle
    if idle is not None and not (math.isfinite(idle) and idle > 0):
        raise UsageError(f"--session-idle must be a positive number, not {idle}")
    if idle is not None and args.stateless:
        raise UsageError("--session-idle needs sessions; --stateless keeps none")
    if not _is_loopback(args.host) and not args.allow_remote:
        raise UsageError(
            f"--host {args.host} is not a loopback address; add --allow-remote to "
            "serve your tools to other machines"
        )


def _run(args: argparse.Namespace) -> int:
    from dsh_nb.mcp.elicit import mount_approvals
    from dsh_nb.mcp.journalfile import JournalFile
    from dsh_nb.mcp.standalone import StandaloneAdapter
    from dsh_nb.mcp.stdiowire import divert_stdout
    from dsh_nb.mcp.target import TargetError, load_target

    token = read_token_file(args.token_file) if args.token_file else None
    # On stdio, stdout is the protocol: fd 1 goes to stderr before the
    # module is imported, and the protocol keeps the pipe to itself.
    wire = None if args.http else divert_stdout()
    try:
        with contextlib.redirect_stdout(sys.stdout if args.http else sys.stderr):
            target = load_target(args.target)
    except TargetError as exc:
        raise UsageError(str(exc)) from None
    registry = target.registry
    count = len(registry.schemas())
    mount_approvals(registry, HEADLESS[args.without_elicitation])
    try:
        journal = JournalFile(args.journal) if args.journal else None
    except OSError as exc:
        raise UsageError(f"--journal: {exc.strerror or exc}") from None
    adapter = StandaloneAdapter(
        registry,
        spec=args.target,
        transport="streamable-http" if args.http else "stdio",
        journal=journal,
    )
    noun = "tool" if count == 1 else "tools"
    try:
        if not args.http:
            from dsh_nb.mcp.standalone import serve_stdio

            print(
                f"dsh_nb: serving {count} {noun} from {args.target} on stdio",
                file=sys.stderr,
                flush=True,
            )
            asyncio.run(serve_stdio(adapter, wire))
            return 0
        return _run_http(args, adapter, token, f"{count} {noun}")
    finally:
        if journal is not None:
            journal.close()


def _run_http(
    args: argparse.Namespace,
    adapter: StandaloneAdapter,
    token: str | None,
    what: str,
) -> int:
    from dsh_nb.mcp._auth import new_token
    from dsh_nb.mcp.standalone import HttpOptions, ListenError, serve_http
    from dsh_nb.mcp.target import short_name

    if not _is_loopback_host(args.host):
        logging.getLogger("dsh_nb.mcp").warning(
            "serving on %s: reachable from other machines; anyone with the token "
            "can run these tools",
            args.host,
        )
    options = HttpOptions(
        host=args.host,
        port=args.port,
        token=token or new_token(),
        stateless=args.stateless,
        name=args.name or short_name(args.target),
        allowed_hosts=tuple(args.allowed_host),
        **({} if args.session_idle is None else {"session_idle_s": args.session_idle}),
    )

    def ready(url: str, token_file: str | None) -> None:
        mode = ", stateless" if args.stateless else ""
        print(f"dsh_nb: serving {what} from {args.target} at {url}{mode}", flush=True)
        where = args.token_file or token_file
        print(
            f"dsh_nb: the bearer token is in {where} "
            f"(python -m dsh_nb mcp-config --kernel {options.name} prints it)",
            flush=True,
        )

    from dsh_nb.mcp.runtime import RuntimeFileError

    try:
        asyncio.run(serve_http(adapter, options, ready))
    except (ListenError, RuntimeFileError) as exc:
        raise UsageError(str(exc)) from None
    return 0


def _is_loopback_host(host: str) -> bool:
    from dsh_nb.mcp.server import _is_loopback

    return _is_loopback(host)


def main(argv: list[str]) -> int:
    """Parse, check, serve; return the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        _check(args)
        return _run(args)
    except UsageError as exc:
        parser.print_usage(sys.stderr)
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
