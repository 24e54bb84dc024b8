"""Contract §7.2: the tool presenter's defaults and fallbacks."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import ToolResult, define_tool, text_block
from dsh_nb.tools.jsonvalue import ABSENT, FrozenDict
from dsh_nb.tools.presentation import (
    DiffCallView,
    DiffResultView,
    FileDiff,
    FileLocation,
    GenericCallView,
    GenericResultView,
    TerminalCallView,
    TerminalResultView,
    ToolCallKind,
)
from dsh_nb.tools.presenter import (
    ToolPresenter,
    console_fence,
    parse_presented_args,
    relativize_title,
)
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import ToolExecutionResult

RAW = [{"type": "text", "text": "raw output"}]


@dataclass
class FakeTool:
    name: str
    present_call: Callable[[Any], Any] | None = None
    present_result: Callable[[Any, ToolResult], Any] | None = None


@dataclass
class FakeRegistry:
    tools: dict[str, FakeTool] = field(default_factory=dict)
    lookups: list[tuple[str, Any]] = field(default_factory=list)

    def get(self, name: str, scope: Any = None) -> FakeTool | None:
        self.lookups.append((name, scope))
        return self.tools.get(name)


@dataclass
class Recorder:
    """Stands in for a tool's presenters and remembers what they received."""

    call_return: Any = None
    result_return: Any = None
    calls: list[Any] = field(default_factory=list)
    results: list[tuple[Any, ToolResult]] = field(default_factory=list)

    def present_call(self, args: Any) -> Any:
        self.calls.append(args)
        if isinstance(self.call_return, BaseException):
            raise self.call_return
        return self.call_return

    def present_result(self, args: Any, result: ToolResult) -> Any:
        self.results.append((args, result))
        if isinstance(self.result_return, BaseException):
            raise self.result_return
        return self.result_return


@dataclass
class Result:
    content: list[dict[str, Any]]
    is_error: bool = False


def setup(
    call_return: Any = None, result_return: Any = None, name: str = "t"
) -> tuple[ToolPresenter, Recorder, FakeRegistry, list[str]]:
    rec = Recorder(call_return=call_return, result_return=result_return)
    registry = FakeRegistry(
        {name: FakeTool(name, rec.present_call, rec.present_result)}
    )
    errors: list[str] = []
    return ToolPresenter(registry, on_error=errors.append), rec, registry, errors


def generic_call(name: str, args: Any) -> GenericCallView:
    return GenericCallView(title=name, kind=ToolCallKind.OTHER, raw_input=args)


# --- parse_presented_args ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("", {}),
        ('{"a":1}', {"a": 1}),
        ("[1, 2]", [1, 2]),
        ('"s"', "s"),
        ("1.5", 1.5),
        ("null", None),
        ("true", True),
    ],
)
def test_parse_json_text(text: str, parsed: Any) -> None:
    assert parse_presented_args(text) == parsed


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"a":',
        " ",
        "NaN",
        '{"a": Infinity}',
        "-Infinity",
        "{'a': 1}",
        "[" * 100_000,
    ],
)
def test_unparseable_text_is_returned_raw(text: str) -> None:
    assert parse_presented_args(text) is text


@pytest.mark.parametrize("value", [{"a": 1}, None, 3, b"{}", ["x"], FrozenDict(a=1)])
def test_non_str_passes_through(value: object) -> None:
    assert parse_presented_args(value) is value


# --- present_call --------------------------------------------------------------


def test_unknown_tool_gets_the_generic_card() -> None:
    errors: list[str] = []
    presenter = ToolPresenter(FakeRegistry(), on_error=errors.append)
    view = presenter.present_call("c1", "nope", '{"q":"x"}')
    assert view == generic_call("nope", {"q": "x"})
    assert view.to_json() == {
        "card": "generic",
        "title": "nope",
        "kind": "other",
        "rawInput": {"q": "x"},
    }
    assert errors == []


