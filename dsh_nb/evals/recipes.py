"""Two ready practice models: ``oracle`` and ``noisy``.

:func:`oracle` answers each case's expectation: the calls it expects (or
text, for ``no_call()``), then a short text once the tools answered. It
finds the case by its prompt (the last user message), so a run of the same
cases passes every trial: a check that the harness, the tools and the
cases agree before a real model is paid for.

:func:`noisy` is the oracle with mistakes, drawn per trial at the rates
you choose: ``wrong_tool`` (another offered tool; for a case expecting no
call, a stray call), ``wrong_argument`` (one argument's value changed),
``invalid_json`` (arguments cut short) and ``no_call`` (text instead of
the calls). After a refused call it answers right, as a model that reads
the error would. The draws are seeded by the case and its trial's place,
so a run gives the same report at any concurrency; the true rates are
known, which is what a teacher wants to show a report finding.

Argument values come from the expectation: a literal as written, the
first of ``one_of``/``maybe``, a value of the tool's schema for ``ANY``
(the first ``enum`` value, else a placeholder of the type). A predicate
cannot be inverted: its argument gets a placeholder, which may fail it.
BFCL cases are answered from their possible answers (see
:func:`dsh_nb.evals.bfcl.reference_calls`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dsh_nb.evals.case import Case
from dsh_nb.evals.expect import (
    ExpectedCall,
    ExpectedCalls,
    Literal,
    OneOf,
)
from dsh_nb.evals.practice import PracticeModel, PracticeRequest

__all__ = ["noisy", "oracle"]

DONE: Final = "Done."
NO_TOOL: Final = "I can answer that without a tool."
_MISTAKES: Final = ("wrong_tool", "wrong_argument", "invalid_json", "no_call")


def _by_prompt(cases: Sequence[Case]) -> dict[str, Case]:
    if isinstance(cases, (Case, str)) or not isinstance(cases, Sequence):
        raise TypeError("a practice recipe takes the list of Case it will answer")
    out: dict[str, Case] = {}
    for index, case in enumerate(cases):
        if not isinstance(case, Case):
            raise TypeError(f"cases[{index}] is a {type(case).__name__}, not a Case")
        if getattr(case, "turns", None) is None:  # conversations: not answered
            out.setdefault(case.messages()[2], case)
    return out


def _placeholder(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return "example"
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _placeholder(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return {
        "integer": 1,
        "number": 1.0,
        "boolean": True,
        "array": [],
        "object": {},
        "null": None,
    }.get(str(kind), "example")


def _example(matcher: Any, schema: Any) -> tuple[bool, Any]:
    """(present, value) that ``matcher`` accepts, as far as it can be known."""
    if isinstance(matcher, Literal):
        return True, _filled(matcher.value, schema)
    if isinstance(matcher, OneOf):
        if matcher.alternatives:
            return _example(matcher.alternatives[0], schema)
        return False, None
    return True, _placeholder(schema)


def _filled(value: Any, schema: Any) -> Any:
    """A literal with the matchers nested in it replaced by examples."""
    props = schema.get("properties", {}) if isinstance(schema, Mapping) else {}
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if isinstance(item, (Literal, OneOf)) or hasattr(item, "matches"):
                present, made = _example(item, props.get(key))
                if present:
                    out[key] = made
            else:
                out[key] = _filled(item, props.get(key))
        return out
    if isinstance(value, (list, tuple)):
        items = schema.get("items") if isinstance(schema, Mapping) else None
        return [_filled(v, items) for v in value]
    if hasattr(value, "matches"):
        return _example(value, schema)[1]
    return value


def expected_calls(case: Case, request: PracticeRequest) -> list[tuple[str, Any]]:
    """The calls that answer ``case`` right, with example arguments."""
    if case.meta.get("ground_truth") is not None:
        from dsh_nb.evals.bfcl import reference_calls

        return [(c.name, dict(c.arguments)) for c in reference_calls(case)]
    expect = case.expect
    wanted: Sequence[ExpectedCall]
    if not isinstance(expect, (ExpectedCall, ExpectedCalls)):
        return []  # no_call(), or a conversation's checks
    wanted = expect.expected if isinstance(expect, ExpectedCalls) else (expect,)
    schemas = {t["name"]: t.get("parameters") or {} for t in request.tools}
    out = []
    for each in wanted:
        props = schemas.get(each.name, {}).get("properties", {})
        args = {}
        for key, matcher in each.args.items():
            present, value = _example(matcher, props.get(key))
            if present:
                args[key] = value
        out.append((each.name, args))
    return out


def oracle(cases: Sequence[Case], *, name: str = "oracle") -> PracticeModel:
    """A practice model that answers each case's expectation."""
    known = _by_prompt(cases)

    def answer(request: PracticeRequest) -> Any:
        case = known.get(request.prompt)
        if case is None or request.step > 1:
            return DONE if request.step > 1 else NO_TOOL
        return expected_calls(case, request) or NO_TOOL

    return PracticeModel(answer, name=name)


