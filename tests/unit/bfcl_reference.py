"""BFCL's own AST checker, run in a subprocess so a test can compare verdicts.

``ast_checker`` imports ``bfcl_eval.constants.model_config``, which imports
every model SDK; a stub module in its place names one model whose names have
their dots replaced (as BFCL does for OpenAI). Reads a first JSON line
listing the cases (``{"category", "functions", "answer"}``), then one line
``[case_index, output]`` a check, and writes one JSON verdict a line: true,
false, or ``"raised: ..."``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import types
from collections.abc import Sequence
from typing import Any

MODEL = "reference"


def _main() -> None:
    stub = types.ModuleType("bfcl_eval.constants.model_config")

    class Config:
        underscore_to_dot = True

    stub.MODEL_CONFIG_MAPPING = {MODEL: Config()}  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = stub
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    cases = json.loads(sys.stdin.readline())
    for line in sys.stdin:
        index, output = json.loads(line)
        case = cases[index]
        try:
            verdict: object = ast_checker(
                case["functions"],
                output,
                case["answer"],
                Language.PYTHON,
                case["category"],
                MODEL,
            )["valid"]
        except Exception as exc:  # noqa: BLE001 - reported, compared by the test
            verdict = f"raised: {type(exc).__name__}: {exc}"
        sys.stdout.write(json.dumps(verdict) + "\n")


def verdicts(
    cases: Sequence[dict[str, Any]], checks: Sequence[tuple[int, Any]]
) -> list[object]:
    """BFCL's verdict on each ``(case_index, output)``, a case being
    ``{"category", "functions", "answer"}`` and an output BFCL's decoded
    ``[{name: arguments}, ...]``."""
    lines = [json.dumps(list(cases))] + [json.dumps(list(c)) for c in checks]
    done = subprocess.run(
        [sys.executable, __file__],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == len(checks)
    return out


if __name__ == "__main__":
    _main()