def test_tool_without_present_call_gets_the_generic_card() -> None:
    registry = FakeRegistry({"t": FakeTool("t")})
    presenter = ToolPresenter(registry)
    assert presenter.present_call("c1", "t", "") == generic_call("t", {})


def test_present_call_returning_none_gets_the_generic_card() -> None:
    presenter, rec, _, errors = setup(call_return=None)
    assert presenter.present_call("c1", "t", '{"a":[1]}') == generic_call(
        "t", {"a": [1]}
    )
    assert rec.calls == [{"a": [1]}]
    assert errors == []


def test_present_call_raising_is_reported_and_falls_back() -> None:
    presenter, _, _, errors = setup(call_return=RuntimeError("boom"))
    assert presenter.present_call("c1", "t", "{}") == generic_call("t", {})
    assert errors == [
        'dsh_nb: tool "t" presentCall threw, using generic presentation: boom'
    ]


def test_registry_lookup_raising_is_reported_and_falls_back() -> None:
    class Broken:
        def get(self, name: str, scope: Any = None) -> None:
            raise LookupError("registry down")

    errors: list[str] = []
    presenter = ToolPresenter(Broken(), on_error=errors.append)
    assert presenter.present_call("c1", "t", "{}") == generic_call("t", {})
    assert errors == [
        'dsh_nb: tool "t" presentCall threw, using generic presentation: registry down'
    ]


def test_present_call_view_is_returned_as_is() -> None:
    view = TerminalCallView(title="ls -la", description="list", cwd="sub")
    presenter, _, _, errors = setup(call_return=view)
    assert presenter.present_call("c1", "t", "{}") is view
    assert errors == []


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (
            {"card": "terminal", "title": "ls", "cwd": "/x"},
            TerminalCallView(title="ls", cwd="/x"),
        ),
        (
            {
                "card": "diff",
                "title": "Edit /a.py",
                "diffs": [{"path": "/a.py", "oldText": None, "newText": "x"}],
                "locations": [{"path": "/a.py", "line": 3}],
            },
            DiffCallView(
                title="Edit /a.py",
                diffs=(FileDiff(path="/a.py", old_text=None, new_text="x"),),
                locations=(FileLocation(path="/a.py", line=3),),
            ),
        ),
        (
            {"card": "generic", "title": "Read", "kind": "read", "rawInput": "a.py"},
            GenericCallView(title="Read", kind=ToolCallKind.READ, raw_input="a.py"),
        ),
    ],
)
def test_present_call_dict_form_is_converted(
    wire: dict[str, Any], expected: Any
) -> None:
    presenter, _, _, errors = setup(call_return=wire)
    assert presenter.present_call("c1", "t", "{}") == expected
    assert errors == []


@pytest.mark.parametrize(
    ("returned", "fragment"),
    [
        ({"card": "bogus", "title": "x"}, "unknown card 'bogus'"),
        ({"title": "x"}, "unknown card None"),
        ({"card": "generic", "title": "x", "kind": "weird"}, "kind must be one of"),
        ({"card": "generic"}, "returned an invalid view"),
        ({"card": "diff", "title": "x", "diffs": [{"path": "p"}]}, "missing 'newText'"),
        ({"card": "terminal", "title": "x", "output": "y"}, "returned an invalid view"),
        ("a title", "returned str, expected a call view"),
        (
            GenericResultView(title="x"),
            "returned GenericResultView, expected a call view",
        ),
        ([{"card": "generic", "title": "x"}], "returned list"),
    ],
)
def test_invalid_present_call_return_is_treated_like_a_raise(
    returned: object, fragment: str
) -> None:
    presenter, _, _, errors = setup(call_return=returned)
    assert presenter.present_call("c1", "t", '{"k":1}') == generic_call("t", {"k": 1})
    assert len(errors) == 1
    prefix = 'dsh_nb: tool "t" presentCall threw, using generic presentation: '
    assert errors[0].startswith(prefix)
    assert fragment in errors[0]


