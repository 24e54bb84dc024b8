"""The Berkeley Function Calling Leaderboard's single-turn categories as cases.

``load("simple_python")`` turns BFCL's published questions and possible
answers into :class:`~dsh_nb.evals.Case` objects: each brings its own
body-less tools (their JSON Schema as BFCL's OpenAI handler sends it, dots
in names replaced by ``_``; the harness runs them dry) and an expectation
graded exactly as BFCL's AST checker grades (see ``_bfcl_checker``), so a
tool pipeline's score is comparable with the leaderboard's.

The data is never copied into this repository: it comes from the published
``bfcl-eval`` package (``pip install --no-deps bfcl-eval``; its
dependencies are not needed to read it) or from ``data_dir``, a folder with
the same ``BFCL_v4_<category>.json`` files and ``possible_answer/``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn, TypeGuard

from dsh_nb.evals._bfcl_checker import BfclArg, BfclNever
from dsh_nb.evals.case import Case
from dsh_nb.evals.expect import (
    ActualCall,
    ArgMatcher,
    Expectation,
    ExpectedCall,
    calls,
    no_call,
)
from dsh_nb.evals.trustedtool import trusted_tool
from dsh_nb.tools.definition import ToolDefinition

__all__ = ["CATEGORIES", "load", "reference_calls", "tool_schema", "wire_name"]

CATEGORIES: Final = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
)
_PREFIX: Final = "BFCL_v4_"
# What BFCL adds to every document before a model sees it.
_PYTHON_HINT: Final = " Note that the provided function is in Python 3 syntax."
_FLOAT_HINT: Final = " This is a float type value."
# Tools by their document, across loads: a definition is immutable, many
# live cases share documents, and jsonschema checks each schema in ~5 ms.
_TOOLS: dict[str, ToolDefinition] = {}
_TOOLS_LIMIT: Final = 20_000
_JSON_TYPES: Final[Mapping[str, str]] = {
    "string": "string",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "dict": "object",
    "object": "object",
    "any": "string",
}


def load(
    category: str, *, limit: int | None = None, data_dir: str | Path | None = None
) -> list[Case]:
    """BFCL's cases of one ``category``, in BFCL's order, with BFCL's ids;
    ``limit`` keeps the first ``limit``. The multi-turn categories
    (:data:`MULTI_TURN`) are conversations: see :mod:`dsh_nb.evals.bfcl_multi`."""
    from dsh_nb.evals.bfcl_multi import MULTI_TURN, Kit, load_multi

    if category not in CATEGORIES and category not in MULTI_TURN:
        raise ValueError(
            f"unknown BFCL category {category!r}; the single-turn categories are "
            + ", ".join(CATEGORIES)
            + "; the multi-turn ones "
            + ", ".join(MULTI_TURN)
        )
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
    ):
        raise ValueError(f"limit must be a non-negative int or None, not {limit!r}")
    folder = _data_folder(data_dir)
    if category in MULTI_TURN:
        kit = Kit(read=_objects, schema=tool_schema, hint=_PYTHON_HINT, prefix=_PREFIX)
        return load_multi(category, limit=limit, folder=folder, kit=kit)
    questions = folder / f"{_PREFIX}{category}.json"
    entries = list(_read(questions, limit))
    answers: dict[str, Any] = {}
    if not category.endswith("irrelevance"):
        wanted = {e["id"] for _, e in entries}
        path = folder / "possible_answer" / f"{_PREFIX}{category}.json"
        for number, answer in _read(path, None):
            if answer["id"] in wanted:
                truth = answer.get("ground_truth")
                if not isinstance(truth, list):
                    raise ValueError(f"{path}:{number}: ground_truth must be a list")
                answers[answer["id"]] = truth
                if len(answers) == len(wanted):
                    break
        missing = sorted(wanted - answers.keys())
        if missing:
            raise ValueError(f"{path}: no possible answer for {', '.join(missing[:5])}")
    out = []
    for number, entry in entries:
        try:
            out.append(_case(entry, category, answers.get(entry["id"]), _TOOLS))
        except ValueError as exc:
            raise ValueError(f"{questions}:{number}: {exc}") from None
    return out


def wire_name(name: str) -> str:
    """A BFCL function's name as BFCL's OpenAI handler sends it."""
    return name.replace(".", "_")


def tool_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A BFCL ``parameters`` document as JSON Schema.

    BFCL's types become JSON Schema's (``dict`` an object, ``float`` a number
    marked ``format: float`` with BFCL's float note, ``tuple`` an array,
    ``any`` a string, an unknown or missing type a string, as their OpenAI
    handler does). Three changes make the schema say what the document
    means: BFCL's own ``optional`` flag is dropped, ``default: None`` makes
    the type nullable, and an ``enum`` written on an array moves to its
    items.
    """
    properties = parameters.get("properties")
    schema: dict[str, Any] = {
        "type": "object",
        "properties": _properties(
            properties if isinstance(properties, Mapping) else {}
        ),
    }
    required = parameters.get("required")
    if _is_names(required):
        schema["required"] = list(required)
    return schema


