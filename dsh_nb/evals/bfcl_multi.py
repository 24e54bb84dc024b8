"""BFCL's multi-turn categories as conversation cases, graded as BFCL grades.

``bfcl.load("multi_turn_base")`` (and ``multi_turn_miss_func``,
``multi_turn_miss_param``, ``multi_turn_long_context``) builds one
conversation :class:`~dsh_nb.evals.Case` per BFCL entry:

- the tools are BFCL's own function documents for the entry's API classes
  (a file system, messaging, tickets, trading, travel, a vehicle, posting,
  maths), as their OpenAI handler sends them; each is defined once and
  shared, and its body runs the method on the running trial's instance
  (:func:`~dsh_nb.evals.conversation.trial_state`), answering the model
  what BFCL's executor answers (a ``str`` as is, a ``dict`` as
  ``json.dumps``, anything else as ``str``; an exception as
  ``"Error during execution: ..."``);
- each trial gets fresh instances loaded from the entry's initial
  configuration (``long_context`` for that category), deep-copied so no
  two trials, nor BFCL's module-level defaults, share a list or a dict;
- ``miss_func`` holds the entry's missed functions back until their turn,
  which, as in BFCL, has no user message of its own: the turn sends BFCL's
  "I have updated some more functions you can choose from. What about
  now?" with the functions added. ``miss_param`` needs nothing more: its
  data already has the turn that lacks a parameter (ground truth: no call)
  and the turn that gives it.

Every turn is graded by :class:`BfclTurn`, BFCL's ``multi_turn_checker``
rules written anew: after a turn whose ground truth has calls, the model
must have made a call in it, every instance's public attributes must equal
those of instances that ran the ground truth of every turn so far on a
fresh copy, and the ground truth's results of this turn must all be among
the results of the model's calls so far, in any order. A turn that ends
because ``max_steps`` ran out fails (BFCL's force-terminated entry).
"""

from __future__ import annotations

import ast
import copy
import importlib
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

from dsh_nb.evals.case import Case
from dsh_nb.evals.conversation import TrialTools, Turn, TurnView, trial_state
from dsh_nb.tools.definition import ToolDefinition, define_tool
from dsh_nb.tools.jsonvalue import to_plain
from dsh_nb.tools.registry import ToolRegistry

__all__ = [
    "ADDED_FUNCTIONS",
    "MULTI_TURN",
    "BfclTurn",
    "Kit",
    "World",
    "bfcl_text",
    "load_multi",
    "parse_call",
    "reference_turns",
]

MULTI_TURN: Final = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
#: What BFCL's handler sends on a ``miss_func`` turn (its FC models' text).
ADDED_FUNCTIONS: Final = (
    "I have updated some more functions you can choose from. What about now?"
)
_BACKEND: Final = "bfcl_eval.constants.executable_backend_config"


@dataclass(frozen=True, slots=True)
class Kit:
    """What the single-turn loader shares (handed in: no import back)."""

    read: Callable[[Path, int | None], Iterator[Any]]
    schema: Callable[[Mapping[str, Any]], dict[str, Any]]
    hint: str
    prefix: str


# Definitions by (class, document): built once, shared by every case.
_TOOLS: dict[tuple[str, str], ToolDefinition] = {}


