"""Loading, reloading and unloading the extension; config; listener decorators."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from ipshell import EXT, run
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.notebook import current, extension
from dsh_nb.notebook.config import DshConfig
from dsh_nb.notebook.magics.call import HELPER, CallTransformer
from dsh_nb.notebook.magics.chat import HELPER as CHAT_HELPER
from dsh_nb.notebook.magics.evaluation import HELPER as EVAL_HELPER

MAGICS = {
    "line": ("tools", "call", "tool_policy", "tool_log", "tool_eval"),
    "cell": ("tool", "call", "chat"),
}
HELPERS = (HELPER, CHAT_HELPER, EVAL_HELPER)
LINE_TRANSFORMS = ("CallLine", "ToolEvalLine")

ADD = '''%%tool
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)
'''


def _ours(ip: InteractiveShell) -> list[object]:
    return [t for t in ip.input_transformers_cleanup if isinstance(t, CallTransformer)]


def test_load_installs_magics_config_registry_and_rewrite(ip: InteractiveShell) -> None:
    state = extension.current_state()
    assert state.shell is ip
    for kind, names in MAGICS.items():
        for name in names:
            assert name in ip.magics_manager.magics[kind], (kind, name)
    assert state.config in ip.configurables
    assert len(_ours(ip)) == 1
    assert ip.user_ns[HELPER] is not None and HELPER in ip.user_ns_hidden
    assert extension.registry() is state.registry
    assert state.registry.approval is not None


def test_second_load_is_a_no_op(ip: InteractiveShell) -> None:
    before = extension.registry()
    configurables = len(ip.configurables)
    assert run(ip, f"%load_ext {EXT}").error is None
    extension.load_ipython_extension(ip)
    assert extension.registry() is before
    assert len(ip.configurables) == configurables
    assert len(_ours(ip)) == 1


def _line_transforms(ip: InteractiveShell) -> list[str]:
    tokens = ip.input_transformer_manager.token_transformers
    return sorted(t.__name__ for t in tokens if t.__name__ in LINE_TRANSFORMS)


def test_unload_removes_everything_load_added(ip: InteractiveShell) -> None:
    state = extension.current_state()
    run(ip, ADD)
    assert "add" in state.registry
    # A rewrite puts its helper in the namespace: unload must take each away.
    assert f"await {CHAT_HELPER}(" in ip.transform_cell("%%chat\nhi\n")
    assert f"await {EVAL_HELPER}(" in ip.transform_cell("%tool_eval cases\n")
    assert all(name in ip.user_ns for name in HELPERS)
    assert _line_transforms(ip) == sorted(LINE_TRANSFORMS)
    assert run(ip, f"%unload_ext {EXT}").error is None
    for kind, names in MAGICS.items():
        for name in names:
            assert name not in ip.magics_manager.magics[kind], (kind, name)
    for magics in (
        "ToolCellMagics",
        "ToolsMagics",
        "CallMagics",
        "PolicyMagics",
        "LogMagics",
        "ChatMagics",
        "EvalMagics",
    ):
        assert magics not in ip.magics_manager.registry
    assert state.config not in ip.configurables
    assert _ours(ip) == []
    assert _line_transforms(ip) == []
    for name in HELPERS:
        assert name not in ip.user_ns and name not in ip.user_ns_hidden
    assert ip.transform_cell("%%chat\nhi\n").startswith("get_ipython()")
    assert "add" not in state.registry  # the %%tool registration was disposed
    assert len(state.registry._pre) == 0 and len(state.registry._execute) == 0
    assert current.loaded() is None
    assert run(ip, "%tools").error is not None  # the magic is gone


def test_reload_gives_a_fresh_registry(ip: InteractiveShell) -> None:
    old = extension.registry()
    run(ip, ADD)
    assert run(ip, f"%reload_ext {EXT}").error is None
    new = extension.registry()
    assert new is not old and "add" not in new
    assert len(_ours(ip)) == 1
    assert run(ip, ADD).error is None
    assert run(ip, '%call add {"a": 1, "b": 2}').cards()[-1]["status"] == "done"


def test_registry_loads_the_extension_on_the_fly(ip: InteractiveShell) -> None:
    run(ip, f"%unload_ext {EXT}")
    registry = extension.registry()
    assert extension.current_state().shell is ip
    assert EXT in ip.extension_manager.loaded
    assert "tool" in ip.magics_manager.magics["cell"]
    assert extension.registry() is registry


def test_script_mode_works_without_ipython() -> None:
    code = textwrap.dedent(
        """
        import asyncio, sys
        from dsh_nb.notebook import extension
        from dsh_nb.tools.definition import tool
        assert "IPython" not in sys.modules, "importing the extension loaded IPython"

        @tool
        def add(a: int, b: int) -> str:
            '''Add.'''
            return str(a + b)

        extension.registry().register(add)
        result = asyncio.run(extension.call("add", a=2, b=3))
        events = [e["type"] for e in extension.current_state().agent.session.events]
        print(result.text, "IPython" in sys.modules, events)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == (
        "5 False ['turn/start', 'tool/call', 'tool/result', 'turn/end']"
    )


