"""The magics in a real in-process IPython shell: define, list, call, police."""

from __future__ import annotations

import json
from html import unescape
from pathlib import Path

import pytest
from ipshell import Cell, run
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from dsh_nb.cards.listing import JsonListing, Table
from dsh_nb.notebook import extension
from dsh_nb.notebook.live import LiveCall
from dsh_nb.notebook.magics.toolcell import parse_timeout
from dsh_nb.tools.definition import tool
from dsh_nb.tools.values.execution import ToolExecutionResult

ADD = '''%%tool
def add(a: int, b: int = 2) -> str:
    """Add two integers."""
    return str(a + b)
'''


def usage_error(cell: Cell) -> str:
    """The one-line message of a UsageError, checked to be exactly that."""
    assert isinstance(cell.error, UsageError), cell.error
    assert cell.stderr.strip() == f"UsageError: {cell.error}"
    assert "Traceback" not in cell.stdout + cell.stderr
    return str(cell.error)


# --- %%tool ----------------------------------------------------------------------


def test_tool_cell_registers_and_shows_what_the_model_sees(
    ip: InteractiveShell,
) -> None:
    cell = run(ip, ADD)
    assert cell.error is None
    definition = extension.registry().get("add")
    assert definition is not None and definition.description == "Add two integers."
    [out] = cell.outputs
    plain, html = out["data"]["text/plain"], out["data"]["text/html"]
    assert plain.startswith("tool 'add' registered\n  Add two integers.")
    assert "parameters: a: integer*, b: integer = 2" in plain
    assert json.loads(plain[plain.index("{") :]) == dict(definition.parameters)
    assert "<details><summary>JSON Schema" in html and "&quot;required&quot;" in html


def test_rerunning_a_tool_cell_replaces_the_tool(ip: InteractiveShell) -> None:
    run(ip, ADD)
    first = extension.registry().get("add")
    assert run(ip, ADD.replace("a + b", "a * b")).error is None
    assert extension.registry().get("add") is not first
    assert len(extension.registry()) == 1
    cell = run(ip, '%call add {"a": 3, "b": 4}')
    assert cell.cards()[-1]["result"]["content"][0]["text"] == "12"


def test_tool_cell_takes_the_named_function_or_the_last_def(
    ip: InteractiveShell,
) -> None:
    body = "def first(x: str) -> str:\n    return x\n\ndef second(y: str) -> str:\n    return y\n"
    run(ip, "%%tool\n" + body)
    assert "second" in extension.registry() and "first" not in extension.registry()
    run(ip, "%%tool first\n" + body)
    assert "first" in extension.registry()


def test_tool_cell_accepts_async_defs_and_dsh_tools(ip: InteractiveShell) -> None:
    run(ip, "%%tool\nasync def ping() -> str:\n    return 'pong'\n")
    assert run(ip, "%call ping").cards()[-1]["result"]["content"][0]["text"] == "pong"
    cell = run(
        ip,
        "%%tool --timeout 2s\nfrom dsh_nb.tools.definition import tool\n"
        "@tool\ndef made(q: str) -> str:\n    return q\n",
    )
    assert cell.error is None
    assert extension.registry().get("made").timeout_ms == 2000


def test_tool_cell_flags(ip: InteractiveShell) -> None:
    cell = run(
        ip, ADD.replace("%%tool", "%%tool --timeout 1.5s --description 'Sum <b>it</b>'")
    )
    definition = extension.registry().get("add")
    assert definition.timeout_ms == 1500 and definition.description == "Sum <b>it</b>"
    html = cell.outputs[0]["data"]["text/html"]
    assert "Sum &lt;b&gt;it&lt;/b&gt;" in html and "<b>it</b>" not in html
    assert "(timeout 1.5s)" in cell.outputs[0]["data"]["text/plain"]