def test_async_presenter_is_rejected_and_its_coroutine_closed() -> None:
    made: list[Any] = []

    async def present(args: Any) -> None:
        return None

    def call(args: Any) -> Any:
        made.append(present(args))
        return made[-1]

    errors: list[str] = []
    presenter = ToolPresenter(
        FakeRegistry({"t": FakeTool("t", call)}), on_error=errors.append
    )
    assert presenter.present_call("c1", "t", "{}") == generic_call("t", {})
    assert inspect.getcoroutinestate(made[0]) == inspect.CORO_CLOSED
    assert errors == [
        'dsh_nb: tool "t" presentCall threw, using generic presentation: '
        "returned an awaitable; presenters must be synchronous"
    ]


@pytest.mark.parametrize(
    "exc", [KeyboardInterrupt(), SystemExit(3), GeneratorExit(), BaseException("x")]
)
def test_base_exceptions_fall_back_too(exc: BaseException) -> None:
    # Issue 15 item 2: nothing a presenter raises may end the kernel.
    presenter, _, _, errors = setup(call_return=exc)
    assert presenter.present_call("c1", "t", "{}") == generic_call("t", {})
    assert len(errors) == 1 and "presentCall threw" in errors[0]


def test_cancellation_is_not_swallowed() -> None:
    # An interrupt reaches a stuck presenter as CancelledError: it must end it.
    presenter, _, _, _ = setup(call_return=asyncio.CancelledError())
    with pytest.raises(asyncio.CancelledError):
        presenter.present_call("c1", "t", "{}")


def test_default_error_sink_logs_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    rec = Recorder(call_return=ValueError("bad args"))
    presenter = ToolPresenter(FakeRegistry({"t": FakeTool("t", rec.present_call)}))
    with caplog.at_level(logging.WARNING, logger="dsh_nb.tools.presenter"):
        presenter.present_call("c1", "t", "{}")
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            "dsh_nb.tools.presenter",
            logging.WARNING,
            'dsh_nb: tool "t" presentCall threw, using generic presentation: bad args',
        )
    ]


def test_raising_error_sink_does_not_propagate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def sink(message: str) -> None:
        raise RuntimeError("sink down")

    rec = Recorder(call_return=ValueError("x"), result_return=ValueError("y"))
    tool = FakeTool("t", rec.present_call, rec.present_result)
    presenter = ToolPresenter(FakeRegistry({"t": tool}), on_error=sink)
    with caplog.at_level(logging.ERROR, logger="dsh_nb.tools.presenter"):
        assert presenter.present_call("c1", "t", "{}") == generic_call("t", {})
        assert presenter.present_result("c1", Result(RAW)) == GenericResultView(
            content=RAW
        )
    assert len(caplog.records) == 2
    assert all(r.exc_info is not None for r in caplog.records)


def test_definition_is_resolved_through_the_agent() -> None:
    presenter, _, registry, _ = setup(call_return=None, result_return=None)
    agent = object()
    presenter.present_call("c1", "t", "{}", agent)
    presenter.present_result("c1", Result(RAW))
    assert registry.lookups == [("t", agent), ("t", agent)]


def test_generic_fallback_for_unparseable_args_shows_the_raw_text() -> None:
    presenter, rec, _, _ = setup()
    view = presenter.present_call("c1", "t", "{oops")
    assert view == generic_call("t", "{oops")
    assert rec.calls == ["{oops"]


# --- present_result ------------------------------------------------------------


def test_unknown_call_id_shows_raw_content() -> None:
    presenter, rec, _, errors = setup(result_return=GenericResultView(title="x"))
    view = presenter.present_result("never-seen", Result(RAW))
    assert view == GenericResultView(content=RAW)
    assert view.to_json() == {"card": "generic", "content": RAW}
    assert rec.results == [] and errors == []