def test_config_traits_have_help_and_defaults() -> None:
    config = DshConfig()
    for name in DshConfig.class_traits(config=True):
        assert DshConfig.class_traits()[name].help, name
    assert config.approval_policy == "ask"
    assert config.headless_outcome == "unavailable"
    assert config.default_timeout_ms is None
    assert config.card_limits().max_output_lines == 40


def test_config_rejects_bad_values(ip: InteractiveShell) -> None:
    state = extension.current_state()
    run(ip, "%config DshConfig.max_output_lines = 0")
    run(ip, "%config DshConfig.default_timeout_ms = -5")
    run(ip, '%config DshConfig.approval_policy = "sometimes"')
    assert state.config.max_output_lines == 40
    assert state.config.default_timeout_ms is None
    assert state.config.approval_policy == "ask"


SLOW = """%%tool
async def slow(seconds: float) -> str:
    import asyncio
    await asyncio.sleep(seconds)
    return "late"
"""


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("default_timeout_ms", "float('inf')"),
        ("default_timeout_ms", "float('nan')"),
        ("default_timeout_ms", "-1"),
        ("default_timeout_ms", "0"),
        ("approval_timeout", "float('inf')"),
        ("approval_timeout", "float('-inf')"),
        ("approval_timeout", "float('nan')"),
        ("max_output_lines", "-3"),
        ("max_output_chars", "float('inf')"),
        ("max_diff_bytes", "-1"),
        ("approval_policy", "'bogus'"),
        ("frontend", "42"),
    ],
)
def test_a_rejected_value_keeps_the_previous_one(
    ip: InteractiveShell, name: str, value: str
) -> None:
    state = extension.current_state()
    run(ip, "%config DshConfig.default_timeout_ms = 30")
    run(ip, "%config DshConfig.approval_timeout = 5")
    before = getattr(state.config, name)
    cell = run(ip, f"%config DshConfig.{name} = {value}")
    assert getattr(state.config, name) == before
    [line] = cell.stderr.strip().splitlines()
    assert line.startswith(f"DshConfig.{name}: rejected ")
    assert line.endswith(f"keeping {before!r}")
    assert ip.config.DshConfig[name] == before  # struck from the shell's config


def test_an_infinite_default_timeout_keeps_the_deadline(ip: InteractiveShell) -> None:
    run(ip, SLOW)
    run(ip, "%config DshConfig.default_timeout_ms = 20")
    run(ip, "%config DshConfig.default_timeout_ms = float('inf')")
    card = run(ip, '%call slow {"seconds": 1}').cards()[-1]
    assert card["status"] == "timed-out"
    assert card["result"]["content"][0]["text"] == (
        "Error: tool call timed out after 20ms"
    )


def test_a_rejected_value_never_breaks_reload_or_calls(ip: InteractiveShell) -> None:
    run(ip, SLOW)
    run(ip, "%config DshConfig.default_timeout_ms = 20")
    run(ip, '%config DshConfig.approval_policy = "never"')
    run(ip, '%config DshConfig.approval_policy = "bogus"')
    run(ip, "%config DshConfig.default_timeout_ms = float('inf')")
    reloaded = run(ip, f"%reload_ext {EXT}")
    assert reloaded.error is None and reloaded.stderr == ""
    state = extension.current_state()
    assert state.config.approval_policy == "never"
    assert state.config.default_timeout_ms == 20
    run(ip, SLOW)
    cell = run(ip, 'import dsh_nb\nr = await dsh_nb.call("slow", seconds=1)')
    assert cell.error is None
    assert ip.user_ns["r"].text == "Error: tool call timed out after 20ms"


def test_a_bad_value_in_ipython_config_is_reported_at_load() -> None:
    ip = InteractiveShell.instance()
    ip.run_cell(f"%unload_ext {EXT}")
    ip.config.pop("DshConfig", None)
    ip.config.DshConfig.approval_policy = "bogus"
    ip.config.DshConfig.max_output_lines = 7
    try:
        cell = run(ip, f"%load_ext {EXT}")
        assert cell.error is None
        assert "DshConfig.approval_policy: rejected 'bogus'" in cell.stderr
        state = extension.current_state()
        assert state.config.approval_policy == "ask"
        assert state.config.max_output_lines == 7
    finally:
        ip.config.pop("DshConfig", None)
        ip.run_cell(f"%unload_ext {EXT}")


