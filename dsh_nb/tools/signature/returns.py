"""What a signature tool's return value becomes: content, text or JSON.

``define_tool`` keeps the contract's return forms (a list of content
blocks, ``{"content": [...], "meta": ...}``, or a ``str``). A signature
tool (``@tool``, ``%%tool``) wraps an ordinary Python function, whose
return value is data: a getter returns a dict, a setter ``None``, a search
a list of strings. This module turns that value into a result the
pipeline takes, once, for every door (``%call``, ``Chat``, MCP, an
evaluation), as the MCP SDK, openai-agents and pydantic-ai do for theirs:

- **content blocks** pass through only where they really are blocks: a
  list whose items are all content blocks of a type MCP defines
  (``text``, ``image``, ``audio``, ``resource``, ``resource_link``) with
  that type's keys and no others, an MCP content object (or a list of
  them), or ``{"content": [blocks], "meta": ...}`` with no other key;
- **a str** is one text block holding exactly that text;
- **None** is an empty success: no content blocks at all (the MCP SDK's
  choice; a model reads an empty tool message); so is an empty list,
  unless the return annotation says what its items are (``-> list[str]``
  answers ``[]``): a list built of blocks may come out empty;
- **tables and arrays** (pandas, numpy, polars, pyarrow) are JSON data in
  one bounded form (:mod:`~dsh_nb.tools.signature.tabular`); an
  **iterator** is read for at most ``max_result_rows`` items, and a number
  type dsh_nb does not know is its own ``str()``
  (:mod:`~dsh_nb.tools.signature._prepare`);
- **everything else** (dicts, lists, tuples, numbers, bools, dataclasses,
  pydantic models, ``datetime``, ``Path``, enums, numpy and pandas scalars)
  is one text block of compact JSON, written by pydantic's serialiser; a
  value it has no JSON form for is written with ``str()``.

When the return annotation has a JSON Schema (and is not ``str``, ``None``
or ``Any``), that schema is the tool's ``output_schema``: an object type as
it is, anything else wrapped as ``{"result": ...}`` (the MCP SDK's rule,
since MCP's structured content is an object). The returned value is then
validated against the annotation (pydantic's lax mode, as the MCP SDK
does), and its JSON rides in the result's ``meta["structuredContent"]``,
where ``serve_mcp`` finds it; the text block holds the same JSON. A value
the annotation refuses still succeeds, as plain JSON without structured
content, with a ``UserWarning`` naming the function and the annotation:
the call has done its work, and an error would invite the model to do it
again (the MCP SDK fails such a call instead). A table or array annotation
(``-> pd.DataFrame``, ``-> np.ndarray``) has the schema of the form every
table or array takes, since its columns are only known when it returns.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import numbers
import types
import typing
import warnings
from collections import abc
from collections.abc import Callable, Mapping
from typing import Any, Final

from dsh_nb.tools.signature import _annotations as ann
from dsh_nb.tools.signature import tabular
from dsh_nb.tools.signature._prepare import number_text, prepared

__all__ = ["ReturnPlan", "convert_return", "plan_return"]

# MCP's content block types: what each requires, and what else it may carry.
_BLOCKS: Final[dict[str, tuple[frozenset[str], frozenset[str]]]] = {
    "text": (frozenset({"text"}), frozenset()),
    "image": (frozenset({"data", "mimeType"}), frozenset()),
    "audio": (frozenset({"data", "mimeType"}), frozenset()),
    "resource": (frozenset({"resource"}), frozenset()),
    "resource_link": (
        frozenset({"uri", "name"}),
        frozenset({"title", "description", "mimeType", "size", "icons"}),
    ),
}
_ANY_BLOCK: Final = frozenset({"type", "annotations", "_meta"})
_MCP: Final = frozenset({"mcp", "mcp_types"})  # where the SDK's content types live
_NO_SCHEMA: Final = (str, type(None), Any, object, typing.NoReturn)
_BARE: Final = frozenset(
    {dict, list, tuple, set, frozenset, abc.Mapping, abc.Sequence, abc.Iterable}
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReturnPlan:
    """A function's return annotation read once: its output schema, if any."""

    where: str
    output_schema: dict[str, Any] | None = None
    adapter: Any = None  # pydantic TypeAdapter of the annotation, with a schema
    wrapped: bool = False  # structured content is {"result": value}
    tabular: bool = False  # a table or array annotation: its JSON form is structured
    shown: str = ""  # the annotation as people write it


