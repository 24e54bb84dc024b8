"""What a model should do with its tools, and grading what it did.

An expectation is data (``call``, ``calls``, ``no_call``) so a suite can be
written once, saved in a notebook cell and graded against any run: the
harness turns the first step's tool calls into ``ActualCall`` objects and
``grade`` says whether the right tools were chosen and with the right
arguments. Grading is pure and fast (a benchmark grades BFCL's 400
``simple_python`` answers), so a report can be re-graded from a recording.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ANY",
    "ActualCall",
    "ArgMatcher",
    "ExpectedCall",
    "ExpectedCalls",
    "Expectation",
    "Grade",
    "NoCall",
    "call",
    "calls",
    "expected_names",
    "grade",
    "maybe",
    "no_call",
    "one_of",
]


@runtime_checkable
class ArgMatcher(Protocol):
    """Says whether one argument is acceptable; ``present`` is False when absent."""

    def matches(self, present: bool, value: object) -> bool: ...

    def describe(self) -> str: ...


def same_json(expected: object, actual: object) -> bool:
    """JSON equality: ``True`` is not ``1``; ``1`` equals ``1.0``; tuples are arrays.

    Matchers nested in a literal (``{"x": ANY}``) apply at their place, so a
    literal dict may leave one field open.
    """
    if isinstance(expected, _Matcher):
        return expected.matches(True, actual)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, float) and math.isnan(expected):
            return isinstance(actual, float) and math.isnan(actual)
        return expected == actual
    if isinstance(expected, str) or isinstance(actual, str):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return False
        if any(key not in expected for key in actual):
            return False
        for key, want in expected.items():
            if isinstance(want, _Matcher):
                if not want.matches(key in actual, actual.get(key)):
                    return False
            elif key not in actual or not same_json(want, actual[key]):
                return False
        return True
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            return False
        return all(same_json(w, a) for w, a in zip(expected, actual, strict=True))
    return bool(expected == actual)


class _Matcher:
    """Base of the built-in matchers (so nested literals can spot them)."""

    __slots__ = ()

    def matches(self, present: bool, value: object) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.describe()


class _Any(_Matcher):
    __slots__ = ()

    def matches(self, present: bool, value: object) -> bool:
        return present

    def describe(self) -> str:
        return "ANY"


ANY: ArgMatcher = _Any()
"""The argument must be present; any value."""


class Literal(_Matcher):
    """The argument must be present and equal (as JSON) to ``value``."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def matches(self, present: bool, value: object) -> bool:
        return present and same_json(self.value, value)

    def describe(self) -> str:
        return repr(self.value)


class Predicate(_Matcher):
    """The argument must be present and ``fn(value)`` truthy; a raise is no match."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any], object]) -> None:
        self.fn = fn

    def matches(self, present: bool, value: object) -> bool:
        if not present:
            return False
        try:
            return bool(self.fn(value))
        except Exception:  # noqa: BLE001  # a broken predicate is no match, not a crash
            return False

    def describe(self) -> str:
        name = getattr(self.fn, "__qualname__", None) or repr(self.fn)
        return f"<{name}>"


class OneOf(_Matcher):
    """Present and matching one of the alternatives (or absent, if ``optional``)."""

    __slots__ = ("alternatives", "optional")

    def __init__(self, alternatives: tuple[ArgMatcher, ...], optional: bool) -> None:
        self.alternatives = alternatives
        self.optional = optional

    def matches(self, present: bool, value: object) -> bool:
        if not present:
            return self.optional
        if self.optional and not self.alternatives:
            return True
        return any(m.matches(True, value) for m in self.alternatives)

    def describe(self) -> str:
        inner = ", ".join(m.describe() for m in self.alternatives)
        return f"{'maybe' if self.optional else 'one_of'}({inner})"


def matcher(value: object) -> ArgMatcher:
    """An argument's matcher: matchers as they are, callables as predicates,
    anything else a literal."""
    if isinstance(value, _Matcher):
        return value
    # ArgMatcher's own check, without typing's slow runtime-protocol walk.
    if not isinstance(value, type) and all(
        callable(getattr(value, attr, None)) for attr in ("matches", "describe")
    ):
        return value  # type: ignore[return-value]
    if callable(value):
        return Predicate(value)
    return Literal(value)


def one_of(*values: object) -> ArgMatcher:
    """Present and equal to (or matching) one of ``values``."""
    if not values:
        raise ValueError("one_of() needs at least one value")
    return OneOf(tuple(matcher(v) for v in values), optional=False)


def maybe(*values: object) -> ArgMatcher:
    """Absent, or one of ``values``; ``maybe()`` alone: absent or anything.

    ``maybe()`` matters under ``extra_args=False``, where an argument not
    named would fail.
    """
    return OneOf(tuple(matcher(v) for v in values), optional=True)


@dataclass(frozen=True, slots=True)
class ActualCall:
    """One tool call the model made: its wire name and its decoded arguments."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ExpectedCall:
    """One expected call; arguments not in ``args`` are free unless
    ``extra_args`` is False."""

    name: str
    args: Mapping[str, ArgMatcher] = field(default_factory=dict)
    extra_args: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a call needs a non-empty tool name, not {self.name!r}")
        frozen = MappingProxyType({str(k): matcher(v) for k, v in self.args.items()})
        object.__setattr__(self, "args", frozen)

    def matches(self, actual: ActualCall) -> bool:
        """Same name, and every argument acceptable."""
        if actual.name != self.name:
            return False
        given = actual.arguments
        if not isinstance(given, Mapping):
            return False
        for key, want in self.args.items():
            present = key in given
            if not want.matches(present, given[key] if present else None):
                return False
        return self.extra_args or all(key in self.args for key in given)

    def describe(self) -> str:
        inner = ", ".join(f"{k}={m.describe()}" for k, m in self.args.items())
        return f"{self.name}({inner})"


