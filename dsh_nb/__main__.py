"""``python -m dsh_nb demo | serve | eval | mcp-bridge | mcp-config``."""

from __future__ import annotations

import sys


def _main(argv: list[str]) -> int:
    command = argv[:1]
    if command == ["serve"]:
        from dsh_nb.mcp.servecli import main as serve

        return serve(argv[1:])
    if command == ["eval"]:
        from dsh_nb.evals.cli import main as evaluate

        return evaluate(argv[1:])
    if command == ["mcp-bridge"]:
        from dsh_nb.mcp.bridge import main as bridge

        return bridge(argv[1:])
    if command == ["mcp-config"]:
        from dsh_nb.mcp.bridge import print_config

        return print_config(argv[1:])
    from dsh_nb.demo import main

    if command != ["demo"]:
        print(
            "usage: python -m dsh_nb demo | serve MODULE[:ATTR] [--stdio | --http]"
            " | eval CASES [--tools MODULE[:ATTR]] [--replay F] [--min-pass RATE]"
            " | mcp-bridge [--kernel NAME | --latest]"
            " | mcp-config [MODULE[:ATTR] | --kernel NAME | --latest]",
            file=sys.stderr,
        )
        return 2
    return main(argv)


sys.exit(_main(sys.argv[1:]))
