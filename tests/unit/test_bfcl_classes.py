"""Real API classes written by others, as signature tools: BFCL's multi-turn set.

The Berkeley Function Calling Leaderboard's multi-turn categories run plain
Python classes with state (a file system, messaging, tickets, trading,
travel, a vehicle, posting). Their methods return dicts, lists and ``None``,
their docstrings often put ``Args:`` straight under the summary, and a few
return annotations are wrong. Each method becomes a ``@tool`` on a bound
instance; every ground-truth call of ``multi_turn_base`` runs through the
pipeline and on a twin instance called directly, and the tool's answer must
be the twin's return value as JSON (``None``: no content; a ``str``: itself).
Parameter descriptions must match the ones BFCL's own function documents
give.

Needs ``bfcl-eval`` (``pip install --no-deps bfcl-eval==2026.3.23``); the
MathAPI class needs ``mpmath`` too, and is skipped without it.
"""

from __future__ import annotations

import ast
import copy
import importlib
import inspect
import json
import warnings
from typing import Any

import jsonschema
import pytest

from dsh_nb.tools import ToolDefinition, ToolExecutionInput, ToolRegistry, tool

bfcl = pytest.importorskip("bfcl_eval.constants.executable_backend_config")
MULTI_TURN = list(bfcl.CLASS_FILE_PATH_MAPPING)[:8]  # the multi-turn classes
ENTRIES = 120  # of 200: enough for every class, quick enough for CI


def _data() -> Any:
    from importlib.resources import files

    return files("bfcl_eval") / "data"


def _lines(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def _importable(name: str) -> bool:
    try:
        importlib.import_module(bfcl.CLASS_FILE_PATH_MAPPING[name])
    except ImportError:
        return False
    return True


CLASSES = [c for c in MULTI_TURN if _importable(c)]


def _instance(name: str, config: dict[str, Any]) -> Any:
    module = importlib.import_module(bfcl.CLASS_FILE_PATH_MAPPING[name])
    obj = getattr(module, name)()
    if name not in bfcl.STATELESS_CLASSES:
        obj._load_scenario(copy.deepcopy(config.get(name, {})))
    return obj


def _tools(obj: Any) -> list[ToolDefinition]:
    out = []
    for name, method in inspect.getmembers(obj, inspect.ismethod):
        if not name.startswith("_"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # their untyped parameters
                out.append(tool(method))
    return out


def _arguments(call: str, method: Any) -> tuple[str, dict[str, Any]]:
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    names = list(inspect.signature(method).parameters)
    args = {names[i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    return node.func.id, args


def _as_sent(value: object) -> object:
    """A number type dsh_nb does not know (mpmath's ``mpf``) is sent as its
    own ``str()``: a JSON number where a float has exactly those digits."""
    text = str(value)
    try:
        number = float(text)
    except ValueError:
        return text
    return number if repr(number) == text else text


def test_every_method_of_every_class_defines_as_a_tool() -> None:
    assert len(CLASSES) >= 7
    for name in CLASSES:
        assert len(_tools(_instance(name, {}))) >= 5, name


def test_parameter_descriptions_match_bfcls_own_documents() -> None:
    docs_dir = _data() / "multi_turn_func_doc"
    described = found = 0
    for name in CLASSES:
        documents = _lines(docs_dir / bfcl.MULTI_TURN_FUNC_DOC_FILE_MAPPING[name])
        ours = {d.name: d for d in _tools(_instance(name, {}))}
        for document in documents:
            props = ours[document["name"]].parameters.get("properties", {})
            for param, spec in document["parameters"]["properties"].items():
                if spec.get("description"):
                    described += 1
                    found += bool(props.get(param, {}).get("description"))
    # 29 of these were lost while a section right under the summary was dropped
    assert described >= 150
    assert found == described


async def test_ground_truth_calls_answer_with_the_methods_json() -> None:
    entries = _lines(_data() / "BFCL_v4_multi_turn_base.json")[:ENTRIES]
    answers = {
        e["id"]: e["ground_truth"]
        for e in _lines(_data() / "possible_answer" / "BFCL_v4_multi_turn_base.json")
    }
    counts = {"calls": 0, "json": 0, "none": 0, "text": 0, "refused": 0}
    for entry in entries:
        involved = entry["involved_classes"]
        if not set(involved) <= set(CLASSES):
            continue
        ours = {c: _instance(c, entry["initial_config"]) for c in involved}
        twins = {c: _instance(c, entry["initial_config"]) for c in involved}
        registry = ToolRegistry()
        owner: dict[str, str] = {}
        for cls, obj in ours.items():
            for definition in _tools(obj):
                registry.register(definition)
                owner[definition.name] = cls
        for turn in answers[entry["id"]]:
            for call in turn:
                name = ast.parse(call, mode="eval").body.func.id  # type: ignore[attr-defined]
                twin = getattr(twins[owner[name]], name)
                name, args = _arguments(call, twin)
                checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
                schema = registry.get(name).parameters  # type: ignore[union-attr]
                valid = jsonschema.Draft202012Validator(
                    schema, format_checker=checker
                ).is_valid(args)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # their wrong annotations
                    result = await registry.execute(
                        ToolExecutionInput(call_id="c", name=name, arguments=args)
                    )
                counts["calls"] += 1
                if not valid:  # the runtime refuses what the schema refuses
                    assert result.is_error, (call, result.text)
                    assert result.error.code == "INVALID_ARGS"  # type: ignore[union-attr]
                    counts["refused"] += 1
                    continue
                expected = twin(**args)
                assert not result.is_error, (call, result.text)
                if expected is None:
                    assert list(result.content) == [], call
                    counts["none"] += 1
                elif isinstance(expected, str):
                    assert result.text == expected, call
                    counts["text"] += 1
                else:
                    plain = json.loads(json.dumps(expected, default=_as_sent))
                    assert json.loads(result.text) == plain, call
                    counts["json"] += 1
    assert counts["calls"] >= 500
    assert counts["refused"] <= 2, counts  # ground truth that breaks its schema
    assert counts["none"] > 10 and counts["json"] > 400, counts
