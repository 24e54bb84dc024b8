"""What a signature tool's return value becomes, through the real pipeline.

Each rule of ``dsh_nb.tools.signature.returns`` (and of docs/signature-tools.md) is
checked on the result a caller gets from ``ToolRegistry.execute``: its
content blocks, its structured content, and the tool's output schema.
``define_tool`` keeps the contract's forms, so an ``int`` from its
``execute`` is still an error there.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, TypedDict

import jsonschema
import pytest
from pydantic import BaseModel

from dsh_nb.tools import ToolExecutionInput, ToolRegistry, define_tool, tool
from dsh_nb.tools.jsonvalue import ABSENT


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


class Reading(BaseModel):
    sensor: str
    value: float


class Tweet(TypedDict):
    id: int
    content: str


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"

    def __str__(self) -> str:
        return "an opaque thing"


async def run(func: Any, **args: Any) -> Any:
    registry = ToolRegistry()
    definition = tool(func)
    registry.register(definition)
    call = ToolExecutionInput(call_id="c1", name=definition.name, arguments=args)
    return definition, await registry.execute(call)


def text_of(result: Any) -> str:
    assert not result.is_error, result.content
    [block] = result.content
    assert block["type"] == "text"
    return str(block["text"])


# -- the value -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"mean": 1.5, "n": 3}, '{"mean":1.5,"n":3}'),
        ({"id": 1, "content": "hi"}, '{"id":1,"content":"hi"}'),  # data, not blocks
        ({"content": "hi"}, '{"content":"hi"}'),
        ({"content": [1, 2]}, '{"content":[1,2]}'),
        ({"content": [], "id": 3}, '{"content":[],"id":3}'),
        (["LAX", "SFO"], '["LAX","SFO"]'),
        ([{"type": "text", "text": "x", "author": "bob"}], None),
        ((1, "a"), '[1,"a"]'),
        ({3, 1, 2}, "[1,2,3]"),
        (42, "42"),
        (2.5, "2.5"),
        (True, "true"),
        (math.nan, "null"),
        ({"x": math.inf}, '{"x":null}'),
        (Point(1.5), '{"x":1.5,"y":0.0}'),
        (Reading(sensor="t1", value=20.5), '{"sensor":"t1","value":20.5}'),
        (dt.datetime(2026, 3, 1, 9, 30), '"2026-03-01T09:30:00"'),
        (dt.date(2026, 3, 1), '"2026-03-01"'),
        (dt.timedelta(hours=1), '"PT1H"'),
        (Path("data") / "x.csv", '"data/x.csv"'),
        (Decimal("1.50"), '"1.50"'),
        (Color.RED, '"red"'),
        ({1: "one"}, '{"1":"one"}'),
        ({"when": Opaque()}, '{"when":"an opaque thing"}'),
        (Opaque(), '"an opaque thing"'),
        (b"\xff", "b'\\xff'"),  # no JSON form at all: str()
    ],
)
async def test_data_becomes_compact_json(value: Any, text: str | None) -> None:
    def get():  # type: ignore[no-untyped-def]
        """Return the value."""
        return value

    definition, result = await run(get)
    if text is None:  # a dict with a stray key is not a block: data
        text = json.dumps(value, separators=(",", ":"))
    assert text_of(result) == text
    assert definition.output_schema is None  # unannotated: no schema
    assert result.meta is ABSENT


async def test_an_empty_list_is_no_blocks_unless_typed_as_data() -> None:
    def found():  # type: ignore[no-untyped-def]
        """Blocks built by a comprehension, none this time."""
        return [{"type": "text", "text": w} for w in ()]

    def codes() -> list[str]:
        """Airport codes: none."""
        return []

    assert list((await run(found))[1].content) == []
    _, result = await run(codes)
    assert text_of(result) == "[]"
    assert result.meta == {"structuredContent": {"result": []}}


async def test_a_str_is_one_text_block_and_none_is_an_empty_success() -> None:
    class Box:
        def __init__(self) -> None:
            self.volume = 0

        def set_volume(self, volume: int) -> None:
            """Set the volume."""
            self.volume = volume

        def label(self) -> str:
            """The label."""
            return f"volume {self.volume}"

    box = Box()
    definition, result = await run(box.set_volume, volume=7)
    assert (result.is_error, list(result.content), box.volume) == (False, [], 7)
    assert definition.output_schema is None
    assert text_of((await run(box.label))[1]) == "volume 7"


@pytest.mark.parametrize(
    "value",
    [
        [
            {"type": "text", "text": "a"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
        ],
        {"content": [{"type": "text", "text": "a"}], "meta": {"rows": 3}},
        {"content": []},
        [{"type": "resource_link", "uri": "file:///x", "name": "x", "title": "X"}],
        [{"type": "resource", "resource": {"uri": "file:///x", "text": "hi"}}],
    ],
)
async def test_real_content_blocks_pass_through(value: Any) -> None:
    def blocks():  # type: ignore[no-untyped-def]
        """Blocks."""
        return value

    _, result = await run(blocks)
    expected = value["content"] if isinstance(value, dict) else value
    assert not result.is_error
    assert [dict(b) for b in result.content] == expected
    if isinstance(value, dict) and "meta" in value:
        assert result.meta == value["meta"]


async def test_mcp_content_objects_are_blocks() -> None:
    from mcp import types

    def one() -> Any:
        """One block."""
        return types.TextContent(type="text", text="from mcp")

    def two() -> Any:
        """Two blocks."""
        return [
            types.TextContent(type="text", text="a"),
            types.ImageContent(type="image", data="AA==", mime_type="image/png"),
        ]

    assert text_of((await run(one))[1]) == "from mcp"
    _, result = await run(two)
    assert [dict(b) for b in result.content] == [
        {"type": "text", "text": "a"},
        {"type": "image", "data": "AA==", "mimeType": "image/png"},
    ]


async def test_numpy_and_pandas_values_are_json_numbers() -> None:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")

    def stats() -> Any:
        """Stats."""
        return {
            "n": np.int64(3),
            "mean": np.float32(1.5),
            "ok": np.bool_(True),
            "xs": np.array([[1, 2], [3, 4]]),
            "when": pd.Timestamp("2026-03-01 09:30"),
            "gap": pd.NA,
            "nat": pd.NaT,
        }

    assert json.loads(text_of((await run(stats))[1])) == {
        "n": 3,
        "mean": 1.5,
        "ok": True,
        "xs": [[1, 2], [3, 4]],
        "when": "2026-03-01T09:30:00",
        "gap": None,
        "nat": None,
    }


async def test_async_methods_are_converted_after_they_finish() -> None:
    class Api:
        async def fetch(self, n: int) -> list[int]:
            """Fetch n numbers."""
            return list(range(n))

    _, result = await run(Api().fetch, n=3)
    assert text_of(result) == "[0,1,2]"
    assert result.meta == {"structuredContent": {"result": [0, 1, 2]}}


# -- the return annotation: output schema and structured content ---------------


@pytest.mark.parametrize(
    ("annotation", "value", "schema", "structured"),
    [
        (
            dict[str, float],
            {"mean": 1.5},
            {"type": "object", "additionalProperties": {"type": "number"}},
            {"mean": 1.5},
        ),
        (
            Tweet,
            {"id": 1, "content": "hi"},
            {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "content": {"type": "string"},
                },
                "required": ["id", "content"],
            },
            {"id": 1, "content": "hi"},
        ),
        (
            Reading,
            Reading(sensor="t", value=1),
            {
                "type": "object",
                "properties": {
                    "sensor": {"type": "string"},
                    "value": {"type": "number"},
                },
                "required": ["sensor", "value"],
            },
            {"sensor": "t", "value": 1.0},
        ),
        (
            Point,
            Point(2),
            {
                "type": "object",
                "properties": {
                    "x": {"type": "number"},
                    "y": {"type": "number", "default": 0.0},
                },
                "required": ["x"],
            },
            {"x": 2.0, "y": 0.0},
        ),
        (
            list[str],
            ("LAX", "SFO"),
            {
                "type": "object",
                "properties": {
                    "result": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["result"],
            },
            {"result": ["LAX", "SFO"]},
        ),
        (
            int,
            7,
            {
                "type": "object",
                "properties": {"result": {"type": "integer"}},
                "required": ["result"],
            },
            {"result": 7},
        ),
        (
            dict[str, int] | None,
            None,
            {
                "type": "object",
                "properties": {
                    "result": {
                        "anyOf": [
                            {
                                "type": "object",
                                "additionalProperties": {"type": "integer"},
                            },
                            {"type": "null"},
                        ]
                    }
                },
                "required": ["result"],
            },
            {"result": None},
        ),
        (
            Literal["on", "off"],
            "on",
            {
                "type": "object",
                "properties": {"result": {"type": "string", "enum": ["on", "off"]}},
                "required": ["result"],
            },
            {"result": "on"},
        ),
    ],
)
async def test_a_json_able_annotation_is_the_output_schema(
    annotation: Any, value: Any, schema: Any, structured: Any
) -> None:
    def get():  # type: ignore[no-untyped-def]
        """Get."""
        return value

    get.__annotations__ = {"return": annotation}
    definition, result = await run(get)
    assert definition.output_schema == schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert not result.is_error
    assert result.meta == {"structuredContent": structured}
    jsonschema.validate(structured, schema)
    if value is None:
        assert list(result.content) == []
    elif isinstance(value, str):
        assert text_of(result) == value
    else:  # the text says what the structured content says
        wrapped = "result" in schema.get("properties", {})
        inner = structured["result"] if wrapped else structured
        assert json.loads(text_of(result)) == inner


@pytest.mark.parametrize(
    "annotation",
    [str, None, Any, object, dict, list, tuple, str | None, int | str],
)
async def test_text_nothing_anything_and_bare_containers_have_no_output_schema(
    annotation: Any,
) -> None:
    def get():  # type: ignore[no-untyped-def]
        """Get."""
        return "x"

    get.__annotations__ = {"return": annotation}
    definition, result = await run(get)
    assert definition.output_schema is None
    assert text_of(result) == "x" and result.meta is ABSENT


async def test_an_unschemable_annotation_has_no_output_schema() -> None:
    def frame() -> Opaque:
        """A thing pydantic cannot describe."""
        return Opaque()

    definition, result = await run(frame)
    assert definition.output_schema is None
    assert text_of(result) == '"an opaque thing"'


async def test_a_value_its_annotation_refuses_is_json_with_a_warning() -> None:
    def rate() -> float:  # BFCL's compute_exchange_rate: it returns a dict
        """Exchange rate."""
        return {"rate": 1.1}  # type: ignore[return-value]

    with pytest.warns(UserWarning) as caught:
        definition, result = await run(rate)
    assert [str(w.message) for w in caught] == [
        "@tool rate() returned dict, which its return annotation float refuses "
        "(Input should be a valid number); it is sent as JSON without structured "
        "content: fix the annotation"
    ]
    assert definition.output_schema is not None
    assert text_of(result) == '{"rate":1.1}'
    assert result.meta is ABSENT


async def test_lax_validation_shapes_the_structured_value() -> None:
    def ratio() -> dict[str, float]:
        """Ints where floats are promised."""
        return {"a": 1, "b": 2}  # type: ignore[dict-item]

    _, result = await run(ratio)
    assert text_of(result) == '{"a":1.0,"b":2.0}'
    assert result.meta == {"structuredContent": {"a": 1.0, "b": 2.0}}


async def test_blocks_keep_their_meta_beside_the_structured_content() -> None:
    def report() -> dict[str, Any]:
        """Content and meta, annotated as a dict."""
        return {"content": [{"type": "text", "text": "3 rows"}], "meta": {"rows": 3}}

    _, result = await run(report)
    assert text_of(result) == "3 rows"
    assert result.meta["rows"] == 3
    assert result.meta["structuredContent"]["meta"] == {"rows": 3}


# -- define_tool keeps the contract --------------------------------------------


async def test_define_tool_keeps_the_contracts_return_forms() -> None:
    registry = ToolRegistry()
    registry.register(
        define_tool(name="n", description="n", parameters={}, execute=lambda a: 42)
    )
    result = await registry.execute(
        ToolExecutionInput(call_id="c1", name="n", arguments={})
    )
    assert result.is_error
    assert result.text == (
        "Error: tool returned int; expected a list of content blocks, "
        '{"content": [...], "meta": ...}, or a str'
    )
