# mypy: disable-error-code="func-returns-value"
"""Contract tests for ``define_tool`` (contract §2, design.md "Tools").

Validation before the body, the INVALID_ARGS result, return forms, the
``timeout_ms`` check, presenter wrappers and raw JSON Schema parameters.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
from typing import Any

import pytest

from dsh_nb.tools.definition import (
    ToolDefinition,
    ToolResult,
    define_tool,
    text_block,
    tool,
)
from dsh_nb.tools.errors import ToolArgsError, ToolDefinitionError
from dsh_nb.tools.jsonvalue import ABSENT
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import ToolExecutionInput, ToolExecutionResult

INVALID_ARGS = {"name": "ToolArgsError", "code": "INVALID_ARGS"}

SPEC: dict[str, Any] = {
    "path": {"type": "string", "required": True, "description": "file path"},
    "limit": {"type": "number"},
    "mode": {"type": "string", "enum": ["r", "w"]},
}

SPEC_JSON = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "file path"},
        "limit": {"type": "number"},
        "mode": {"type": "string", "enum": ["r", "w"]},
    },
    "required": ["path"],
}


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


async def settle(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def build(
    body: Any = None,
    *,
    name: str = "read",
    parameters: Any = None,
    **kw: Any,
) -> ToolDefinition:
    async def default(args: Any, execution: Any) -> Any:
        return [text("ran")]

    return define_tool(
        name=name,
        description=f"the {name} tool",
        parameters=copy.deepcopy(SPEC) if parameters is None else parameters,
        execute=default if body is None else body,
        **kw,
    )


async def run(
    defn: ToolDefinition, arguments: Any, *, call_id: str = "c1"
) -> ToolExecutionResult:
    registry = ToolRegistry()
    registry.register(defn)
    return await registry.execute(
        ToolExecutionInput(call_id=call_id, name=defn.name, arguments=arguments)
    )


# -- §2.1 what define_tool produces ---------------------------------------------


def test_produces_a_definition_with_converted_schema() -> None:
    defn = build()
    assert isinstance(defn, ToolDefinition)
    assert defn.name == "read"
    assert defn.description == "the read tool"
    assert defn.parameters == SPEC_JSON
    assert defn.timeout_ms is None
    assert defn.present_call is None
    assert defn.present_result is None


def test_schema_is_computed_once_at_definition_time() -> None:
    spec = copy.deepcopy(SPEC)
    defn = build(parameters=spec)
    spec["extra"] = {"type": "boolean", "required": True}
    spec["path"]["description"] = "changed"
    assert defn.parameters == SPEC_JSON


def test_empty_spec_converts_to_bare_object() -> None:
    assert build(parameters={}).parameters == {"type": "object", "properties": {}}


def test_spec_property_named_type_is_still_a_spec() -> None:
    defn = build(parameters={"type": {"type": "string", "required": True}})
    assert defn.parameters == {
        "type": "object",
        "properties": {"type": {"type": "string"}},
        "required": ["type"],
    }


def test_schema_prop_objects_are_accepted() -> None:
    schema = pytest.importorskip("dsh_nb.tools.schema.spec")
    spec = {
        "path": schema.SchemaProp(type="string", required=True),
        "tags": schema.SchemaProp(type="array", items=schema.SchemaProp(type="string")),
    }
    defn = build(parameters=spec)
    assert defn.parameters == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["path"],
    }


def test_name_model_apis_refuse_fails_with_a_suggestion() -> None:
    # Issue 11: OpenAI rejects a whole request over one bad name, so
    # define_tool refuses it at once (the contract's define_tool did not).
    with pytest.raises(ToolDefinitionError) as info:
        build(name="weird name!")
    assert str(info.value) == (
        "defineTool(weird name!): tool name 'weird name!' has ' ', '!'; model APIs "
        "accept only 1-64 ASCII letters, digits, '_' and '-'. Try name='weird_name'"
    )


def test_check_name_false_keeps_any_name() -> None:
    definition = define_tool(
        name="weird name!",
        description="d",
        parameters={},
        execute=lambda a: [],
        check_name=False,
    )
    assert definition.name == "weird name!"


def test_define_tool_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        define_tool("read", "d", {}, lambda a, e: [])  # type: ignore[call-arg]


def test_text_block() -> None:
    assert text_block("hi") == {"type": "text", "text": "hi"}


# -- timeout_ms ----------------------------------------------------------------


@pytest.mark.parametrize("good", [1, 0.5, 100, 30_000.0, 1e12])
def test_valid_timeout_is_copied(good: float) -> None:
    defn = build(timeout_ms=good)
    assert defn.timeout_ms == good


@pytest.mark.parametrize(
    "bad",
    [0, 0.0, -1, -0.5, math.inf, -math.inf, math.nan, True, False, "100", [100]],
    ids=repr,
)
def test_invalid_timeout_raises_immediately(bad: Any) -> None:
    ran: list[int] = []

    def body(args: Any, execution: Any) -> Any:
        ran.append(1)
        return []

    with pytest.raises((ValueError, TypeError)) as info:
        build(body, name="slow", timeout_ms=bad)
    assert "defineTool(slow): timeoutMs must be a positive finite number" in str(
        info.value
    )
    assert ran == []


def test_timeout_never_reaches_the_model() -> None:
    registry = ToolRegistry()
    registry.register(build(timeout_ms=250))
    (schema,) = registry.schemas()
    assert set(schema) == {"name", "description", "parameters"}
    assert registry.get("read").timeout_ms == 250  # type: ignore[union-attr]


# -- execute: validation before the body ---------------------------------------


async def test_direct_call_passes_same_args_and_execution_and_return() -> None:
    seen: list[Any] = []
    returned = [text("direct")]

    async def body(args: Any, execution: Any) -> Any:
        seen.append((args, execution))
        return returned

    defn = build(body)
    args = {"path": "/tmp/x"}
    execution = object()
    out = await settle(defn.execute(args, execution))  # type: ignore[arg-type]
    assert out is returned
    assert seen[0][0] is args
    assert seen[0][1] is execution
    assert args == {"path": "/tmp/x"}


async def test_direct_call_with_bad_args_raises_without_running_body() -> None:
    ran: list[int] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append(1)
        return []

    defn = build(body)
    with pytest.raises(ToolArgsError) as info:
        await settle(defn.execute({"limit": "5", "mode": "x"}, None))  # type: ignore[arg-type]
    assert info.value.code == "INVALID_ARGS"
    assert list(info.value.violations) == [
        'missing required property "path"',
        '"limit" must be a number',
        '"mode" must be one of ["r","w"]',
    ]
    assert str(info.value) == (
        'invalid arguments: missing required property "path"; '
        '"limit" must be a number; "mode" must be one of ["r","w"]'
    )
    assert ran == []


async def test_defaults_are_never_applied() -> None:
    seen: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        seen.append(args)
        return []

    defn = build(
        body,
        parameters={
            "path": {"type": "string", "required": True},
            "limit": {"type": "number", "default": 10},
        },
    )
    assert defn.parameters["properties"]["limit"] == {"type": "number", "default": 10}
    args = {"path": "a"}
    await settle(defn.execute(args, None))  # type: ignore[arg-type]
    assert seen == [{"path": "a"}]
    assert seen[0] is args


async def test_single_parameter_body_gets_args_only() -> None:
    seen: list[Any] = []

    def body(args: Any) -> Any:
        seen.append(args)
        return [text(args["path"])]

    defn = build(body)
    result = await run(defn, {"path": "/etc"})
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("/etc")],
        "isError": False,
    }
    assert seen == [{"path": "/etc"}]


async def test_sync_and_async_bodies() -> None:
    def sync_body(args: Any, execution: Any) -> Any:
        return [text("sync")]

    async def async_body(args: Any, execution: Any) -> Any:
        return [text("async")]

    assert (await run(build(sync_body), {"path": "p"})).content == [text("sync")]
    assert (await run(build(async_body), {"path": "p"})).content == [text("async")]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, 'invalid arguments: missing required property "path"'),
        (
            {"limit": None},
            'invalid arguments: missing required property "path"; '
            '"limit" must be a number',
        ),
        ({"path": 5}, 'invalid arguments: "path" must be a string'),
        ({"path": "p", "limit": True}, 'invalid arguments: "limit" must be a number'),
        ({"path": "p", "limit": "5"}, 'invalid arguments: "limit" must be a number'),
        (
            {"path": "p", "mode": "x"},
            'invalid arguments: "mode" must be one of ["r","w"]',
        ),
        (None, 'invalid arguments: "arguments" must be an object'),
        ("nope", 'invalid arguments: "arguments" must be an object'),
        ([], 'invalid arguments: "arguments" must be an object'),
        (5, 'invalid arguments: "arguments" must be an object'),
    ],
    ids=[
        "missing",
        "null-optional",
        "wrong-type",
        "bool-not-number",
        "no-coercion",
        "enum",
        "null",
        "string",
        "list",
        "number",
    ],
)
async def test_invalid_args_become_error_result(arguments: Any, message: str) -> None:
    ran: list[int] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append(1)
        return [text("ran")]

    result = await run(build(body), arguments)
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": f"Error: {message}"}],
        "isError": True,
        "error": INVALID_ARGS,
    }
    assert ran == []


async def test_nested_violations() -> None:
    defn = build(
        parameters={
            "config": {
                "type": "object",
                "required": True,
                "properties": {
                    "host": {"type": "string", "required": True},
                    "port": {"type": "number"},
                },
            },
            "bag": {"type": "object"},
            "servers": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"host": {"type": "string", "required": True}},
                },
            },
        }
    )
    result = await run(
        defn, {"config": {"port": 9}, "bag": 5, "servers": [{"host": "a"}, {}]}
    )
    assert result.content == [
        text(
            'Error: invalid arguments: missing required property "config.host"; '
            '"bag" must be an object; missing required property "servers[1].host"'
        )
    ]
    assert result.to_json()["error"] == INVALID_ARGS


async def test_valid_args_with_extras_reach_body_frozen() -> None:
    seen: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        seen.append((args, execution.arguments))
        return [text("ok")]

    result = await run(build(body), {"path": "p", "extra": {"deep": [1]}})
    assert result.is_error is False
    args, exec_args = seen[0]
    assert args == {"path": "p", "extra": {"deep": [1]}}
    assert args is exec_args
    with pytest.raises(TypeError):
        args["extra"]["deep"].append(2)


# -- §2.3 return forms -----------------------------------------------------------


async def _result_of(returned: Any) -> ToolExecutionResult:
    async def body(args: Any, execution: Any) -> Any:
        return returned

    return await run(build(body), {"path": "p"})


async def test_return_list() -> None:
    result = await _result_of([text("a"), text("b")])
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("a"), text("b")],
        "isError": False,
    }
    assert result.meta is ABSENT


async def test_return_object_with_meta() -> None:
    result = await _result_of({"content": [text("a")], "meta": {"rows": 3}})
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("a")],
        "isError": False,
        "meta": {"rows": 3},
    }


async def test_return_object_with_null_meta_keeps_it() -> None:
    result = await _result_of({"content": [text("a")], "meta": None})
    assert result.meta is None
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("a")],
        "isError": False,
        "meta": None,
    }


async def test_return_object_without_meta_omits_it() -> None:
    result = await _result_of({"content": [text("a")], "other": 1})
    assert result.meta is ABSENT
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("a")],
        "isError": False,
    }


async def test_return_str_is_one_text_block() -> None:
    result = await _result_of("hello ✓")
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "hello ✓"}],
        "isError": False,
    }


async def test_return_empty_str_is_one_empty_text_block() -> None:
    result = await _result_of("")
    assert result.content == [text("")]


@pytest.mark.parametrize(
    "returned",
    [
        None,
        42,
        1.5,
        True,
        (text("t"),),
        {"content": "text"},
        {"content": None},
        {"nothing": [text("x")]},
        {"content": (text("t"),)},
        b"bytes",
        object(),
    ],
    ids=[
        "none",
        "int",
        "float",
        "bool",
        "tuple",
        "content-str",
        "content-none",
        "no-content",
        "content-tuple",
        "bytes",
        "object",
    ],
)
async def test_unsupported_shapes_become_error_results(returned: Any) -> None:
    result = await _result_of(returned)
    assert result.is_error is True
    assert len(result.content) == 1
    assert result.content[0]["type"] == "text"
    assert result.content[0]["text"].startswith("Error: ")
    assert result.meta is ABSENT


async def test_body_exception_has_no_meta() -> None:
    async def body(args: Any, execution: Any) -> Any:
        raise OSError("disk on fire")

    result = await run(build(body), {"path": "p"})
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("Error: disk on fire")],
        "isError": True,
    }


# -- presenters -------------------------------------------------------------------


def test_presenters_absent_unless_supplied() -> None:
    defn = build()
    assert defn.present_call is None
    assert defn.present_result is None
    only_call = build(present_call=lambda args: "view")
    assert only_call.present_call is not None
    assert only_call.present_result is None


def test_present_call_soft_validates() -> None:
    calls: list[Any] = []
    view = object()

    def present_call(args: Any) -> Any:
        calls.append(args)
        return view

    defn = build(present_call=present_call)
    assert defn.present_call is not None
    assert defn.present_call({"mode": "zzz"}) is None
    assert defn.present_call(None) is None
    assert defn.present_call("garbage") is None
    assert calls == []
    good = {"path": "/x"}
    assert defn.present_call(good) is view
    assert calls == [good]
    assert calls[0] is good


def test_present_result_soft_validates() -> None:
    calls: list[Any] = []
    view = object()

    def present_result(args: Any, result: Any) -> Any:
        calls.append((args, result))
        return view

    defn = build(present_result=present_result)
    assert defn.present_result is not None
    res = ToolResult(content=[text("x")], is_error=False)
    assert defn.present_result({}, res) is None
    assert calls == []
    assert defn.present_result({"path": "p"}, res) is view
    assert calls[0][1] is res


def test_tool_result_defaults() -> None:
    res = ToolResult(content=[text("x")], is_error=True)
    assert res.meta is ABSENT
    assert ToolResult(content=[], is_error=False, meta=None).meta is None


def test_presenter_exceptions_are_not_caught() -> None:
    def present_call(args: Any) -> Any:
        raise RuntimeError("presenter bug")

    def present_result(args: Any, result: Any) -> Any:
        raise RuntimeError("presenter bug")

    defn = build(present_call=present_call, present_result=present_result)
    assert defn.present_call is not None
    assert defn.present_result is not None
    with pytest.raises(RuntimeError, match="presenter bug"):
        defn.present_call({"path": "p"})
    with pytest.raises(RuntimeError, match="presenter bug"):
        defn.present_result({"path": "p"}, ToolResult(content=[], is_error=False))
    assert defn.present_call({}) is None


def test_presenter_returning_none_passes_through() -> None:
    defn = build(present_call=lambda args: None)
    assert defn.present_call is not None
    assert defn.present_call({"path": "p"}) is None


# -- raw JSON Schema parameters ------------------------------------------------------

RAW = {
    "type": "object",
    "properties": {
        "n": {"type": "number", "description": "a number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["n"],
    "additionalProperties": False,
}


def test_raw_schema_is_kept_verbatim() -> None:
    raw = copy.deepcopy(RAW)
    defn = build(parameters=raw)
    assert defn.parameters == RAW


@pytest.mark.parametrize(
    "arguments",
    [{}, {"n": "1"}, {"n": 1, "tags": [1]}, {"n": 1, "extra": True}, None],
    ids=["missing", "type", "items", "additional", "null"],
)
async def test_raw_schema_violations_use_invalid_args_shape(arguments: Any) -> None:
    ran: list[int] = []

    async def body(args: Any, execution: Any) -> Any:
        ran.append(1)
        return [text("ok")]

    result = await run(build(body, parameters=copy.deepcopy(RAW)), arguments)
    assert result.is_error is True
    assert result.content[0]["text"].startswith("Error: invalid arguments: ")
    assert result.to_json()["error"] == INVALID_ARGS
    assert ran == []


async def test_raw_schema_valid_args_run_body() -> None:
    seen: list[Any] = []

    async def body(args: Any, execution: Any) -> Any:
        seen.append(args)
        return [text("ok")]

    result = await run(
        build(body, parameters=copy.deepcopy(RAW)), {"n": 2, "tags": ["a"]}
    )
    assert result.to_json() == {
        "callId": "c1",
        "content": [text("ok")],
        "isError": False,
    }
    assert seen == [{"n": 2, "tags": ["a"]}]


async def test_raw_schema_direct_call_raises_tool_args_error() -> None:
    defn = build(parameters=copy.deepcopy(RAW))
    with pytest.raises(ToolArgsError) as info:
        await settle(defn.execute({}, None))  # type: ignore[arg-type]
    assert info.value.violations
    assert str(info.value).startswith("invalid arguments: ")


@pytest.mark.parametrize(
    ("arguments", "violation"),
    [
        ({}, 'missing required property "n"'),
        ({"n": "1"}, '"n" must be a number'),
        ({"n": True}, '"n" must be a number'),
        (None, '"arguments" must be an object'),
        ([], '"arguments" must be an object'),
    ],
    ids=["missing", "type", "bool", "null", "list"],
)
async def test_raw_schema_violations_read_like_the_dsl(
    arguments: Any, violation: str
) -> None:
    result = await run(build(parameters=copy.deepcopy(RAW)), arguments)
    assert result.content == [text(f"Error: invalid arguments: {violation}")]
    assert result.to_json()["error"] == INVALID_ARGS


# -- @tool: schema and conversion violations in one error -----------------------


@dataclasses.dataclass
class _Box:
    n: int
    side: str

    def __post_init__(self) -> None:
        _BOXES_BUILT.append(self)


_BOXES_BUILT: list[_Box] = []


def _boxed_tool() -> ToolDefinition:
    def boxed(a: int, b: str, xs: list[int], box: _Box) -> str:
        """Take a box."""
        return f"{a} {b} {xs} {box.n}"

    return tool(boxed)


async def test_tool_reports_schema_and_conversion_violations_together() -> None:
    """One round trip tells the model every argument to fix, in declared order."""
    _BOXES_BUILT.clear()
    result = await run(
        _boxed_tool(),
        {"a": 1.5, "b": 3, "xs": [1, 2.5], "box": {"n": 0.5, "side": "l"}},
    )
    assert result.text == (
        'Error: invalid arguments: "a" must be an integer; "b" must be a string; '
        '"xs[1]" must be an integer; "box.n" must be an integer'
    )
    assert result.to_json()["error"] == {
        "name": "ToolArgsError",
        "code": "INVALID_ARGS",
    }
    assert _BOXES_BUILT == []  # the check builds nothing and calls nothing


async def test_a_path_the_schema_refused_gets_no_second_message() -> None:
    result = await run(
        _boxed_tool(), {"a": "one", "b": 3, "xs": [1], "box": {"n": 1, "side": "l"}}
    )
    assert result.text == (
        'Error: invalid arguments: "a" must be an integer; "b" must be a string'
    )
    inside = await run(_boxed_tool(), {"a": 1, "b": "s", "xs": [1], "box": {"n": 1.5}})
    assert inside.text == (  # declared order: n, then side
        'Error: invalid arguments: "box.n" must be an integer; '
        'missing required property "box.side"'
    )


async def test_conversion_alone_still_reports_as_before() -> None:
    result = await run(
        _boxed_tool(), {"a": 2.5, "b": "s", "xs": [1], "box": {"n": 1, "side": "l"}}
    )
    assert result.text == 'Error: invalid arguments: "a" must be an integer'
    _BOXES_BUILT.clear()
    ok = await run(
        _boxed_tool(), {"a": 2.0, "b": "s", "xs": [3.0], "box": {"n": 1, "side": "l"}}
    )
    # 2.0 is an integer to JSON Schema: the strict check refuses it, then
    # takes it as 2 (pydantic may have built the box on the refused pass).
    assert ok.text == "2 s [3] 1" and _BOXES_BUILT[-1] == _Box(n=1, side="l")