@pytest.mark.parametrize(
    ("text", "ms"),
    [("500ms", 500), ("5s", 5000), ("2m", 120_000), ("3", 3000), ("0.25", 250)],
)
def test_parse_timeout(text: str, ms: float) -> None:
    assert parse_timeout(text) == ms


@pytest.mark.parametrize(
    "text", ["0", "5x", "-1s", "s", "", "9" * 400, "9" * 400 + "ms"]
)
def test_parse_timeout_rejects(text: str) -> None:
    with pytest.raises(UsageError, match="invalid --timeout"):
        parse_timeout(text)


def test_ask_and_deny_flags_attach_a_policy(ip: InteractiveShell) -> None:
    run(ip, ADD.replace("%%tool", "%%tool --deny"))
    card = run(ip, '%call add {"a": 1}').cards()[-1]
    assert card["status"] == "denied"
    assert card["result"]["content"][0]["text"] == (
        'Error: tool "add" is denied by %tool_policy'
    )
    run(ip, ADD.replace("%%tool", "%%tool --ask"))
    card = run(ip, '%call add {"a": 1}').cards()[-1]
    assert card["status"] == "denied" and card["approval"] == "unavailable"
    run(ip, ADD)  # no flag: the %%tool policy goes away
    assert run(ip, '%call add {"a": 1}').cards()[-1]["status"] == "done"


def test_rerun_keeps_a_policy_set_by_the_magic(ip: InteractiveShell) -> None:
    run(ip, ADD)
    run(ip, "%tool_policy deny add")
    run(ip, ADD)
    assert extension.current_state().policies["add"].policy == "deny"


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "%%tool\ndef f(a: type) -> str:\n    return ''\n",
            "%%tool 'f': @tool f(): parameter \"a\" has type type, which JSON Schema",
        ),
        (
            "%%tool\ndef größe(a: int) -> str:\n    return ''\n",
            "%%tool 'größe': @tool(größe): tool name 'größe' has 'ß', 'ö'; model "
            "APIs accept only 1-64 ASCII letters, digits, '_' and '-'. Try "
            "name='grosse'",
        ),
        (
            "%%tool\ndef f(a: int:\n    pass\n",
            "%%tool cell has a syntax error at line 1",
        ),
        ("%%tool\nx = 1\n", "the %%tool cell defines no function"),
        ("%%tool\n \n", "%%tool needs a cell that defines a function"),
        (
            "%%tool nothere\ndef g() -> str:\n    return ''\n",
            "no function named 'nothere'; the cell defines 'g'",
        ),
        ("%%tool --ask --deny\ndef g() -> str:\n    return ''\n", "--ask or --deny"),
        (
            "%%tool --timeout soon\ndef g() -> str:\n    return ''\n",
            "invalid --timeout",
        ),
        ("%%tool --bogus\ndef g() -> str:\n    return ''\n", "unrecognized arguments"),
    ],
)
def test_bad_tool_cells_give_one_line(
    ip: InteractiveShell, code: str, message: str
) -> None:
    assert message in usage_error(run(ip, code))
    assert len(extension.registry()) == 0


def test_user_exception_shows_its_traceback_only(ip: InteractiveShell) -> None:
    cell = run(ip, "%%tool\ndef g() -> str:\n    return ''\n1/0\n")
    assert isinstance(cell.error, UsageError)
    assert "ZeroDivisionError" in cell.stdout and "1/0" in cell.stdout
    assert "dsh_nb" not in cell.stdout  # no frame of ours
    assert "raised ZeroDivisionError; no tool was registered" in cell.stderr
    assert "g" not in extension.registry()


def test_tool_cell_will_not_replace_a_code_registration(ip: InteractiveShell) -> None:
    @tool
    def add(a: int) -> str:
        """Add."""
        return str(a)

    extension.registry().register(add)
    assert "registered by code, not by %%tool" in usage_error(run(ip, ADD))
    assert extension.registry().get("add") is add


# --- %tools ------------------------------------------------------------------------