def _check_rates(rates: Mapping[str, float]) -> None:
    for key, value in rates.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{key} must be a rate between 0 and 1, not {value!r}")
        if not 0 <= value <= 1:
            raise ValueError(f"{key} must be between 0 and 1, not {value!r}")
    if sum(rates.values()) > 1 + 1e-9:
        raise ValueError(
            "the error rates add up to more than 1: "
            + ", ".join(f"{k}={v}" for k, v in rates.items())
        )


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + " (wrong)"
    if isinstance(value, list):
        return value[:-1] if value else ["wrong"]
    return "wrong"


def _mistake(kind: str, right: list[tuple[str, Any]], request: PracticeRequest) -> Any:
    names = request.tool_names
    schemas = {t["name"]: t.get("parameters") or {} for t in request.tools}
    if kind == "no_call":
        return NO_TOOL
    if kind == "wrong_tool":
        used = {n for n, _ in right}
        others = [n for n in names if n not in used]
        if not others:
            return [(n + "_other", a) for n, a in right] or NO_TOOL
        other = others[0]
        props = schemas.get(other, {}).get("properties", {})
        args = {k: _placeholder(v) for k, v in props.items()}
        return [(other, args), *right[1:]]
    if not right:  # a case expecting no call: the mistake is a stray call
        if not names or kind == "wrong_argument":
            return NO_TOOL
        props = schemas.get(names[0], {}).get("properties", {})
        args = {k: _placeholder(v) for k, v in props.items()}
        text = json.dumps(args)
        return [(names[0], text[:-1] if kind == "invalid_json" else args)]
    (first, args), rest = right[0], right[1:]
    if kind == "invalid_json":
        return [(first, json.dumps(args)[:-1]), *rest]
    args = dict(args)
    if args:
        key = next(iter(args))
        args[key] = _changed(args[key])
    else:
        args["unexpected"] = 1
    return [(first, args), *rest]


def noisy(
    cases: Sequence[Case],
    *,
    wrong_tool: float = 0.0,
    wrong_argument: float = 0.0,
    invalid_json: float = 0.0,
    no_call: float = 0.0,
    seed: int = 0,
    name: str = "noisy",
) -> PracticeModel:
    """A practice model that errs at the rates given (each between 0 and 1).

    A no-call case can only err by calling: ``wrong_tool`` and
    ``invalid_json`` make a stray call; the other two answer right.
    """
    rates = {
        "wrong_tool": wrong_tool,
        "wrong_argument": wrong_argument,
        "invalid_json": invalid_json,
        "no_call": no_call,
    }
    _check_rates(rates)
    known = _by_prompt(cases)
    asked: dict[str, int] = {}

    def draw(prompt: str) -> str | None:
        count = asked.get(prompt, 0)
        asked[prompt] = count + 1
        roll = random.Random(f"{seed}\x00{prompt}\x00{count}").random()
        edge = 0.0
        for kind in _MISTAKES:
            edge += rates[kind]
            if roll < edge:
                return kind
        return None

    def answer(request: PracticeRequest) -> Any:
        case = known.get(request.prompt)
        if case is None:
            return DONE if request.step > 1 else NO_TOOL
        right = expected_calls(case, request)
        if request.step > 1:
            errors = any(r.get("is_error") for r in request.results)
            return (right or DONE) if errors else DONE
        kind = draw(request.prompt)
        if kind is None:
            return right or NO_TOOL
        return _mistake(kind, right, request)

    return PracticeModel(answer, name=name)