def test_result_consumes_the_remembered_call() -> None:
    card = TerminalResultView(output="ok", exit_code=0)
    presenter, rec, _, _ = setup(
        call_return=TerminalCallView(title="ls"), result_return=card
    )
    presenter.present_call("c1", "t", "{}")
    assert presenter.present_result("c1", Result(RAW)) is card
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)
    assert len(rec.results) == 1


def test_forget_drops_the_remembered_call() -> None:
    presenter, rec, _, _ = setup(result_return=GenericResultView(title="x"))
    presenter.present_call("c1", "t", "{}")
    presenter.forget("c1")
    presenter.forget("c1")
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)
    assert rec.results == []


def test_tool_without_present_result_shows_raw_content() -> None:
    presenter = ToolPresenter(FakeRegistry({"t": FakeTool("t")}))
    presenter.present_call("c1", "t", "{}")
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)


def test_tool_gone_at_result_time_shows_raw_content() -> None:
    presenter, _, registry, errors = setup(result_return=GenericResultView(title="x"))
    presenter.present_call("c1", "t", "{}")
    registry.tools.clear()
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)
    assert errors == []


def test_present_result_returning_none_shows_raw_content() -> None:
    presenter, rec, _, errors = setup(result_return=None)
    presenter.present_call("c1", "t", '{"a":1}')
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)
    assert rec.results[0][0] == {"a": 1}
    assert errors == []


def test_present_result_raising_is_reported_and_shows_raw_content() -> None:
    presenter, _, _, errors = setup(result_return=RuntimeError("kaput"))
    presenter.present_call("c1", "t", "{}")
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)
    assert errors == ['dsh_nb: tool "t" presentResult threw, using raw result: kaput']


@pytest.mark.parametrize(
    ("returned", "fragment"),
    [
        ({"card": "nope"}, "unknown card 'nope'"),
        ({"card": "generic", "kind": "read"}, "returned an invalid view"),
        (
            GenericCallView(title="x"),
            "returned GenericCallView, expected a result view",
        ),
        (42, "returned int"),
    ],
)
def test_invalid_present_result_return_is_treated_like_a_raise(
    returned: object, fragment: str
) -> None:
    presenter, _, _, errors = setup(result_return=returned)
    presenter.present_call("c1", "t", "{}")
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)
    assert len(errors) == 1
    assert errors[0].startswith(
        'dsh_nb: tool "t" presentResult threw, using raw result: '
    )
    assert fragment in errors[0]


@pytest.mark.parametrize(
    "call_view",
    [
        None,
        GenericCallView(title="x"),
        DiffCallView(title="x"),
        RuntimeError("no call card"),
    ],
)
def test_terminal_result_without_terminal_call_shows_raw_content(
    call_view: Any,
) -> None:
    presenter, _, _, _ = setup(
        call_return=call_view,
        result_return=TerminalResultView(output="hi", exit_code=0),
    )
    presenter.present_call("c1", "t", "{}")
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)


def test_terminal_result_after_terminal_call_is_kept() -> None:
    presenter, _, _, _ = setup(
        call_return={"card": "terminal", "title": "ls"},
        result_return={"card": "terminal", "output": "hi\n", "exitCode": 0},
    )
    presenter.present_call("c1", "t", "{}")
    view = presenter.present_result("c1", Result(RAW))
    assert view == TerminalResultView(output="hi\n", exit_code=0)


def test_generic_result_without_content_is_filled_with_raw_content() -> None:
    presenter, _, _, _ = setup(result_return=GenericResultView(title="Done"))
    presenter.present_call("c1", "t", "{}")
    view = presenter.present_result("c1", Result(RAW))
    assert view == GenericResultView(title="Done", content=RAW)


def test_generic_result_dict_without_content_is_filled() -> None:
    presenter, _, _, _ = setup(result_return={"card": "generic"})
    presenter.present_call("c1", "t", "{}")
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)