def test_tools_table(ip: InteractiveShell) -> None:
    assert "none registered" in repr(run(ip, "%tools").result.result)
    run(ip, ADD.replace("%%tool", "%%tool --timeout 500ms --ask"))
    run(
        ip,
        "%%tool\ndef echo(text: str) -> str:\n    '''"
        + "x" * 70
        + "'''\n    return text\n",
    )
    table = run(ip, "%tools").result.result
    assert isinstance(table, Table)
    assert table.rows == [
        ("add", "Add two integers.", "a: integer*, b: integer = 2", "500ms", "ask"),
        ("echo", "x" * 59 + "…", "text: string*", "none", "-"),
    ]
    bundle = table._repr_mimebundle_()
    assert "<table" in bundle["text/html"] and "add" in bundle["text/plain"]


def test_tools_exports(ip: InteractiveShell) -> None:
    run(ip, ADD)
    schemas = extension.registry().schemas()
    assert run(ip, "%tools --json").result.result == schemas
    assert run(ip, "%tools --openai").result.result == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers.",
                "parameters": schemas[0]["parameters"],
            },
        }
    ]
    assert run(ip, "%tools --anthropic").result.result == [
        {
            "name": "add",
            "description": "Add two integers.",
            "input_schema": schemas[0]["parameters"],
        }
    ]
    run(ip, "tools = %tools --openai")
    bound = ip.user_ns["tools"]
    assert isinstance(bound, list) and isinstance(bound, JsonListing)
    bundle = bound._repr_mimebundle_()
    assert json.loads(bundle["text/plain"]) == bound
    shown, _ = ip.display_formatter.format(bound)  # what Out[] sends
    # Readable, copyable JSON text: no application/json (a collapsed tree).
    assert "application/json" not in shown
    assert json.loads(shown["text/plain"]) == bound
    assert shown["text/plain"].startswith('[\n  {\n    "type": "function"')
    html = shown["text/html"]
    assert (
        html.startswith('<pre class="dsh-JsonListing mathjax_ignore')
        and "&quot;add&quot;" in html
    )
    assert json.loads(unescape(html.split(">", 1)[1].rsplit("</pre>", 1)[0])) == bound
    assert "one format" in usage_error(run(ip, "%tools --json --openai"))


def test_tools_openai_strict(ip: InteractiveShell) -> None:
    run(ip, ADD)
    assert run(ip, "%tools --openai --strict").result.result == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer"},
                        "b": {"type": "integer", "description": "default: 2"},
                    },
                    "required": ["a", "b"],
                    "additionalProperties": False,
                },
                "strict": True,
            },
        }
    ]
    # Strict mode sends every argument; null is refused where the schema
    # refuses it, as the plain schema says.
    assert run(ip, '%call add {"a": 1, "b": 2}').cards()[-1]["result"]["content"] == [
        {"type": "text", "text": "3"}
    ]
    assert run(ip, '%call add {"a": 1, "b": null}').cards()[-1]["result"][
        "content"
    ] == [{"type": "text", "text": 'Error: invalid arguments: "b" must be an integer'}]
    assert "goes with --openai" in usage_error(run(ip, "%tools --strict"))
    run(ip, "%%tool\ndef weigh(w: dict[str, float]) -> str:\n    return ''\n")
    assert usage_error(run(ip, "%tools --openai --strict")) == (
        "tool 'weigh' cannot be exported for OpenAI strict mode: \"w\" is an "
        "object without fixed properties"
    )


def test_tool_cell_coerce_flag(ip: InteractiveShell) -> None:
    run(ip, ADD)
    strict = run(ip, '%call add {"a": "1"}').cards()[-1]["result"]["content"]
    assert strict == [
        {"type": "text", "text": 'Error: invalid arguments: "a" must be an integer'}
    ]
    run(ip, ADD.replace("%%tool", "%%tool --coerce"))
    lax = run(ip, '%call add {"a": "1"}').cards()[-1]["result"]["content"]
    assert lax == [{"type": "text", "text": "3"}]


