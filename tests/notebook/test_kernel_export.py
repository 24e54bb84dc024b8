"""``%tools export`` in a real kernel; the module it writes, in a fresh interpreter.

The notebook defines tools every way a user does (``%%tool`` with its
options, ``@tool`` registered by code, sync and async), policy rows, and a
listener on every seam; the exported module, imported by another Python
process, must list the same schemas and answer the same calls with the same
results, denial texts included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_harness import KernelHarness

CELLS = [
    "import re, os, json\nimport dsh_nb\nfrom dsh_nb import tool, Deny, Block\nRATE = 3\nUNUSED = os.getpid()",
    "# scale a number by the notebook's rate\ndef scale(x):\n    return x * RATE",
    '%%tool --timeout 5s\ndef add(a: int, b: int = 2) -> str:\n    """Add two integers, scaling the second."""\n    return str(a + scale(b))\n',
    '%%tool --ask\ndef search(query: str, limit: int = 3) -> str:\n    """Search the notes."""\n    return ", ".join(f"{query}-{i}" for i in range(limit))\n',
    '%%tool --description "Shout it" --coerce\nasync def shout(text: str, times: int = 1) -> str:\n    return (text.upper() + "!") * times\n',
    '@tool(timeout_ms=2000)\ndef words(text: str) -> list:\n    """Split text into words."""\n    return [{"type": "text", "text": w} for w in re.findall(r"\\w+", text)]\n\ndsh_nb.registry().register(words)',
    '%%tool\ndef rm(path: str) -> str:\n    """Remove a file (not really)."""\n    return f"removed {path}"\n',
    "%tool_policy deny rm",
    '@dsh_nb.pre_execute\ndef no_secrets(execution, next):\n    if "secret" in json.dumps(execution.arguments):\n        return Deny("no secrets, please")\n    return next()',
    '@dsh_nb.guard\ndef small_limits(execution):\n    if execution.arguments.get("limit", 0) > 10:\n        return "limit too large"\n    return None',
    '@dsh_nb.post_execute\ndef no_empty(execution, result, next):\n    if not result.content:\n        return Block([{"type": "text", "text": "nothing found; try other words"}])\n    return next()',
    "SEEN = []\n\n@dsh_nb.on_result\ndef remember(execution, result):\n    SEEN.append(execution.name)",
]

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("add", {"a": 1}),
    ("add", {"a": 1, "b": 10}),
    ("add", {"a": "one"}),
    ("add", {"a": 1, "limit": 50}),
    ("add", {"a": 1, "note": "secret"}),
    ("search", {"query": "q"}),
    ("shout", {"text": "hi", "times": "2"}),
    ("words", {"text": "two words"}),
    ("words", {"text": "..."}),
    ("rm", {"path": "/etc"}),
    ("nope", {}),
]

# Run CALLS on a registry with an answerer that rejects every ask; print
# the schemas, the results and what the on_result listener saw.
RUN = """
import asyncio, json
from dsh_nb.tools import Agent, ToolExecutionInput
from dsh_nb.tools.audit.journal import result_json, turn
from dsh_nb.tools.jsonvalue import to_plain

async def _run(registry, calls):
    agent = Agent("compare")
    out = []
    for i, (name, args) in enumerate(calls):
        with turn(agent):
            result = await registry.execute(ToolExecutionInput(
                call_id=f"c{i}", name=name, arguments=args, agent=agent))
        out.append(to_plain(result_json(result)))
    return out
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelHarness]:
    cwd = tmp_path_factory.mktemp("export")
    with KernelHarness(cwd=cwd) as harness:
        harness.run("%load_ext dsh_nb")
        for cell in CELLS:
            harness.run(cell)
        yield harness


def _kernel_view(kernel: KernelHarness) -> dict[str, Any]:
    kernel.run(RUN)
    kernel.run(
        "dsh_nb.registry().approval.on_request("
        "lambda request, next: 'rejected', prepend=True)"
    )
    reply = kernel.run(
        f"_results = await _run(dsh_nb.registry(), {CALLS!r})\n"
        "print(json.dumps({'schemas': dsh_nb.registry().schemas(), "
        "'results': _results, 'seen': SEEN}))"
    )
    return dict(json.loads(reply.stdout))


