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


def test_names_after_a_flag_are_names(ip: InteractiveShell, tmp_path: Path) -> None:
    """argparse ends a NAME list at ``--force``; the names after it count."""
    run(ip, '%%tool\ndef root(x: float) -> str:\n    """Root."""\n    return "1"\n')
    path = tmp_path / "tools.py"
    path.write_text("not ours\n")
    message = str(run(ip, f"%tools export {path} --force nosuch").error)
    assert "unknown tool 'nosuch'" in message
    assert run(ip, f"%tools export {path} --force root").error is None
    assert "def root(" in path.read_text()


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


def test_statements_after_the_line_that_raised_are_not_exported(
    ip: InteractiveShell, tmp_path: Path, monkeypatch: Any
) -> None:
    """A cell that raised on its first line never ran its second: the
    kernel's ``LIMIT`` is 5, and the exported module must not run the
    command the unrun line holds (importing it is what ``serve`` does)."""
    monkeypatch.chdir(tmp_path)
    _stored(ip, "import os\nLIMIT = 5")
    _stored(
        ip,
        "import dsh_nb\n\n@dsh_nb.tool\ndef cap(x: int) -> str:\n"
        '    """Cap x."""\n    return str(min(x, LIMIT))\n\n'
        "dsh_nb.registry().register(cap)",
    )
    failed = ip.run_cell(
        'undefined_name\nLIMIT = os.system("touch never-ran.txt") or 10**6',
        store_history=True,
    )
    assert isinstance(failed.error_in_exec, NameError)
    assert ip.user_ns["LIMIT"] == 5
    path = tmp_path / "tools.py"
    cell = run(ip, f"%tools export {path}")
    assert cell.error is None, cell.error
    text = path.read_text()
    assert "never-ran" not in text and "LIMIT = 5" in text
    assert _call(_load(path), "cap", x=100) == "5"
    assert not (tmp_path / "never-ran.txt").exists()


def test_a_cell_that_raised_midway_keeps_what_ran_before(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    failed = ip.run_cell(
        "STEP = 2\nraise RuntimeError('stop')\nSTEP = 1000", store_history=True
    )
    assert isinstance(failed.error_in_exec, RuntimeError)
    _stored(
        ip,
        "import dsh_nb\n\n@dsh_nb.tool\ndef twice(x: int) -> str:\n"
        '    """Step x."""\n    return str(x * STEP)\n\n'
        "dsh_nb.registry().register(twice)",
    )
    path = tmp_path / "tools.py"
    assert run(ip, f"%tools export {path}").error is None
    assert "STEP = 1000" not in path.read_text()
    assert _call(_load(path), "twice", x=3) == "6"


def test_a_registered_secret_written_in_a_cell_is_not_exported(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    from dsh_nb.tools.audit.secrets import add_secret

    key = "sk-live-0123456789abcdef"
    undo = add_secret(key)  # as a Chat registers its API key
    try:
        _stored(ip, f"API_KEY = {key!r}")
        _stored(
            ip,
            "import dsh_nb\n\n@dsh_nb.tool\ndef whoami() -> str:\n"
            '    """Say which key."""\n    return API_KEY[:3]\n\n'
            "dsh_nb.registry().register(whoami)",
        )
        path = tmp_path / "tools.py"
        cell = run(ip, f"%tools export {path}")
        assert "nothing written" in str(cell.error)
        assert not path.exists()
        shown = " ".join(str(o["data"].get("text/plain", "")) for o in cell.outputs)
        assert "registered secret" in shown and "os.environ" in shown, shown
        assert "line 1" in shown and key not in shown
    finally:
        undo()