@dataclass(frozen=True, slots=True)
class ExpectedCalls:
    """Several calls in one step, in any order unless ``ordered``."""

    expected: tuple[ExpectedCall, ...]
    ordered: bool = False

    def __post_init__(self) -> None:
        items = tuple(self.expected)
        if not items:
            raise ValueError("calls() needs at least one call; use no_call()")
        for item in items:
            if not isinstance(item, ExpectedCall):
                raise TypeError(
                    f"calls() takes call(...) expectations, not {type(item).__name__}"
                )
        object.__setattr__(self, "expected", items)

    def describe(self) -> str:
        inner = ", ".join(e.describe() for e in self.expected)
        return f"calls({inner}{', ordered=True' if self.ordered else ''})"


@dataclass(frozen=True, slots=True)
class NoCall:
    """The model should answer without calling a tool."""

    def describe(self) -> str:
        return "no_call()"


Expectation = ExpectedCall | ExpectedCalls | NoCall


def call(name: str, /, **args: object) -> ExpectedCall:
    """One expected call of ``name``; each argument a literal, ``one_of``,
    ``maybe``, ``ANY`` or a predicate."""
    return ExpectedCall(name, args)  # type: ignore[arg-type]  # normalised


def calls(*expected: ExpectedCall, ordered: bool = False) -> ExpectedCalls:
    """Several expected calls in one step (parallel or multiple functions)."""
    return ExpectedCalls(expected, ordered=ordered)


def no_call() -> NoCall:
    """The model should not call any tool."""
    return NoCall()


@dataclass(frozen=True, slots=True)
class Grade:
    """``selected``: the right tools were called; ``args_correct``: and with
    acceptable arguments, one actual call per expected call."""

    selected: bool
    args_correct: bool

    @property
    def passed(self) -> bool:
        return self.selected and self.args_correct


def expected_names(expect: Expectation | Any) -> tuple[str, ...]:
    """The tool names an expectation calls for, in its order (for by-tool reports)."""
    names = getattr(expect, "expected_names", None)
    if callable(names):  # a conversation's, over its turns
        return tuple(names())
    if isinstance(expect, ExpectedCall):
        return (expect.name,)
    if isinstance(expect, ExpectedCalls):
        return tuple(e.name for e in expect.expected)
    if isinstance(expect, NoCall):
        return ()
    raise TypeError(f"not an expectation: {type(expect).__name__}")


def grade(expect: Expectation, actual: Sequence[ActualCall]) -> Grade:
    """Grade one step's calls against an expectation."""
    if isinstance(expect, NoCall):
        ok = len(actual) == 0
        return Grade(ok, ok)
    if isinstance(expect, ExpectedCall):
        wanted: tuple[ExpectedCall, ...] = (expect,)
        ordered = False
    elif isinstance(expect, ExpectedCalls):
        wanted, ordered = expect.expected, expect.ordered
    else:
        raise TypeError(f"not an expectation: {type(expect).__name__}")
    names = [a.name for a in actual]
    want_names = [e.name for e in wanted]
    if ordered:
        selected = names == want_names
    else:
        selected = Counter(names) == Counter(want_names)
    if not selected:
        return Grade(False, False)
    if ordered:
        return Grade(
            True, all(e.matches(a) for e, a in zip(wanted, actual, strict=True))
        )
    return Grade(True, _perfect_matching(wanted, actual))


def _perfect_matching(
    wanted: Sequence[ExpectedCall], actual: Sequence[ActualCall]
) -> bool:
    """Whether every expected call can take its own actual call (Kuhn's
    augmenting paths: a greedy pairing fails when one actual call fits two
    expectations)."""
    fits = [[j for j, a in enumerate(actual) if e.matches(a)] for e in wanted]
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    return all(place(i, set()) for i in range(len(wanted)))