def plan_return(hints: Mapping[str, Any], where: str) -> ReturnPlan:
    """Read the ``"return"`` hint into a plan; never fails a definition.

    A return type pydantic cannot describe (a DataFrame, a plain class)
    simply has no output schema: its values are still written as JSON or
    ``str()``.
    """
    hint = hints.get("return", inspect.Signature.empty)
    if hint is inspect.Signature.empty or _without_schema(hint):
        return ReturnPlan(where=where)
    table = tabular.schema_for(ann.bare(hint))
    if table is not None:
        shown = ann.type_name(ann.bare(hint))
        return ReturnPlan(where=where, output_schema=table, tabular=True, shown=shown)
    from pydantic import TypeAdapter

    from dsh_nb.tools.schema.wireschema import tidy_schema
    from dsh_nb.tools.signature import _formats

    tp = ann.modern_typeddicts(hint, {})
    try:
        adapter: Any = TypeAdapter(tp)
        raw = adapter.json_schema(
            mode="serialization", schema_generator=_formats.json_schema_generator()
        )
    except Exception:  # noqa: BLE001 - no schema is an answer, not an error
        return ReturnPlan(where=where)
    schema = tidy_schema(raw)
    _formats.merge_notes(schema, keep=False)  # the notes speak of input
    schema = _inline_root(schema)
    wrapped = schema.get("type") != "object"
    if wrapped:
        defs = schema.pop("$defs", None)
        schema = {"type": "object", "properties": {"result": schema}}
        schema["required"] = ["result"]
        if defs:
            schema["$defs"] = defs
    first: dict[str, Any] = {
        k: schema[k] for k in ("type", "properties", "required") if k in schema
    }
    return ReturnPlan(
        where=where,
        output_schema={**first, **schema},
        adapter=adapter,
        wrapped=wrapped,
        shown=ann.type_name(ann.bare(hint)),
    )


def _without_schema(hint: Any) -> bool:
    """No output schema: text (``str``), nothing (``None``) or anything."""
    tp = ann.bare(hint)
    if tp is None or any(tp is t for t in _NO_SCHEMA):
        return True
    origin = typing.get_origin(tp)
    if not typing.get_args(tp) and (origin or tp) in _BARE:
        return True  # a bare dict or list says nothing of what it holds
    if origin is typing.Union or origin is types.UnionType:
        members = [ann.bare(a) for a in typing.get_args(tp)]
        return any(m is str or m is Any or m is object for m in members)
    return False


def _inline_root(schema: dict[str, Any]) -> dict[str, Any]:
    """A recursive type's root ``$ref`` replaced by its definition (MCP
    requires an object at the root of an output schema)."""
    ref = schema.get("$ref")
    defs = schema.get("$defs")
    if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
        return schema
    if not isinstance(defs, dict) or ref[8:] not in defs:
        return schema
    rest = {k: v for k, v in schema.items() if k != "$ref"}
    return {**defs[ref[8:]], **rest}


def convert_return(plan: ReturnPlan, value: object) -> object:
    """Return what the pipeline takes for ``value`` (see the module's rules)."""
    structured = _NONE
    value = prepared(value)
    if plan.adapter is not None:
        value, structured = _checked(plan, value)
    elif plan.tabular:
        structured = _tabular_structured(plan, value)
    if isinstance(value, str) and not isinstance(value, enum.Enum):
        content: object = str.__str__(value)
    elif value is None or (
        isinstance(value, list)
        and not value
        and plan.adapter is None
        and not plan.tabular
    ):
        content = []  # an empty list of blocks, unless typed as data
    else:
        blocks = _as_blocks(value)
        if blocks is not None:
            content = blocks
        elif structured is not _NONE:
            inner = structured["result"] if plan.wrapped else structured
            content = json.dumps(inner, ensure_ascii=False, separators=(",", ":"))
        else:
            content = json_text(value)
    if structured is _NONE:
        return content
    return _with_structured(content, structured)


_NONE: Final[Any] = object()


def _tabular_structured(plan: ReturnPlan, value: object) -> Any:
    """The table or array JSON as structured content, if ``value`` is one."""
    wanted = plan.output_schema or {}
    keys = set(wanted.get("required", ()))
    if isinstance(value, dict) and keys <= value.keys():
        return value
    warnings.warn(
        f"{plan.where} returned {type(value).__name__}, not the {plan.shown} "
        "its return annotation names; it is sent as JSON without structured "
        "content: fix the annotation",
        UserWarning,
        stacklevel=3,
    )
    return _NONE