def test_generic_result_with_content_is_kept() -> None:
    shown = [{"type": "text", "text": "pretty"}]
    presenter, _, _, _ = setup(result_return=GenericResultView(content=shown))
    presenter.present_call("c1", "t", "{}")
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(
        content=shown
    )
    empty, _, _, _ = setup(result_return=GenericResultView(content=()))
    empty.present_call("c1", "t", "{}")
    assert empty.present_result("c1", Result(RAW)) == GenericResultView(content=())


def test_diff_result_is_kept() -> None:
    diff = DiffResultView(
        title="Wrote /a", diffs=[FileDiff(path="/a", old_text="x", new_text="y")]
    )
    presenter, _, _, _ = setup(
        call_return=DiffCallView(title="Write /a"), result_return=diff
    )
    presenter.present_call("c1", "t", "{}")
    assert presenter.present_result("c1", Result(RAW)) is diff


def test_present_result_receives_args_and_a_tool_result() -> None:
    presenter, rec, _, _ = setup()
    presenter.present_call("c1", "t", '{"path":"/a"}')
    presenter.present_result("c1", Result(RAW, is_error=True))
    args, result = rec.results[0]
    assert args == {"path": "/a"}
    assert result == ToolResult(content=RAW, is_error=True, meta=ABSENT)


def test_execution_result_meta_is_forwarded() -> None:
    presenter, rec, _, _ = setup()
    for call_id, meta in (("a", {"exit": 1}), ("b", None), ("c", ABSENT)):
        presenter.present_call(call_id, "t", "{}")
        presenter.present_result(
            call_id,
            ToolExecutionResult(
                call_id=call_id, content=RAW, is_error=False, meta=meta
            ),
        )
    assert [r.meta for _, r in rec.results] == [{"exit": 1}, None, ABSENT]
    assert all(isinstance(r, ToolResult) for _, r in rec.results)


def test_tool_result_is_passed_through_unchanged() -> None:
    presenter, rec, _, _ = setup()
    presenter.present_call("c1", "t", "{}")
    result = ToolResult(content=RAW, is_error=False, meta={"k": 1})
    presenter.present_result("c1", result)
    assert rec.results[0][1] is result


def test_error_results_consult_present_result() -> None:
    failed = GenericResultView(
        title="Failed", content=[{"type": "text", "text": "nope"}]
    )
    presenter, rec, _, _ = setup(result_return=failed)
    presenter.present_call("c1", "t", "{}")
    error = Result([{"type": "text", "text": "Error: x"}], is_error=True)
    assert presenter.present_result("c1", error) is failed
    assert rec.results[0][1].is_error is True


def test_calls_are_remembered_independently() -> None:
    presenter, rec, _, _ = setup(call_return=TerminalCallView(title="ls"))
    presenter.present_call("a", "t", '{"n":1}')
    presenter.present_call("b", "t", '{"n":2}')
    presenter.present_result("b", Result(RAW))
    presenter.present_result("a", Result(RAW))
    assert [args for args, _ in rec.results] == [{"n": 2}, {"n": 1}]


# --- with the real registry and define_tool ------------------------------------


def bash_tool() -> Any:
    return define_tool(
        name="bash",
        description="Run a command.",
        parameters={"command": {"type": "string", "required": True}},
        execute=lambda args: "ok",
        present_call=lambda args: TerminalCallView(title=args["command"]),
        present_result=lambda args, result: TerminalResultView(
            output="".join(b["text"] for b in result.content),
            exit_code=1 if result.is_error else 0,
        ),
    )


def test_replay_on_a_fresh_presenter_with_logged_json_args() -> None:
    registry = ToolRegistry()
    agent = Agent("a")
    registry.register(bash_tool(), agent)
    errors: list[str] = []
    presenter = ToolPresenter(registry, on_error=errors.append)
    call = presenter.present_call("c9", "bash", '{"command":"ls"}', agent)
    assert call == TerminalCallView(title="ls")
    logged = ToolExecutionResult(
        call_id="c9", content=[text_block("a\nb\n")], is_error=False
    )
    assert presenter.present_result("c9", logged) == TerminalResultView(
        output="a\nb\n", exit_code=0
    )
    assert errors == []