# --- %call -----------------------------------------------------------------------


def test_call_line_runs_in_the_cell(ip: InteractiveShell) -> None:
    run(ip, ADD)
    cell = run(ip, '%call add {"a": 1, "b": 5}')
    assert cell.error is None and cell.result.result is None  # no Out value
    # A sync body runs in a worker thread: the card shows it running.
    assert cell.statuses() == ["pending", "running", "done"]
    assert cell.cards()[-1]["result"]["content"] == [{"type": "text", "text": "6"}]
    ids = {o["transient"]["display_id"] for o in cell.outputs}
    assert len(ids) == 1  # one card, updated in place
    assert [o["update"] for o in cell.outputs] == [False, True, True]


def test_call_binds_only_on_request(ip: InteractiveShell) -> None:
    run(ip, ADD)
    names = set(ip.user_ns)
    run(ip, '%call add {"a": 1}')
    assert set(ip.user_ns) - names <= {"_", "__", "___"}
    run(ip, '%call -o res add {"a": 2}')
    assert isinstance(ip.user_ns["res"], ToolExecutionResult)
    assert ip.user_ns["res"].text == "4"
    run(ip, 'out = %call add {"a": 3}')
    assert ip.user_ns["out"].text == "5"
    run(ip, '%%call -o cellres add\n{"a": 10,\n "b": 1}\n')
    assert ip.user_ns["cellres"].text == "11"


def test_call_transform(ip: InteractiveShell) -> None:
    code = ip.transform_cell('x = 1\n%call add {"a": 1}\ny = %call add {}\n')
    assert code == (
        "x = 1\nawait __dsh_nb_call_magic__('add {\"a\": 1}')\n"
        "y = await __dsh_nb_call_magic__('add {}', None, True)\n"
    )
    cell = ip.transform_cell('%%call -o r add\n{"a": 1}\n')
    assert cell == "await __dsh_nb_call_magic__('-o r add', '{\"a\": 1}\\n')\n"
    indented = ip.transform_cell("if True:\n    %call add {}\n")
    assert "run_line_magic('call', 'add {}')" in indented


@pytest.mark.parametrize(
    "code",
    [
        's = """\n%call add {}\n"""\n',
        "s = '''x\n%call add {}\ny = %call add {}\n'''\n",
        "# %call add {}\n",
        "x = 1  # %call add {}\n",
        "%%writefile out.txt\n%call add {}\nres = %call add {}\n",
        "%%capture\n%call add {}\n",
        "%call?\n",
    ],
)
def test_call_transform_leaves_strings_comments_and_cell_magics(
    ip: InteractiveShell, code: str
) -> None:
    assert "__dsh_nb_call_magic__" not in ip.transform_cell(code)


def test_call_inside_a_string_stays_text(ip: InteractiveShell) -> None:
    run(ip, ADD)
    cell = run(ip, 'doc = """\n%call add {"a": 1}\n"""\nx = 1\n%call add {"a": 2}\n')
    assert cell.error is None
    assert ip.user_ns["doc"] == '\n%call add {"a": 1}\n'
    assert [c["status"] for c in cell.final_cards().values()] == ["done"]
    assert cell.cards()[-1]["result"]["content"][0]["text"] == "4"


def test_writefile_keeps_its_call_lines(ip: InteractiveShell, tmp_path: Path) -> None:
    run(ip, ADD)
    target = tmp_path / "calls.txt"
    body = '%call add {"a": 1}\nres = %call add {}\n'
    cell = run(ip, f"%%writefile {target}\n{body}")
    assert cell.error is None and cell.cards() == []
    assert target.read_text() == body