def _properties(properties: Mapping[str, Any]) -> dict[str, Any]:
    return {
        str(name): _node(node if isinstance(node, Mapping) else {}, prop=True)
        for name, node in properties.items()
    }


def _node(node: Mapping[str, Any], *, prop: bool) -> dict[str, Any]:
    given = node.get("type")
    kind = _JSON_TYPES.get(given, "string") if isinstance(given, str) else "string"
    out: dict[str, Any] = {"type": kind}
    description = node.get("description")
    if prop and given == "float":
        out["format"] = "float"
        description = (
            description if isinstance(description, str) else ""
        ) + _FLOAT_HINT
    if isinstance(description, str):
        out["description"] = description
    if isinstance(node.get("format"), str) and "format" not in out:
        out["format"] = node["format"]
    for key in ("minimum", "maximum"):
        bound = node.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            out[key] = bound
    if "default" in node:
        out["default"] = node["default"]
    enum = node.get("enum")
    items = node.get("items")
    if kind == "object":
        inner = node.get("properties")
        if isinstance(inner, Mapping):
            out["properties"] = _properties(inner)
        if _is_names(node.get("required")):
            out["required"] = list(node["required"])
    if kind == "array" and isinstance(items, Mapping):
        out["items"] = _node(items, prop=False)
        if isinstance(enum, list) and "enum" not in out["items"]:
            out["items"]["enum"] = list(enum)
            enum = None
    if isinstance(enum, list):
        out["enum"] = list(enum)
    if "default" in node and node["default"] is None:
        # BFCL's documents write an optional argument as ``default: None``
        # and its answers accept None there; the schema says so.
        out["type"] = [kind, "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"].append(None)
    return out


