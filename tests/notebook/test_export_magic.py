"""``%tools export`` in an in-process shell: the magic's line, what a
``%%tool`` cell records, and tools made by ``define_tool``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ipshell import run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.tools import ToolExecutionInput


def _stored(ip: InteractiveShell, code: str) -> Any:
    """Run a cell as a frontend does: kept in the history."""
    result = ip.run_cell(code, store_history=True)
    assert result.success, result.error_in_exec or result.error_before_exec
    return result


def _load(path: Path) -> dict[str, Any]:
    module: dict[str, Any] = {"__name__": "exported"}
    exec(compile(path.read_text(), str(path), "exec"), module)
    return module


def _call(module: dict[str, Any], name: str, **args: Any) -> str:
    result = asyncio.run(
        module["registry"].execute(
            ToolExecutionInput(call_id="1", name=name, arguments=args)
        )
    )
    return str(result.content[0]["text"])


def test_usage_errors_name_the_fix(ip: InteractiveShell, tmp_path: Path) -> None:
    assert "needs a file name" in str(run(ip, "%tools export").error)
    assert "a .py module" in str(run(ip, f"%tools export {tmp_path}/x.txt").error)
    assert "unknown option '--nope'" in str(
        run(ip, f"%tools export {tmp_path}/x.py --nope").error
    )
    assert "no tools to export" in str(run(ip, f"%tools export {tmp_path}/x.py").error)


def test_a_tool_cell_is_exported_from_what_it_recorded(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    # run() keeps no history: only what the %%tool cell recorded is known.
    run(
        ip,
        "%%tool --timeout 2s\nimport math\n\ndef root(x: float) -> str:\n"
        '    """Square root."""\n    return f"{math.sqrt(x):g}"\n',
    )
    path = tmp_path / "tools.py"
    cell = run(ip, f"%tools export {path}")
    assert cell.error is None, cell.error
    module = _load(path)
    assert _call(module, "root", x=9) == "3"
    assert module["registry"].get("root").timeout_ms == 2000.0


def test_define_tool_bound_to_a_name_is_exported(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    _stored(ip, "import dsh_nb\nfrom dsh_nb import define_tool, SchemaProp")
    _stored(
        ip,
        'echo = define_tool(name="echo", description="Echo it.",\n'
        '    parameters={"text": SchemaProp(type="string", required=True)},\n'
        '    execute=lambda args: args["text"] * 2)\n'
        "dsh_nb.registry().register(echo)",
    )
    path = tmp_path / "tools.py"
    cell = run(ip, f"%tools export {path}")
    assert cell.error is None, cell.error
    text = path.read_text()
    assert "echo = define_tool(" in text and "registry.register(echo)" in text
    assert "dsh_nb.registry()" not in text
    assert _call(_load(path), "echo", text="ab") == "abab"
