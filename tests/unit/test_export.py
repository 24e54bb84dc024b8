"""``dsh_nb.export`` without Jupyter: cells run with exec, as a kernel runs them.

Each cell is compiled under its own file name with its text in linecache,
which is what IPython does, so functions can be traced to their cell.
"""

from __future__ import annotations

import asyncio
import linecache
import textwrap
from typing import Any

from dsh_nb.export import (
    POLICY_TABLE,
    Cell,
    Hook,
    ToolSource,
    export_module,
    registry_hooks,
)
from dsh_nb.export.cells import needs_of
from dsh_nb.tools import Agent, Allow, Ask, Deny, ToolExecutionInput, ToolRegistry
from dsh_nb.tools.audit.journal import turn


class Notebook:
    def __init__(self) -> None:
        self.ns: dict[str, Any] = {"__name__": "__main__"}
        self.cells: list[Cell] = []

    def run(self, code: str) -> None:
        code = textwrap.dedent(code).lstrip("\n")
        number = len(self.cells) + 1
        name = f"<notebook-cell-{id(self)}-{number}>"
        lines = [line + "\n" for line in code.splitlines()]
        linecache.cache[name] = (len(code), None, lines, name)
        exec(compile(code, name, "exec"), self.ns)
        self.cells.append(Cell(number, code))


def _load(text: str) -> dict[str, Any]:
    module: dict[str, Any] = {"__name__": "exported"}
    exec(compile(text, "<exported>", "exec"), module)
    return module


def test_needs_split_now_from_later() -> None:
    needs = needs_of(
        "@deco(OPT)\ndef f(a=D):\n    return g(a) + f(1)\nclass C:\n    x = Y\n"
    )
    assert needs.now == {"deco", "OPT", "D", "Y"}
    assert needs.later == {"g"}  # f is bound by the statement itself


def test_a_tool_takes_its_imports_helpers_and_constants_only() -> None:
    nb = Notebook()
    nb.run("import re, os, json\nfrom dsh_nb.tools import tool\nRATE = 3\nOTHER = 4")
    nb.run(
        '''
        # scales by the rate
        def helper(x):
            return x * RATE

        def add(a: int, b: int = 2) -> str:
            """Add."""
            return str(a + helper(b))
        '''
    )
    nb.run("print('a cell that binds nothing')")
    done = export_module(
        cells=nb.cells,
        namespace=nb.ns,
        tools=[ToolSource(name="add", obj=nb.ns["add"], build=True)],
    )
    assert done.problems == ()
    assert done.text is not None
    assert "import re" not in done.text and "OTHER" not in done.text
    assert "# scales by the rate\ndef helper(x):" in done.text
    assert "print(" not in done.text
    module = _load(done.text)
    registry: ToolRegistry = module["registry"]
    assert [s["name"] for s in registry.schemas()] == ["add"]
    result = asyncio.run(
        registry.execute(
            ToolExecutionInput(call_id="1", name="add", arguments={"a": 1})
        )
    )
    assert result.content[0]["text"] == "7"


def test_only_the_needed_names_of_an_import_are_kept() -> None:
    nb = Notebook()
    nb.run("import os, json, re as regex\nfrom math import pi, tau")
    nb.run("def area(r: float) -> str:\n    '''Area.'''\n    return str(pi * r * r)")
    done = export_module(
        cells=nb.cells,
        namespace=nb.ns,
        tools=[ToolSource(name="area", obj=nb.ns["area"], build=True)],
    )
    assert done.text is not None
    assert "from math import pi\n" in done.text
    assert "import os" not in done.text and "tau" not in done.text


def test_the_latest_binding_counts_and_a_rebinding_needs_the_first() -> None:
    nb = Notebook()
    nb.run("N = 1")
    nb.run("N = 2")
    nb.run("N += 40")
    nb.run("def n() -> str:\n    '''N.'''\n    return str(N)")
    done = export_module(
        cells=nb.cells,
        namespace=nb.ns,
        tools=[ToolSource(name="n", obj=nb.ns["n"], build=True)],
    )
    assert done.text is not None
    assert "N = 1" not in done.text
    assert "N = 2\n" in done.text and "N += 40" in done.text
    assert _load(done.text)["N"] == 42