def _checked(plan: ReturnPlan, value: object) -> tuple[Any, Any]:
    """The value as its annotation reads it, and its structured JSON.

    A value the annotation refuses is still the call's answer (the work is
    done; an error would invite the model to do it again), so it goes on as
    plain JSON without structured content, with a warning to fix the
    annotation.
    """
    from pydantic import ValidationError
    from pydantic_core import PydanticSerializationError, to_json

    try:
        valid = plan.adapter.validate_python(value, strict=False)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        at = f" at {where}" if where else ""
        warnings.warn(
            f"{plan.where} returned {type(value).__name__}, which its return "
            f"annotation {plan.shown} refuses{at} ({first.get('msg', 'invalid')}); "
            "it is sent as JSON without structured content: fix the annotation",
            UserWarning,
            stacklevel=2,
        )
        return value, _NONE
    try:
        text = to_json(valid, fallback=_fallback, inf_nan_mode="null").decode()
        plain = json.loads(text)
    except (PydanticSerializationError, ValueError, RecursionError):
        plain = json.loads(json.dumps(str(valid)))
    return valid, {"result": plain} if plan.wrapped else plain


def _with_structured(content: object, structured: Any) -> object:
    if isinstance(content, str):
        blocks: object = [{"type": "text", "text": content}]
        meta: Any = {}
    elif isinstance(content, Mapping):
        blocks, meta = content["content"], content.get("meta", {})
        if not isinstance(meta, Mapping):  # the tool's own meta: leave it be
            return content
    else:
        blocks, meta = content, {}
    return {"content": blocks, "meta": {**meta, "structuredContent": structured}}


def json_text(value: object) -> str:
    """``value`` as compact JSON text, or its ``str()`` when it has none."""
    from pydantic_core import PydanticSerializationError, to_json

    try:
        return to_json(value, fallback=_fallback, inf_nan_mode="null").decode()
    except (PydanticSerializationError, ValueError, RecursionError):
        pass
    try:  # only now: a walk of the whole value is the slow path
        return to_json(
            _without_nat(value, 0), fallback=_fallback, inf_nan_mode="null"
        ).decode()
    except (PydanticSerializationError, ValueError, RecursionError):
        return str(value)


def _without_nat(value: object, depth: int) -> object:
    """``value`` with pandas' NaT as None (pydantic takes it for a datetime
    and fails); only tried after a first attempt failed."""
    if type(value).__name__ == "NaTType" or depth > 64:
        return None if depth <= 64 else str(value)
    if isinstance(value, Mapping):
        return {k: _without_nat(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_nat(v, depth + 1) for v in value]
    return value


def _fallback(value: Any) -> Any:
    """A JSON form for what pydantic does not know: tables and arrays as
    :mod:`~dsh_nb.tools.signature.tabular` writes them, numbers as their
    ``str()`` says, anything else as its ``str()``."""
    if tabular.is_tabular(value):
        return tabular.tabular_json(value)
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    if isinstance(value, numbers.Number):
        return number_text(value)
    return str(value)


def _block(item: object) -> Mapping[str, Any] | None:
    """``item`` as a content block, or None when it is data."""
    if not isinstance(item, Mapping):
        dump: Callable[..., Any] | None = getattr(item, "model_dump", None)
        if dump is None or type(item).__module__.split(".")[0] not in _MCP:
            return None
        item = dump(mode="json", by_alias=True, exclude_none=True)
        if not isinstance(item, Mapping):
            return None
    kind = item.get("type")
    shape = _BLOCKS.get(kind) if type(kind) is str else None
    if shape is None:
        return None
    required, optional = shape
    keys = item.keys()
    if not required <= keys or not keys <= required | optional | _ANY_BLOCK:
        return None
    for key in required:
        wanted = Mapping if key == "resource" else str
        if not isinstance(item[key], wanted):
            return None
    return item


def _as_blocks(value: object) -> object | None:
    """The content blocks ``value`` really is, or None for data."""
    single = None if isinstance(value, Mapping) else _block(value)
    if single is not None:
        return [single]
    if isinstance(value, list) and value:
        return _all_blocks(value)
    if isinstance(value, Mapping) and "content" in value:
        if not value.keys() <= {"content", "meta"}:
            return None
        items = value["content"]
        if not isinstance(items, list):
            return None
        blocks = _all_blocks(items)
        if blocks is None:
            return None
        out: dict[str, Any] = {"content": blocks}
        if "meta" in value:
            out["meta"] = value["meta"]
        return out
    return None


def _all_blocks(items: list[Any]) -> list[Mapping[str, Any]] | None:
    """Every item as a block, or None at the first that is data (a long
    list of data is known as such without a look at every item)."""
    blocks = []
    for item in items:
        block = _block(item)
        if block is None:
            return None
        blocks.append(block)
    return blocks