def bfcl_text(value: object) -> str:
    """A method's return value as BFCL's executor writes it."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def _backend() -> Any:
    try:
        return importlib.import_module(_BACKEND)
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "BFCL's multi-turn classes come from the bfcl-eval package: "
            "pip install --no-deps bfcl-eval==2026.3.23 (MathAPI also needs mpmath)"
        ) from None


def _fresh(name: str, config: Mapping[str, Any], long_context: bool) -> Any:
    backend = _backend()
    module = importlib.import_module(backend.CLASS_FILE_PATH_MAPPING[name])
    obj = getattr(module, name)()
    if name not in backend.STATELESS_CLASSES:
        obj._load_scenario(
            copy.deepcopy(dict(config.get(name) or {})), long_context=long_context
        )
    # _load_scenario keeps BFCL's module-level defaults for keys the config
    # leaves out: a copy detaches them, so trials never share them.
    return copy.deepcopy(obj)


class World:
    """One trial's instances, and the results its calls answered, in order."""

    def __init__(
        self, classes: Sequence[str], config: Mapping[str, Any], long_context: bool
    ) -> None:
        self.instances: dict[str, Any] = {
            name: _fresh(name, config, long_context) for name in classes
        }
        self.owner: dict[str, str] = {}
        for name, obj in self.instances.items():  # a later class wins, as in BFCL
            for attr in dir(obj):
                if not attr.startswith("_") and callable(getattr(obj, attr, None)):
                    self.owner[attr] = name
        self.responses: list[str] = []

    def run(self, method: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
        """Call ``method`` on its instance; the answer as BFCL's executor gives it."""
        try:
            owner = self.instances[self.owner[method]]
            text = bfcl_text(getattr(owner, method)(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - BFCL answers the error's text
            text = f"Error during execution: {exc}"
        self.responses.append(text)
        return text


def parse_call(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """``name(args)`` as BFCL writes a ground-truth call: name, args, kwargs."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise ValueError(f"not a call: {text!r}")
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    return node.func.id, args, kwargs


def _differences(model: Any, truth: Any) -> list[str]:
    """BFCL's ``_compare_instances``: public attributes of the truth, by ``!=``."""
    return [
        name
        for name in vars(truth)
        if not name.startswith("_")
        and getattr(model, name, None) != getattr(truth, name)
    ]


def _missing(wanted: Sequence[str], got: Sequence[str]) -> list[str]:
    """BFCL's ``_is_subsequence_unordered``: each wanted result, used once."""
    left = Counter(got)
    out = []
    for item in wanted:
        if left[item] > 0:
            left[item] -= 1
        else:
            out.append(item)
    return out


class BfclTurn:
    """BFCL's check after turn ``index + 1`` (see the module doc)."""

    def __init__(self, index: int, entry: Mapping[str, Any]) -> None:
        self.index = index
        self.entry = entry
        self.truth: tuple[str, ...] = tuple(entry["ground_truth"][index])
        self.names = tuple(parse_call(c)[0] for c in self.truth)

    def describe(self) -> str:
        calls = ", ".join(self.truth)
        return f"the state and results of [{calls}]" if calls else "(no call expected)"

    def _truth(self, view: TurnView) -> list[list[str]]:
        memo = view.memo
        if "bfcl" not in memo:
            memo["bfcl"] = World(
                self.entry["involved_classes"],
                self.entry["initial_config"],
                self.entry["long_context"],
            )
            memo["bfcl_results"] = []
        world: World = memo["bfcl"]
        results: list[list[str]] = memo["bfcl_results"]
        while len(results) <= self.index:
            done = len(world.responses)
            for call in self.entry["ground_truth"][len(results)]:
                name, args, kwargs = parse_call(call)
                world.run(name, args, kwargs)
            results.append(world.responses[done:])
        return results

    def check(self, view: TurnView) -> str | None:
        results = self._truth(view)
        if view.stop == "max-steps":
            return (
                "the model still wanted to call tools when the turn's max_steps "
                "ran out (BFCL fails a force-terminated entry)"
            )
        if not self.truth:
            return None
        if not view.calls:
            return "no call in this turn; the ground truth makes calls here"
        model: World = view.state
        truth: World = view.memo["bfcl"]
        for name, obj in truth.instances.items():
            differ = _differences(model.instances[name], obj)
            if differ:
                return f"{name} differs from the ground truth's state in: " + ", ".join(
                    differ
                )
        missing = _missing(results[self.index], model.responses)
        if missing:
            shown = "; ".join(m[:120] for m in missing[:3])
            return f"the ground truth's results are not among the model's: {shown}"
        return None


def _body(method: str, args: Any) -> str:
    world: World = trial_state()
    return world.run(method, (), to_plain(args))


def _tool(owner: str, doc: Mapping[str, Any], kit: Kit) -> ToolDefinition:
    key = (owner, json.dumps(doc, sort_keys=True))
    found = _TOOLS.get(key)
    if found is None:
        parameters = doc.get("parameters")
        found = define_tool(
            name=str(doc["name"]),
            description=str(doc.get("description", "")) + kit.hint,
            parameters=kit.schema(
                parameters if isinstance(parameters, Mapping) else {}
            ),
            execute=partial(_body, str(doc["name"])),
        )
        _TOOLS[key] = found
    return found


def _documents(folder: Path, owner: str, kit: Kit) -> list[dict[str, Any]]:
    name = _backend().MULTI_TURN_FUNC_DOC_FILE_MAPPING[owner]
    return list(kit.read(folder / "multi_turn_func_doc" / name, None))


def _trial_tools(
    tools: Sequence[ToolDefinition], entry: Mapping[str, Any]
) -> TrialTools:
    registry = ToolRegistry()
    for definition in tools:
        registry.register(definition)
    world = World(
        entry["involved_classes"], entry["initial_config"], entry["long_context"]
    )
    return TrialTools(registry, world)


def _case(
    entry: dict[str, Any],
    category: str,
    truth: list[list[str]],
    docs: dict[str, list[dict[str, Any]]],
    kit: Kit,
) -> Case:
    classes = list(entry["involved_classes"])
    by_name: dict[str, ToolDefinition] = {}
    for owner in classes:
        for doc in docs[owner]:
            by_name[doc["name"]] = _tool(owner, doc, kit)
    held: dict[int, list[str]] = {
        int(k): list(v) for k, v in (entry.get("missed_function") or {}).items()
    }
    offered = [n for n in by_name if not any(n in v for v in held.values())]
    turns = []
    for index, messages in enumerate(entry["question"]):
        if index in held:
            offered += held[index]
            turns.append(Turn(ADDED_FUNCTIONS, tools=tuple(offered)))
            continue
        text = "\n\n".join(str(m["content"]) for m in messages if m["role"] == "user")
        turns.append(Turn(text, tools=tuple(offered) if held and index == 0 else None))
    if len(truth) != len(turns):
        raise ValueError(f"{len(truth)} ground-truth turns for {len(turns)} turns")
    graded = {
        "involved_classes": classes,
        "initial_config": entry.get("initial_config") or {},
        "long_context": "long_context" in category,
        "ground_truth": truth,
    }
    return Case(
        turns,
        tools=partial(_trial_tools, tuple(by_name.values()), graded),
        expect=[BfclTurn(i, graded) for i in range(len(turns))],
        id=entry["id"],
        tags=(category,),
        meta={**graded, "category": category, "missed_function": held},
    )


def load_multi(
    category: str, *, limit: int | None, folder: Path, kit: Kit
) -> list[Case]:
    """BFCL's cases of one multi-turn ``category`` (see the module doc)."""
    entries = list(kit.read(folder / f"{kit.prefix}{category}.json", limit))
    wanted = {e["id"] for e in entries}
    answers: dict[str, Any] = {}
    path = folder / "possible_answer" / f"{kit.prefix}{category}.json"
    for answer in kit.read(path, None):
        if answer["id"] in wanted:
            answers[answer["id"]] = answer["ground_truth"]
    missing = sorted(wanted - answers.keys())
    if missing:
        raise ValueError(f"{path}: no ground truth for {', '.join(missing[:5])}")
    docs: dict[str, list[dict[str, Any]]] = {}
    out = []
    for entry in entries:
        for owner in entry["involved_classes"]:
            if owner not in docs:
                docs[owner] = _documents(folder, owner, kit)
        try:
            out.append(_case(entry, category, answers[entry["id"]], docs, kit))
        except (KeyError, IndexError, TypeError, ValueError, SyntaxError) as exc:
            raise ValueError(
                f"BFCL case {entry.get('id')}: {type(exc).__name__}: {exc}"
            ) from None
    return out


def reference_turns(case: Case) -> list[list[tuple[str, dict[str, Any]]]]:
    """A multi-turn case's ground truth as calls a model would send.

    Positional arguments are named from the method's signature; for
    :func:`~dsh_nb.evals.convrun.play_turns` and responders that answer
    from the cases.
    """
    import inspect

    backend = _backend()
    params: dict[str, list[str]] = {}
    for owner in case.meta["involved_classes"]:
        module = importlib.import_module(backend.CLASS_FILE_PATH_MAPPING[owner])
        cls = getattr(module, owner)
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            params[name] = list(inspect.signature(fn).parameters)[1:]
    out = []
    for turn in case.meta["ground_truth"]:
        calls = []
        for text in turn:
            name, args, kwargs = parse_call(text)
            named = dict(zip(params.get(name, []), args, strict=False))
            calls.append((name, {**named, **kwargs}))
        out.append(calls)
    return out