def _module_view(path: Path, cwd: Path) -> dict[str, Any]:
    code = (
        RUN
        + f"""
import importlib.util
spec = importlib.util.spec_from_file_location("exported", {str(path)!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
from dsh_nb.tools import ApprovalService
module.registry.approval = ApprovalService()
module.registry.approval.on_request(lambda request, next: "rejected")
results = asyncio.run(_run(module.registry, {CALLS!r}))
print(json.dumps({{"schemas": module.registry.schemas(), "results": results,
                  "seen": module.SEEN}}))
import sys
print(sorted(m for m in ("IPython", "ipykernel", "ipywidgets") if m in sys.modules),
      file=sys.stderr)
"""
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"  # no Jupyter in the module
    return dict(json.loads(done.stdout))


def test_export_rebuilds_the_registry_in_a_fresh_interpreter(
    kernel: KernelHarness, tmp_path: Path
) -> None:
    path = tmp_path / "tools.py"
    reply = kernel.run(f"%tools export {path}")
    assert "5 tools, 2 policy rows, 4 listeners and guards" in reply.stdout
    text = path.read_text(encoding="utf-8")
    # The cells' own source, the imports they use and no more.
    assert "# scale a number by the notebook's rate\ndef scale(x):" in text
    assert "import re, json\nfrom dsh_nb import tool, Deny, Block\n" in text
    assert "import os" not in text
    assert "UNUSED" not in text and "dsh_nb.registry()" not in text
    assert "@dsh_nb.pre_execute" not in text  # registered on `registry` instead
    assert "registry.register(_dsh.tool(timeout_ms=5000.0)(add))" in text
    assert "_dsh.tool(description='Shout it', coerce=True)(shout)" in text
    assert "'search': _dsh.Ask('policy: ask for search')" in text
    module = _module_view(path, tmp_path)
    notebook = _kernel_view(kernel)
    assert module["schemas"] == notebook["schemas"]
    assert [s["name"] for s in module["schemas"]] == [
        "add",
        "search",
        "shout",
        "words",
        "rm",
    ]
    assert module["results"] == notebook["results"]
    assert module["seen"] == notebook["seen"]
    texts = [
        " ".join(b.get("text", "") for b in r["content"]) for r in notebook["results"]
    ]
    # The calls exercise every kind of answer, so equal means something.
    assert texts[0] == "7" and texts[1] == "31"
    assert notebook["results"][2]["error"]["code"] == "INVALID_ARGS"
    assert texts[3] == "Error: limit too large"
    assert texts[4] == "Error: no secrets, please"
    assert texts[5] == 'Error: the user rejected tool "search"'
    assert texts[6] == "HI!HI!"
    assert texts[7] == "two words"
    assert texts[8] == "nothing found; try other words"
    assert texts[9] == 'Error: tool "rm" is denied by %tool_policy'
    assert notebook["results"][10]["error"]["code"] == "UNKNOWN_TOOL"


def test_export_of_named_tools_keeps_their_rows_only(
    kernel: KernelHarness, tmp_path: Path
) -> None:
    path = tmp_path / "two.py"
    reply = kernel.run(f"%tools export {path} add rm")
    assert "2 tools, 1 policy rows" in reply.stdout
    text = path.read_text(encoding="utf-8")
    assert "def search" not in text and "'search'" not in text
    assert "registry.register(_dsh.tool(rm))" in text
    unknown = kernel.execute(f"%tools export {path} ad")
    assert unknown.status == "error"
    assert "unknown tool 'ad'; did you mean 'add'?" in unknown.text


def test_export_refuses_to_overwrite_a_file_it_did_not_write(
    kernel: KernelHarness, tmp_path: Path
) -> None:
    path = tmp_path / "mine.py"
    path.write_text("print('precious')\n")
    reply = kernel.execute(f"%tools export {path}")
    assert reply.status == "error" and "--force" in reply.text
    assert path.read_text() == "print('precious')\n"
    kernel.run(f"%tools export {path} --force")
    assert path.read_text().startswith('"""Tools exported from a notebook')


def test_what_cannot_be_exported_is_named_and_nothing_is_written(
    kernel: KernelHarness, tmp_path: Path
) -> None:
    kernel.run('exec("HIDDEN = 5")')
    kernel.run('%%tool\ndef peek() -> str:\n    """Peek."""\n    return str(HIDDEN)\n')
    kernel.run(
        'def make(k):\n    def times(x: int) -> str:\n        """Times k."""\n'
        "        return str(x * k)\n    return times\n\n"
        "dsh_nb.registry().register(tool(make(3)))"
    )
    kernel.run("_undo = dsh_nb.registry().on_result(lambda execution, result: None)")
    path = tmp_path / "bad.py"
    reply = kernel.execute(f"%tools export {path}")
    assert reply.status == "error"
    assert "nothing written" in reply.text and "3 problems" in reply.text
    [table] = [t for t in reply.data("text/plain") if "cannot export" in t]
    assert "tool 'peek'" in table and "'HIDDEN'" in table
    assert "tool 'times'" in table and "closure" in table
    assert "<lambda>" in table and "bound to no name" in table
    assert not path.exists()