def test_scoped_tool_is_invisible_without_its_agent() -> None:
    registry = ToolRegistry()
    registry.register(bash_tool(), Agent("a"))
    presenter = ToolPresenter(registry)
    view = presenter.present_call("c1", "bash", '{"command":"ls"}')
    assert view == generic_call("bash", {"command": "ls"})


def test_schema_invalid_args_land_on_the_fallbacks() -> None:
    registry = ToolRegistry()
    registry.register(bash_tool())
    errors: list[str] = []
    presenter = ToolPresenter(registry, on_error=errors.append)
    assert presenter.present_call("c1", "bash", '{"command": 5}') == generic_call(
        "bash", {"command": 5}
    )
    assert presenter.present_call("c2", "bash", "not json") == generic_call(
        "bash", "not json"
    )
    assert presenter.present_result("c1", Result(RAW)) == GenericResultView(content=RAW)
    assert errors == []


# --- relativize_title ----------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "path", "cwd", "expected"),
    [
        ("Read /srv/proj/src/a.ts", "/srv/proj/src/a.ts", "/srv/proj", "Read src/a.ts"),
        (
            "Read /srv/proj/src/a.ts",
            "/srv/proj/src/a.ts",
            "/srv/proj/",
            "Read src/a.ts",
        ),
        (
            "Copy /srv/proj/a to /srv/proj/a.bak",
            "/srv/proj/a",
            "/srv/proj",
            "Copy a to a.bak",
        ),
        (
            "Read /srv/proj/..cache/x.ts",
            "/srv/proj/..cache/x.ts",
            "/srv/proj",
            "Read ..cache/x.ts",
        ),
        ("Read /srv/proj/...", "/srv/proj/...", "/srv/proj", "Read ..."),
        ("Read /srv/proj/x../y", "/srv/proj/x../y", "/srv/proj", "Read x../y"),
        ("Read /srv/proj/a/./b.ts", "/srv/proj/a/./b.ts", "/srv/proj", "Read a/b.ts"),
        ("Read a.ts", "/srv/proj/a.ts", "/srv/proj", "Read a.ts"),
    ],
)
def test_relativize_inside_the_cwd(
    title: str, path: str, cwd: str, expected: str
) -> None:
    assert relativize_title(title, path, cwd) == expected


@pytest.mark.parametrize(
    ("path", "cwd"),
    [
        (None, "/srv/proj"),
        ("/srv/proj/a.ts", None),
        ("", "/srv/proj"),
        ("/srv/proj/a.ts", ""),
        ("src/a.ts", "/srv/proj"),
        ("/srv/proj/a.ts", "srv/proj"),
        ("/srv/proj", "/srv/proj"),
        ("/srv/proj/", "/srv/proj"),
        ("/srv", "/srv/proj"),
        ("/srv/other/a.ts", "/srv/proj"),
        ("/srv/..cache/x.ts", "/srv/proj"),
        ("/elsewhere/a.ts", "/srv/proj"),
    ],
)
def test_relativize_leaves_the_title_unchanged(
    path: str | None, cwd: str | None
) -> None:
    title = f"Read {path}"
    assert relativize_title(title, path, cwd) == title


# --- console_fence -------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "fenced"),
    [
        ("hi\n", "```console\nhi\n```"),
        ("hi", "```console\nhi\n```"),
        ("a\n\nb\n\n\n", "```console\na\n\nb\n```"),
        ("a\r\n", "```console\na\r\n```"),
        ("", "```console\n\n```"),
        (None, "```console\n\n```"),
    ],
)
def test_console_fence(output: str | None, fenced: str) -> None:
    assert console_fence(output) == fenced