def test_call_transform_is_removed_on_unload(ip: InteractiveShell) -> None:
    tokens = ip.input_transformer_manager.token_transformers
    assert sum(t.__name__ == "CallLine" for t in tokens) == 1
    run(ip, "%unload_ext dsh_nb.notebook.extension")
    assert not any(t.__name__ == "CallLine" for t in tokens)
    assert "__dsh_nb_call_magic__" not in ip.transform_cell("%call add {}\n")
    run(ip, "%load_ext dsh_nb.notebook.extension")
    assert sum(t.__name__ == "CallLine" for t in tokens) == 1


def test_call_survives_a_namespace_reset(ip: InteractiveShell) -> None:
    run(ip, ADD)
    run(ip, "%reset -f")
    cell = run(ip, '%call add {"a": 1}')
    assert cell.error is None and cell.statuses()[-1] == "done"


def test_call_without_autoawait_returns_the_live_call(ip: InteractiveShell) -> None:
    run(ip, ADD)
    run(ip, "%autoawait off")
    cell = run(ip, 'handle = %call add {"a": 1}')
    handle = ip.user_ns["handle"]
    assert isinstance(handle, LiveCall) and cell.statuses() == ["pending"]
    run(ip, "%autoawait on")
    later = run(ip, "result = await handle")
    assert ip.user_ns["result"].text == "3" and handle.status == "done"
    assert later.statuses() == ["running", "done"]  # updates of the same display
    assert later.outputs[0]["update"] is True
    assert (
        later.outputs[0]["transient"]["display_id"]
        == cell.outputs[0]["transient"]["display_id"]
    )
    assert handle.result is ip.user_ns["result"]


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("%call serch {}", "unknown tool 'serch'; did you mean 'search'?"),
        ("%call zzz {}", "unknown tool 'zzz'; known tools: add, search"),
        (
            '%call add {"a": 1,}',
            "invalid JSON arguments for 'add': Expecting property name",
        ),
        ('%call add {"a": 1', "at line 1, column"),
        ("%call add [1, 2]", "must be a JSON object"),
        ("%call", "%call needs a tool name"),
        ("%call --fast add", "unknown option '--fast'"),
        ("%call -o 1x add", "-o takes a variable name, not '1x'"),
        (
            '%%call add {"a": 1}\n{"a": 1}\n',
            "reads the JSON arguments from the cell body",
        ),
        ("%%call add\n{nope}\n", "invalid JSON arguments for 'add'"),
    ],
)
def test_call_mistakes_are_usage_errors(
    ip: InteractiveShell, code: str, message: str
) -> None:
    run(ip, ADD)
    run(ip, "%%tool\ndef search(q: str) -> str:\n    return q\n")
    assert message in usage_error(run(ip, code))


def test_call_with_no_tools_says_how_to_define_one(ip: InteractiveShell) -> None:
    assert "no tools yet, define one with %%tool" in usage_error(run(ip, "%call add"))


def test_failing_tool_is_an_error_card_not_an_exception(ip: InteractiveShell) -> None:
    run(ip, "%%tool\ndef boom() -> str:\n    raise ValueError('kaput')\n")
    cell = run(ip, "%call boom")
    assert cell.error is None
    card = cell.cards()[-1]
    assert card["status"] == "error" and card["isError"] is True
    assert card["result"]["content"][0]["text"] == "Error: kaput"


def test_invalid_arguments_reach_the_model_as_invalid_args(
    ip: InteractiveShell,
) -> None:
    run(ip, ADD)
    card = run(ip, '%call add {"b": "x"}').cards()[-1]
    assert card["status"] == "error"
    assert card["result"]["content"][0]["text"].startswith("Error: invalid arguments")


# --- %tool_policy -------------------------------------------------------------------


def test_tool_policy_set_list_clear(ip: InteractiveShell) -> None:
    run(ip, ADD)
    table = run(ip, "%tool_policy deny add serch").result.result
    assert table.rows == [
        ("add", "deny", "%tool_policy", ""),
        ("serch", "deny", "%tool_policy", "not registered"),
    ]
    assert run(ip, "%tool_policy").result.result.rows == table.rows
    assert run(ip, '%call add {"a": 1}').cards()[-1]["status"] == "denied"
    run(ip, "%tool_policy allow add")
    assert run(ip, '%call add {"a": 1}').cards()[-1]["status"] == "done"
    run(ip, "%tool_policy --clear serch")
    assert [r[0] for r in run(ip, "%tool_policy").result.result.rows] == ["add"]


