"""BFCL's own ``multi_turn_checker``, in a subprocess, on given model outputs.

Its module imports only BFCL's executable backend (no model SDK), so no
stand-in module is needed, unlike the AST checker. It runs in its own
process because BFCL's executor keeps instances in its module's globals
and its classes share module-level default state between instances; our
process must not see either. Reads one JSON line a check,
``{"entry", "truth", "model"}`` (``model``: per turn, per step, BFCL's
decoded call strings), and writes one JSON verdict a line: true, false,
or ``"raised: ..."``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any


def _main() -> None:
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import (
        multi_turn_checker,
    )

    out, sys.stdout = sys.stdout, sys.stderr  # what their classes print
    for n, line in enumerate(sys.stdin):
        check = json.loads(line)
        entry = check["entry"]
        try:
            verdict: object = multi_turn_checker(
                check["model"],
                check["truth"],
                entry,
                entry["id"].rsplit("_", 1)[0],
                f"reference{n}",  # BFCL keys its instances by model and entry
            )["valid"]
        except Exception as exc:  # noqa: BLE001 - reported, compared by the test
            verdict = f"raised: {type(exc).__name__}: {exc}"
        out.write(json.dumps(verdict) + "\n")


def decoded(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Calls as BFCL's ``convert_to_function_call`` writes them."""
    return [
        f"{name}({','.join(f'{k}={v!r}' for k, v in args.items())})"
        for name, args in calls
    ]


def verdicts(checks: Sequence[Mapping[str, Any]]) -> list[object]:
    """BFCL's verdict on each check (see the module doc)."""
    lines = [json.dumps(dict(c)) for c in checks]
    done = subprocess.run(
        [sys.executable, __file__],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == len(checks), done.stderr[-3000:]
    return out


if __name__ == "__main__":
    _main()