def test_config_from_ipython_config_applies_at_load() -> None:
    ip = InteractiveShell.instance()
    ip.run_cell(f"%unload_ext {EXT}")
    ip.config.pop("DshConfig", None)
    ip.config.DshConfig.approval_policy = "never"
    ip.config.DshConfig.max_output_lines = 7
    try:
        ip.run_cell(f"%load_ext {EXT}")
        state = extension.current_state()
        assert state.registry.approval is not None
        assert state.registry.approval.default_policy == "never"
        assert state.config.card_limits().max_output_lines == 7
    finally:
        ip.config.pop("DshConfig", None)
        ip.run_cell(f"%unload_ext {EXT}")


def test_approval_policy_change_is_recorded_and_applied(ip: InteractiveShell) -> None:
    run(ip, ADD.replace("%%tool", "%%tool --ask"))
    run(ip, "%config DshConfig.approval_policy = 'NEVER'")
    session = extension.current_state().agent.session
    assert session.of_type("approval/policy")[-1]["data"] == {"policy": "never"}
    cell = run(ip, '%call add {"a": 1, "b": 2}')
    final = cell.cards()[-1]
    assert final["status"] == "denied"
    assert final["approval"] == "rejected"
    assert (
        final["result"]["content"][0]["text"]
        == 'Error: approval policy "never" rejects tool "add"'
    )


def test_default_timeout_is_applied_when_changed(ip: InteractiveShell) -> None:
    run(
        ip,
        """%%tool
async def slow(seconds: float) -> str:
    import asyncio
    await asyncio.sleep(seconds)
    return "late"
""",
    )
    run(ip, "%config DshConfig.default_timeout_ms = 20")
    card = run(ip, '%call slow {"seconds": 0.5}').cards()[-1]
    assert card["status"] == "timed-out"
    assert card["result"]["content"][0]["text"] == (
        "Error: tool call timed out after 20ms"
    )
    run(ip, "%config DshConfig.default_timeout_ms = None")
    assert run(ip, '%call slow {"seconds": 0.05}').cards()[-1]["status"] == "done"


def test_trace_can_be_switched_off(ip: InteractiveShell) -> None:
    run(ip, ADD)
    cell = run(ip, '%call add {"a": 1, "b": 2}')
    assert [t["stage"] for t in cell.cards()[-1]["trace"]] == [
        "pre-execute",
        "execute",
    ]
    run(ip, "%config DshConfig.trace = False")
    assert "trace" not in run(ip, '%call add {"a": 1, "b": 2}').cards()[-1]


def test_card_limits_follow_config(ip: InteractiveShell) -> None:
    run(ip, "%config DshConfig.max_output_chars = 10")
    run(
        ip,
        """%%tool
def shout() -> str:
    return "x" * 50
""",
    )
    cell = run(ip, "%call shout")
    html = cell.outputs[-1]["data"]["text/html"]
    assert "x" * 50 not in html and "x" * 10 in html


# --- listener decorators -------------------------------------------------------


def test_rerun_listener_cell_replaces_it(ip: InteractiveShell) -> None:
    run(ip, ADD)
    listener = """
import dsh_nb.notebook.extension as ext
from dsh_nb.tools.values.execution import Deny

@ext.pre_execute
def no_big(execution, next):
    if execution.arguments["a"] > LIMIT:
        return Deny(f"a is above {LIMIT}")
    return next()
"""
    run(ip, "LIMIT = 10\n" + listener)
    run(ip, "LIMIT = 100\n" + listener)
    registry = extension.registry()
    assert len(registry._pre) == 3  # depth check, policy table, one no_big
    card = run(ip, '%call add {"a": 50, "b": 1}').cards()[-1]
    assert card["status"] == "done"  # the LIMIT=10 copy is gone
    card = run(ip, '%call add {"a": 500, "b": 1}').cards()[-1]
    assert card["status"] == "denied"
    assert card["result"]["content"][0]["text"] == "Error: a is above 100"


