"""BFCL's AST checker's rules for one parameter, as an ``ArgMatcher``.

A BFCL score is only comparable with the leaderboard's if a call passes
here exactly when it passes there, quirks included, so this follows the
published checker (``bfcl_eval/eval_checker/ast_eval/ast_checker.py``) rule
by rule for Python-language categories:

- a required parameter must be present; an absent optional one passes only
  when ``""`` is among its acceptable values;
- the value's Python type must be the declared one (an ``int`` is first
  widened where a ``float`` is declared, never the reverse; ``True`` is not
  an ``int``), or the type of the first acceptable value: BFCL's way of
  accepting a variable name written as a string;
- array items are type-checked one level deep against each acceptable list;
- strings, strings inside lists and string values inside dicts are compared
  after :func:`standardize` (no spaces or ``,./-_*^``, lower case, ``'`` as
  ``"``); dicts are checked key by key (``{key: [acceptable values]}``),
  nested values literally; lists of dicts dict by dict, in order;
- everything else must be one of the acceptable values (Python equality).

Where the published checker would raise on malformed data (an acceptable
value of the wrong shape), this matcher answers no match.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["PYTHON_TYPES", "BfclArg", "BfclNever", "standardize"]

PYTHON_TYPES: Final[Mapping[str, type]] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
_NESTED: Final = ("array", "tuple")
_STRIP: Final = re.compile(r"[ ,./\-_*^]")


def standardize(text: str) -> str:
    """BFCL's string normalisation, so ``"April 1, 2024"`` equals ``"april 1 2024"``."""
    return _STRIP.sub("", text).lower().replace("'", '"')


def _std(value: object) -> object:
    return standardize(value) if type(value) is str else value


def _plain(value: object) -> object:
    """JSON as ``json.loads`` gives it (the pipeline hands over frozen copies)."""
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _first_type(values: Sequence[Any]) -> type | None:
    for value in values:
        if value != "":
            return type(value)
    return None


def _contains(container: object, item: object) -> bool:
    try:
        return item in container  # type: ignore[operator]
    except TypeError:
        return False


class _DictAnswer:
    """One acceptable dict, its string values standardised once."""

    __slots__ = ("needed", "values")

    def __init__(self, answer: Mapping[str, Any]) -> None:
        self.values: dict[str, list[object]] = {}
        for key, acceptable in answer.items():
            try:
                self.values[key] = [_std(v) for v in acceptable]
            except TypeError:  # not a list of values: nothing can match
                self.values[key] = []
        self.needed = tuple(k for k, v in answer.items() if not _contains(v, ""))

    def accepts(self, value: Mapping[str, Any]) -> bool:
        for key, item in value.items():
            allowed = self.values.get(key)
            if allowed is None or _std(item) not in allowed:
                return False
        return all(key in value for key in self.needed)


class BfclArg:
    """One parameter of one expected BFCL call."""

    __slots__ = (
        "_ready",
        "answer_type",
        "answers",
        "dict_answers",
        "expected",
        "in_doc",
        "item_answers",
        "kind",
        "list_dict_answers",
        "nested",
        "optional",
        "required",
        "std_lists",
        "std_strings",
        "variable_answer",
    )

    def __init__(
        self,
        kind: str,
        answers: Sequence[Any],
        *,
        required: bool,
        items_kind: str | None = None,
        in_doc: bool = True,
    ) -> None:
        self.kind = kind
        self.answers = list(answers)
        self.required = required
        self.in_doc = in_doc
        self.optional = "" in self.answers
        if in_doc and kind not in PYTHON_TYPES:
            raise ValueError(f"BFCL parameter type {kind!r} is not supported")
        self.expected: type = PYTHON_TYPES[kind] if in_doc else object
        self.nested: type | None = None
        if in_doc and kind in _NESTED:
            self.nested = PYTHON_TYPES.get(items_kind or "")
            if self.nested is None:
                raise ValueError(
                    f"BFCL array item type {items_kind!r} is not supported"
                )
        self._ready = False  # the rest is made when first matched: a load
        # builds thousands of these, a run matches a few

    def _prepare(self) -> None:
        self._ready = True
        self.answer_type = _first_type(self.answers)
        self.variable_answer = (
            self.answer_type is not None and self.answer_type is not self.expected
        )
        # The nested type check: per acceptable value, None (not a list: the
        # check passes) or the type of its first item.
        self.item_answers = [
            (True, _first_type(a)) if type(a) is list else (False, None)
            for a in self.answers
        ]
        self.std_strings = frozenset(
            standardize(a) for a in self.answers if type(a) is str
        )
        self.std_lists = [
            [_std(x) for x in a] for a in self.answers if type(a) in (list, str)
        ]
        self.dict_answers = [
            _DictAnswer(a) for a in self.answers if isinstance(a, Mapping)
        ]
        self.list_dict_answers: list[list[_DictAnswer | None]] = [
            [_DictAnswer(d) if isinstance(d, Mapping) else None for d in a]
            for a in self.answers
            if type(a) is list or a == ""
        ]

    def matches(self, present: bool, value: object) -> bool:
        if not present:
            return not self.required and self.optional
        if not self.in_doc:
            return False
        if not self._ready:
            self._prepare()
        value = _plain(value)
        if self.kind == "float" and type(value) is int:
            value = float(value)
        t = type(value)
        if t is self.expected:
            variable = self.variable_answer
            if self.nested is not None and not self._items_ok(value):
                return False
        elif self.answer_type is not None and t is self.answer_type:
            variable = True
        else:
            return False
        if not variable:
            if self.expected is dict:
                return any(a.accepts(value) for a in self.dict_answers)  # type: ignore[arg-type]
            if self.expected is list and self.nested is dict:
                return self._list_of_dicts_ok(value)  # type: ignore[arg-type]
            if self.expected is str:
                return standardize(value) in self.std_strings  # type: ignore[arg-type]
            if self.expected is list:
                return [_std(x) for x in value] in self.std_lists  # type: ignore[attr-defined]
        return value in self.answers

    def _items_ok(self, value: Any) -> bool:
        nested = self.nested
        for is_list, item_type in self.item_answers:
            if not is_list:
                return True
            if all(
                type(v) is nested or (item_type is not None and type(v) is item_type)
                for v in value
            ):
                return True
        return False

    def _list_of_dicts_ok(self, value: list[Any]) -> bool:
        for answer in self.list_dict_answers:
            if len(answer) != len(value):
                continue
            if all(
                a is not None and isinstance(v, dict) and a.accepts(v)
                for a, v in zip(answer, value, strict=True)
            ):
                return True
        return False

    def describe(self) -> str:
        if not self.in_doc:
            return "absent (not in the function's document)"
        shown = [a for a in self.answers if a != ""]
        text = f"{self.kind} in {shown!r}"
        if self.optional and not self.required:
            text += " or absent"
        return text

    def __repr__(self) -> str:
        return f"BfclArg({self.describe()})"


class BfclNever:
    """A required parameter BFCL's answer leaves out: no call can pass (BFCL
    fails it when absent as missing, when present as unexpected)."""

    __slots__ = ()

    def matches(self, present: bool, value: object) -> bool:
        return False

    def describe(self) -> str:
        return "required, but not in BFCL's answer (no call passes)"

    def __repr__(self) -> str:
        return f"BfclNever({self.describe()})"