def test_policy_rows_and_hooks_are_registered_in_order() -> None:
    nb = Notebook()
    nb.run("from dsh_nb.tools import tool, Deny")
    nb.run("@tool\ndef a() -> str:\n    '''A.'''\n    return 'a'")
    nb.run("@tool\ndef b() -> str:\n    '''B.'''\n    return 'b'")
    nb.run(
        "def first(execution, next):\n"
        "    return Deny('first') if execution.name == 'b' else next()"
    )
    nb.run(
        "def guard_a(execution):\n    return 'no a' if execution.name == 'a' else None"
    )
    kernel = ToolRegistry()
    kernel.on_pre_execute(nb.ns["first"])
    kernel.guard(nb.ns["guard_a"])
    hooks = [Hook("pre_execute", POLICY_TABLE), *registry_hooks(kernel)]
    done = export_module(
        cells=nb.cells,
        namespace=nb.ns,
        tools=[
            ToolSource(name="a", obj=nb.ns["a"]),
            ToolSource(name="b", obj=nb.ns["b"]),
        ],
        hooks=hooks,
        policies={"b": Ask("ask b"), "a": Allow()},
    )
    assert done.text is not None, done.problems
    lines = done.text.splitlines()
    order = [line for line in lines if line.startswith("registry.")]
    assert order == [
        "registry.register(a)",
        "registry.register(b)",
        "registry.on_pre_execute(_tool_policy)",
        "registry.on_pre_execute(first)",
        "registry.guard(guard_a)",
    ]
    registry: ToolRegistry = _load(done.text)["registry"]
    agent = Agent("t")

    async def call(name: str) -> str:
        with turn(agent):
            result = await registry.execute(
                ToolExecutionInput(call_id=name, name=name, arguments={}, agent=agent)
            )
        return str(result.content[0]["text"])

    # "a" is allowed by its row, so "first" never sees it; the guard still runs.
    assert asyncio.run(call("a")) == "Error: no a"
    # "b" asks; with no approval service the ask's reason is the denial.
    assert asyncio.run(call("b")) == "Error: ask b"


def test_what_cannot_be_exported_is_named() -> None:
    nb = Notebook()
    nb.run("exec('HIDDEN = 1')")
    nb.run("def peek() -> str:\n    '''Peek.'''\n    return str(HIDDEN + missing)")
    nb.run(
        "def make(k):\n    def inner(x: int) -> str:\n        '''I.'''\n"
        "        return str(k * x)\n    return inner\ntimes = make(2)"
    )
    nb.run("async def later():\n    return 1\nVALUE = await_me = None")
    nb.run("registry = 'mine'\ndef uses() -> str:\n    '''U.'''\n    return registry")
    done = export_module(
        cells=nb.cells,
        namespace=nb.ns,
        tools=[
            ToolSource(name="peek", obj=nb.ns["peek"], build=True),
            ToolSource(name="times", obj=nb.ns["times"], build=True),
            ToolSource(name="uses", obj=nb.ns["uses"], build=True),
        ],
        hooks=[Hook("result", lambda execution, result: None)],
    )
    assert done.text is None
    subjects = " | ".join(f"{p.subject}: {p.reason}" for p in done.problems)
    assert "'HIDDEN', which no cell assigns" in subjects
    assert "'missing', which no cell defines" in subjects
    assert "defined inside make()" in subjects
    assert "'registry' (cell [5] line 1)" in subjects
    assert "result listener " in subjects and "<lambda>" in subjects


def test_scoped_hooks_and_kernel_only_objects_are_refused() -> None:
    nb = Notebook()
    nb.run("def audit(execution, result):\n    pass")
    nb.run("KERNEL = object()")
    nb.run("def t() -> str:\n    '''T.'''\n    return str(KERNEL)")
    kernel_only = nb.ns["KERNEL"]
    done = export_module(
        cells=nb.cells,
        namespace=nb.ns,
        tools=[ToolSource(name="t", obj=nb.ns["t"], build=True)],
        hooks=[Hook("result", nb.ns["audit"], Agent("someone"))],
        notebook_only={id(kernel_only): "the kernel's thing"},
    )
    reasons = [p.reason for p in done.problems]
    assert any("registered for 'someone' alone" in r for r in reasons)
    assert any("uses the kernel's thing" in r for r in reasons)


def test_a_module_level_object_from_a_library_is_imported() -> None:
    nb = Notebook()
    nb.run("from dsh_nb.tools import Deny as NoWay")
    nb.run("def never(execution, next):\n    return NoWay('never')")
    done = export_module(
        cells=nb.cells,
        namespace=nb.ns,
        tools=[],
        hooks=[Hook("pre_execute", nb.ns["never"])],
    )
    assert done.text is not None
    assert "from dsh_nb.tools import Deny as NoWay" in done.text
    assert isinstance(_load(done.text)["never"](None, None), Deny)


def test_the_registrys_max_result_rows_is_exported() -> None:
    nb = Notebook()
    nb.run("def rows(n: int) -> list:\n    '''Rows.'''\n    return iter(range(n))")
    tools = [ToolSource(name="rows", obj=nb.ns["rows"], build=True)]
    plain = export_module(cells=nb.cells, namespace=nb.ns, tools=tools)
    assert plain.text is not None and "max_result_rows" not in plain.text
    done = export_module(
        cells=nb.cells, namespace=nb.ns, tools=tools, max_result_rows=3
    )
    assert done.text is not None
    registry: ToolRegistry = _load(done.text)["registry"]
    assert registry.max_result_rows == 3
    result = asyncio.run(
        registry.execute(
            ToolExecutionInput(call_id="1", name="rows", arguments={"n": 9})
        )
    )
    assert result.content[0]["text"] == '{"data":[0,1,2],"shown_rows":3,"more":true}'