def test_a_sample_row_names_the_tool_it_is_for(ip: InteractiveShell) -> None:
    run(ip, ADD)
    table = run(ip, "%tool_policy allow add:sample serch:sample").result.result
    assert table.rows == [
        ("add:sample", "allow", "%tool_policy", "the model requests of 'add'"),
        (
            "serch:sample",
            "allow",
            "%tool_policy",
            "the model requests of 'serch' (not registered)",
        ),
    ]
    run(ip, "%tool_policy --clear")
    assert run(ip, "%tool_policy").result.result.rows == []


def test_allow_policy_overrides_other_pre_execute_listeners(
    ip: InteractiveShell,
) -> None:
    run(ip, ADD)
    run(
        ip,
        "import dsh_nb.notebook.extension as ext\nfrom dsh_nb.tools.values.execution import Deny\n"
        "@ext.pre_execute\ndef nope(execution, next):\n    return Deny('nope')\n",
    )
    assert run(ip, '%call add {"a": 1}').cards()[-1]["status"] == "denied"
    run(ip, "%tool_policy allow add")
    assert run(ip, '%call add {"a": 1}').cards()[-1]["status"] == "done"


def test_tool_policy_mistakes(ip: InteractiveShell) -> None:
    assert "did you mean 'deny'?" in usage_error(run(ip, "%tool_policy dney add"))
    assert "needs tool names" in usage_error(run(ip, "%tool_policy ask"))
    assert "unknown policy 'maybe'" in usage_error(run(ip, "%tool_policy maybe x"))


@pytest.mark.parametrize(
    "code",
    [
        "%tool_policy deny 'unterminated",
        '%tool_policy ask "a b',
        "%tools --json 'x",
        "%tool_log --save 'out.jsonl",
        "%%tool 'add\ndef add(a: int) -> str:\n    return str(a)\n",
    ],
)
def test_an_unclosed_quote_is_a_usage_error(ip: InteractiveShell, code: str) -> None:
    message = usage_error(run(ip, code))
    assert "no closing quotation; close the quote or escape it" in message
    assert message.startswith(code.split()[0])
    assert run(ip, "%tool_policy").result.result.rows == []


# --- %tool_log -----------------------------------------------------------------------


def test_tool_log_shows_and_saves_the_session(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    assert "no events yet" in repr(run(ip, "%tool_log").result.result)
    run(ip, ADD)
    run(ip, '%call add {"a": 1}')
    table = run(ip, "%tool_log").result.result
    assert [row[1] for row in table.rows] == [
        "turn/start",
        "tool/call",
        "tool/result",
        "turn/end",
    ]
    path = tmp_path / "log.jsonl"
    cell = run(ip, f"%tool_log --save '{path}'")
    assert cell.stdout.strip() == f"wrote 4 events to {str(path)!r}"
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[1] == {
        "type": "tool/call",
        "data": {"callId": "call-1", "name": "add", "arguments": {"a": 1}},
    }
    assert lines[2]["data"]["result"]["content"] == [{"type": "text", "text": "3"}]
    message = usage_error(run(ip, f"%tool_log --save {tmp_path}/no/such/dir.jsonl"))
    assert message.startswith("cannot write") and "No such file" in message


def test_magic_docstrings_are_manuals(ip: InteractiveShell) -> None:
    for kind, name in [
        ("cell", "tool"),
        ("line", "tools"),
        ("line", "call"),
        ("line", "tool_policy"),
        ("line", "tool_log"),
    ]:
        doc = ip.magics_manager.magics[kind][name].__doc__
        assert "Examples" in doc and "::" in doc, name