def _is_names(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _no_body(args: object) -> NoReturn:
    raise RuntimeError(
        "a BFCL tool has no body; run BFCL cases with execute='dry', which "
        "validates the arguments and answers a stub"
    )


def _tool(
    function: Mapping[str, Any], cache: dict[str, ToolDefinition]
) -> ToolDefinition:
    key = json.dumps(function, sort_keys=True)
    found = cache.get(key)
    if found is None:
        parameters = function.get("parameters")
        schema = tool_schema(parameters if isinstance(parameters, Mapping) else {})
        found = trusted_tool(
            wire_name(function["name"]),
            str(function.get("description", "")) + _PYTHON_HINT,
            schema,
            _no_body,
        )
        if len(cache) >= _TOOLS_LIMIT:
            cache.clear()
        cache[key] = found
    return found


def _case(
    entry: Mapping[str, Any],
    category: str,
    ground_truth: Sequence[Mapping[str, Any]] | None,
    cache: dict[str, ToolDefinition],
) -> Case:
    case_id = entry["id"]
    try:
        functions = entry["function"]
        tools = [_tool(f, cache) for f in functions]
        names = [t.name for t in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"two functions share the name {names}")
        expect = _expectation(category, functions, ground_truth)
        turn = entry["question"][0]
        prompt = [{"role": m["role"], "content": m["content"]} for m in turn]
        renamed = {
            wire_name(f["name"]): f["name"] for f in functions if "." in f["name"]
        }
    except (
        AttributeError,
        IndexError,
        KeyError,
        OverflowError,
        RecursionError,
        TypeError,
        ValueError,
    ) as exc:
        raise ValueError(
            f"BFCL case {case_id}: {type(exc).__name__}: {str(exc)[:300]}"
        ) from None
    return Case(
        prompt,
        expect=expect,
        tools=tools,
        id=case_id,
        tags=(category,),
        meta={
            "category": category,
            "functions": functions,
            "ground_truth": ground_truth,
        },
        display_names=renamed,
    )


def _expectation(
    category: str,
    functions: Sequence[Mapping[str, Any]],
    ground_truth: Sequence[Mapping[str, Any]] | None,
) -> Expectation:
    if category.endswith("irrelevance"):
        return no_call()
    if not ground_truth:
        raise ValueError("no ground truth")
    if "parallel" in category:
        return calls(*(_expected(_find(functions, g), g) for g in ground_truth))
    if "multiple" in category:
        return _expected(_find(functions, ground_truth[0]), ground_truth[0])
    # BFCL's simple checker grades the first document against the first answer.
    return _expected(functions[0], ground_truth[0])


def _find(
    functions: Sequence[Mapping[str, Any]], answer: Mapping[str, Any]
) -> Mapping[str, Any]:
    (name,) = answer.keys()
    for function in functions:
        if function["name"] == name:
            return function
    raise ValueError(f"the possible answer calls {name!r}, which is not offered")


def _expected(function: Mapping[str, Any], answer: Mapping[str, Any]) -> ExpectedCall:
    (params,) = answer.values()
    doc = function["parameters"]
    properties: Mapping[str, Any] = doc.get("properties") or {}
    required = set(doc.get("required") or ())
    args: dict[str, ArgMatcher] = {}
    for param, acceptable in params.items():
        if not isinstance(acceptable, list):
            raise ValueError(f"the acceptable values of {param!r} are not a list")
        node = properties.get(param)
        if node is None:
            args[param] = BfclArg(
                "", acceptable, required=param in required, in_doc=False
            )
            continue
        items = node.get("items")
        args[param] = BfclArg(
            node["type"],
            acceptable,
            required=param in required,
            items_kind=items.get("type") if isinstance(items, Mapping) else None,
        )
    for param in required - args.keys():
        args[param] = BfclNever()
    return ExpectedCall(wire_name(function["name"]), args, extra_args=False)


def reference_calls(case: Case, *, omit_optional: bool = False) -> list[ActualCall]:
    """The calls BFCL's possible answer describes, first acceptable value each.

    For responders that answer from the cases and for checking the grader;
    ``omit_optional`` leaves out every argument the answer lets be omitted
    (a few answers pass only that way). A loaded irrelevance case has none.
    """
    functions = {f["name"]: f for f in reversed(case.meta.get("functions") or [])}
    out = []
    for answer in case.meta.get("ground_truth") or []:
        ((name, params),) = answer.items()
        doc = functions.get(name, {}).get("parameters") or {}
        properties = doc.get("properties") or {}
        args = {}
        for param, acceptable in params.items():
            if omit_optional and "" in acceptable:
                continue
            found, value = _first(acceptable)
            if found:
                args[param] = _shaped(properties.get(param) or {}, value, omit_optional)
        out.append(ActualCall(wire_name(name), args))
    return out


def _first(acceptable: Sequence[Any]) -> tuple[bool, Any]:
    for value in acceptable:
        if value != "":
            return True, value
    return False, None


def _shaped(node: Mapping[str, Any], value: Any, omit_optional: bool) -> Any:
    """An acceptable value as a model would send it: BFCL writes a dict's
    values (and each dict's in a list of dicts) as lists of alternatives."""
    items = node.get("items")
    if node.get("type") == "dict" and isinstance(value, dict):
        shaped = {}
        for key, acceptable in value.items():
            if not isinstance(acceptable, list) or (omit_optional and "" in acceptable):
                continue
            found, first = _first(acceptable)
            if found:
                shaped[key] = first
        return shaped
    if (
        isinstance(items, Mapping)
        and items.get("type") == "dict"
        and isinstance(value, list)
    ):
        return [_shaped(items, d, omit_optional) for d in value]
    return value


def _data_folder(data_dir: str | Path | None) -> Path:
    if data_dir is not None:
        folder = Path(data_dir)
        if not folder.is_dir():
            raise FileNotFoundError(f"BFCL data_dir {str(folder)!r} is not a folder")
        return folder
    from importlib import resources

    try:
        root = resources.files("bfcl_eval")
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "the BFCL data comes from the bfcl-eval package: "
            "pip install --no-deps bfcl-eval==2026.3.23 (or pass data_dir=)"
        ) from None
    return Path(str(root)) / "data"


def _objects(path: Path, limit: int | None) -> Iterator[dict[str, Any]]:
    """The objects of :func:`_read`, without their line numbers (any object)."""
    return (obj for _, obj in _read(path, limit, need_id=False))


def _read(
    path: Path, limit: int | None, *, need_id: bool = True
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each line, as BFCL writes its files; a line
    that is not an object with a string ``id`` fails naming the line."""
    if not path.is_file():
        raise FileNotFoundError(f"no BFCL file {str(path)!r}")
    if limit == 0:
        return
    count = 0
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON: {exc}") from None
            except RecursionError:
                raise ValueError(f"{path}:{number}: nested too deep") from None
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{number}: not an object")
            if need_id and not isinstance(obj.get("id"), str):
                raise ValueError(f"{path}:{number}: not an object with a string id")
            yield number, obj
            count += 1
            if limit is not None and count >= limit:
                return