def test_each_decorator_registers_and_returns_the_function(
    ip: InteractiveShell,
) -> None:
    run(ip, ADD)
    cell = run(
        ip,
        """
import dsh_nb.notebook.extension as ext
from dsh_nb.tools.values.execution import Accept
seen = []

@ext.guard
def no_sevens(execution):
    return "no sevens" if execution.arguments["a"] == 7 else None

@ext.post_execute(prepend=True)
def shout(execution, result, next):
    return Accept(content=[{"type": "text", "text": result.text + "!"}])

@ext.on_result
def record(execution, result):
    seen.append(result.text)

returned = (no_sevens.__name__, shout.__name__, record.__name__)
""",
    )
    assert cell.error is None
    assert ip.user_ns["returned"] == ("no_sevens", "shout", "record")
    assert run(ip, '%call add {"a": 1, "b": 2}').cards()[-1]["result"]["content"] == [
        {"type": "text", "text": "3!"}
    ]
    denied = run(ip, '%call add {"a": 7, "b": 2}').cards()[-1]
    assert denied["status"] == "denied"
    assert ip.user_ns["seen"] == ["3!", "Error: no sevens!"]  # post runs on denials


def test_lambdas_are_never_replaced(ip: InteractiveShell) -> None:
    registry = extension.registry()
    before = len(registry._result)
    run(ip, "import dsh_nb.notebook.extension as ext")
    run(ip, "ext.on_result(lambda e, r: None)")
    run(ip, "ext.on_result(lambda e, r: None)")
    assert len(registry._result) == before + 2


def test_scoped_listener_only_fires_for_its_agent(ip: InteractiveShell) -> None:
    run(ip, ADD)
    run(
        ip,
        """
import dsh_nb.notebook.extension as ext
from dsh_nb.tools.values.execution import Deny
from dsh_nb.tools.audit.session import Agent
other = Agent("other")

@ext.pre_execute(scope=other)
def deny_other(execution, next):
    return Deny("not for other")
""",
    )
    assert run(ip, '%call add {"a": 1, "b": 2}').cards()[-1]["status"] == "done"
    messages = run(
        ip,
        "msgs = await ext.dispatch([{'id': 'c1', 'type': 'function', 'function': "
        "{'name': 'add', 'arguments': '{\"a\": 1, \"b\": 2}'}}], agent=other)",
    )
    assert messages.error is None
    assert ip.user_ns["msgs"][0]["content"] == "Error: not for other"


def test_listeners_are_disposed_on_unload(ip: InteractiveShell) -> None:
    run(ip, "import dsh_nb.notebook.extension as ext")
    run(ip, "@ext.on_result\ndef watch(execution, result):\n    pass\n")
    run(ip, "ext.on_result(lambda e, r: None)")
    registry = extension.registry()
    assert len(registry._result) == 2
    run(ip, f"%unload_ext {EXT}")
    assert len(registry._result) == 0


def test_remove_listener_undoes_a_decorated_stage(ip: InteractiveShell) -> None:
    import dsh_nb

    run(ip, "%%tool\ndef echo(text: str) -> str:\n    return text")
    defined = run(
        ip,
        "import dsh_nb\n"
        "from dsh_nb import Deny\n"
        "@dsh_nb.pre_execute\n"
        "def no_echo(execution, next):\n"
        "    return Deny('not today')\n",
    )
    assert defined.error is None
    denied = run(ip, "r1 = await dsh_nb.call('echo', text='hi')\nr1.text")
    assert denied.error is None and ip.user_ns["r1"].is_error
    assert ip.user_ns["r1"].text == "Error: not today"
    assert dsh_nb.remove_listener(ip.user_ns["no_echo"]) == 1
    assert dsh_nb.remove_listener(ip.user_ns["no_echo"]) == 0
    run(ip, "r2 = await dsh_nb.call('echo', text='hi')")
    assert ip.user_ns["r2"].text == "hi"


def test_max_result_bytes_is_the_sessions_bound_for_journal_and_card(
    ip: InteractiveShell,
) -> None:
    state = extension.current_state()
    run(ip, "%config DshConfig.max_result_bytes = 1000")
    assert state.agent.session.max_result_bytes == 1000
    run(ip, "%%tool\ndef big() -> str:\n    return 'z' * 50_000\n")
    cell = run(ip, "%call big {}")
    shown = cell.cards()[-1]["result"]["content"]
    assert "the caller received it whole" in shown[-1]["text"]
    [event] = [
        e
        for e in state.agent.session.events
        if e["type"] == "tool/result" and e["data"]["resultBytes"] > 50_000
    ]
    assert (
        sum(len(b.get("text", "")) for b in event["data"]["result"]["content"]) < 1200
    )
    bad = run(ip, "%config DshConfig.max_result_bytes = 0")
    assert "rejected 0" in bad.stderr
    assert state.agent.session.max_result_bytes == 1000
