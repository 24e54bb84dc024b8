"""Conversations as cases: user turns, tools with state, what each turn must do.

A conversation case sends its user turns one after another to one ``Chat``;
each turn is sent once the model has finished the one before (it answered
in text, or reached ``max_steps`` for that turn). Its tools keep state (a
file system, a cart, a ticket queue), so a case names how to build them:
``tools=`` a factory, called once per trial, that returns a
:class:`~dsh_nb.tools.ToolRegistry`, an object whose public methods are the
tools (or a list of such objects), or a :class:`TrialTools` pairing a
registry with the state the checks read. Trials never share state, even
running concurrently.

What a conversation must do is checked three ways:

- per turn: ``call``, ``calls`` or ``no_call``, graded on the calls of that
  turn the pipeline accepted (over all its steps, so a model that fixed its
  arguments within the turn passes), ``None`` for a turn left unchecked, or
  any :class:`TurnCheck` (BFCL's per-turn state and response check is one);
- on the end state: ``end_state=`` a predicate over the state after the last
  turn (the factory's object, or a :class:`TurnCheck` such as
  :func:`same_state`);
- on the final answer: ``final=`` a predicate over the last reply's text.

The first expectation a trial breaks is its verdict: the turn, the
expectation, and why (:class:`Broken`).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from dsh_nb.evals.expect import (
    ActualCall,
    ExpectedCall,
    ExpectedCalls,
    NoCall,
    expected_names,
    grade,
)
from dsh_nb.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from dsh_nb.evals.trial import CallRecord

__all__ = [
    "Broken",
    "ConversationExpect",
    "TrialTools",
    "Turn",
    "TurnCheck",
    "TurnView",
    "final_answer",
    "same_state",
    "tools_of",
    "trial_state",
]

#: The state of the trial whose tool is running (tools built once and shared
#: by every trial read it here; a bound method needs nothing).
STATE: ContextVar[Any] = ContextVar("dsh_nb_eval_trial_state")


def trial_state() -> Any:
    """The running trial's state (its :class:`TrialTools` ``state``).

    For tools defined once and shared by trials (BFCL's): the body finds
    the trial's objects here. Outside a conversation trial it raises.
    """
    try:
        return STATE.get()
    except LookupError:
        raise RuntimeError(
            "no evaluation trial is running here: trial_state() is for the "
            "bodies of tools a conversation case builds"
        ) from None


@dataclass(frozen=True, slots=True)
class Turn:
    """One user turn; ``tools``: the tool names offered from this turn on.

    ``tools=None`` keeps what the turn before offered (every tool at the
    start). BFCL's ``miss_func`` turns add a held-back function this way.
    """

    text: str
    tools: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"a turn's text must be a str, not {self.text!r}")
        if self.tools is not None:
            names = tuple(self.tools)
            if isinstance(self.tools, str) or not all(
                isinstance(n, str) for n in names
            ):
                raise TypeError(f"Turn(tools=...) is a list of names, not {names!r}")
            object.__setattr__(self, "tools", names)


@dataclass(frozen=True, slots=True)
class TrialTools:
    """What one trial runs on: the registry, and the state checks read."""

    registry: ToolRegistry
    state: Any = None


def _methods(obj: object) -> list[Any]:
    from dsh_nb.tools.definition import tool

    out = []
    for name, method in inspect.getmembers(obj, inspect.ismethod):
        if not name.startswith("_"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # untyped parameters are strings
                out.append(tool(method))
    return out


def tools_of(made: object, where: str) -> TrialTools:
    """What a factory returned, as a trial's registry and state."""
    if isinstance(made, TrialTools):
        return made
    if isinstance(made, ToolRegistry):
        return TrialTools(made, made)
    objects = list(made) if isinstance(made, (list, tuple)) else [made] if made else []
    if not objects:
        raise TypeError(
            f"{where}: the tools factory returned {made!r}; return a "
            "ToolRegistry, an object whose methods are the tools, or a list "
            "of such objects"
        )
    registry = ToolRegistry()
    for obj in objects:
        for definition in _methods(obj):
            registry.register(definition)
    return TrialTools(registry, made)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnView:
    """What a check sees of a trial after turn ``turn`` (1-based)."""

    turn: int
    calls: tuple[CallRecord, ...]
    all_calls: tuple[tuple[CallRecord, ...], ...]
    text: str
    stop: str
    state: Any
    memo: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class TurnCheck(Protocol):
    """A check of one turn (or of the end): None when it holds, else why not."""

    def check(self, view: TurnView) -> str | None: ...

    def describe(self) -> str: ...


class _Calls:
    """``call``/``calls``/``no_call`` on the calls a turn's pipeline accepted."""

    def __init__(self, expect: ExpectedCall | ExpectedCalls | NoCall) -> None:
        self.expect = expect

    def graded(self, view: TurnView) -> tuple[bool, bool]:
        accepted = [
            ActualCall(c.name, c.arguments if isinstance(c.arguments, Mapping) else {})
            for c in view.calls
            if not c.refused
        ]
        g = grade(self.expect, accepted)
        return g.selected, g.args_correct

    def check(self, view: TurnView) -> str | None:
        selected, correct = self.graded(view)
        if selected and correct:
            return None
        made = ", ".join(f"{c.name}({_args(c.arguments)})" for c in view.calls)
        what = "the wrong tools" if not selected else "the wrong arguments"
        return f"called {what}: {made or 'no tool'}"

    def describe(self) -> str:
        return self.expect.describe()


def _args(arguments: object) -> str:
    if isinstance(arguments, Mapping):
        return ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return repr(arguments)


class _EndState:
    def __init__(self, predicate: Callable[[Any], object]) -> None:
        self.predicate = predicate

    def check(self, view: TurnView) -> str | None:
        try:
            ok = self.predicate(view.state)
        except Exception as exc:  # noqa: BLE001 - a raising predicate is a failure
            return f"the end-state predicate raised {type(exc).__name__}: {exc}"
        return None if ok else "the end state is not the expected one"

    def describe(self) -> str:
        name = getattr(self.predicate, "__qualname__", None) or repr(self.predicate)
        return f"end_state(<{name}>)"


class _Final:
    def __init__(self, predicate: Callable[[str], object]) -> None:
        self.predicate = predicate

    def check(self, view: TurnView) -> str | None:
        try:
            ok = self.predicate(view.text)
        except Exception as exc:  # noqa: BLE001 - a raising predicate is a failure
            return f"the final-answer predicate raised {type(exc).__name__}: {exc}"
        if ok:
            return None
        return f"the final answer does not hold: {view.text[:200]!r}"

    def describe(self) -> str:
        name = getattr(self.predicate, "__qualname__", None) or repr(self.predicate)
        return f"final_answer(<{name}>)"


def final_answer(predicate: Callable[[str], object]) -> TurnCheck:
    """The last reply's text must satisfy ``predicate``."""
    if not callable(predicate):
        raise TypeError(f"final_answer() takes a predicate, not {predicate!r}")
    return _Final(predicate)


@dataclass(frozen=True, slots=True)
class Broken:
    """Where a conversation went wrong: the turn (0 for the end), what, why."""

    turn: int
    expect: str
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "expect": self.expect, "why": self.why}

    def __str__(self) -> str:
        where = f"turn {self.turn}" if self.turn else "the end"
        return f"{where}: {self.expect}: {self.why}"


PerTurn = ExpectedCall | ExpectedCalls | NoCall | TurnCheck | None


@dataclass(frozen=True, slots=True)
class ConversationExpect:
    """What a conversation case expects: per turn, then at the end."""

    turns: tuple[TurnCheck | None, ...]
    end: tuple[TurnCheck, ...] = ()
    names: tuple[str, ...] = ()

    @classmethod
    def build(
        cls,
        n_turns: int,
        expect: Sequence[PerTurn] | TurnCheck | None,
        end_state: Callable[[Any], object] | TurnCheck | None,
        final: Callable[[str], object] | None,
    ) -> ConversationExpect:
        if expect is None:
            per: list[PerTurn] = [None] * n_turns
        elif isinstance(expect, (ExpectedCall, ExpectedCalls, NoCall)) or (
            isinstance(expect, TurnCheck) and not isinstance(expect, Sequence)
        ):
            raise TypeError(
                "a conversation's expect= is a list with one expectation a "
                f"turn ({n_turns} turns), or None; not {expect!r}"
            )
        else:
            per = list(expect)
        if len(per) != n_turns:
            raise ValueError(
                f"expect= has {len(per)} expectations for {n_turns} turns; "
                "give one a turn (None leaves a turn unchecked)"
            )
        checks: list[TurnCheck | None] = []
        names: list[str] = []
        for i, item in enumerate(per):
            if item is None:
                checks.append(None)
            elif isinstance(item, (ExpectedCall, ExpectedCalls, NoCall)):
                checks.append(_Calls(item))
                names.extend(expected_names(item))
            elif isinstance(item, TurnCheck):
                checks.append(item)
                names.extend(getattr(item, "names", ()))
            else:
                raise TypeError(
                    f"expect[{i}] must be call(...), calls(...), no_call(), a "
                    f"TurnCheck or None, not {type(item).__name__}"
                )
        end: list[TurnCheck] = []
        if end_state is not None:
            if isinstance(end_state, TurnCheck):
                end.append(end_state)
            elif callable(end_state):
                end.append(_EndState(end_state))
            else:
                raise TypeError(f"end_state= takes a predicate, not {end_state!r}")
        if final is not None:
            end.append(final_answer(final))
        return cls(tuple(checks), tuple(end), tuple(dict.fromkeys(names)))

    def describe(self) -> str:
        parts = [
            f"turn {i}: {c.describe()}"
            for i, c in enumerate(self.turns, 1)
            if c is not None
        ]
        parts += [c.describe() for c in self.end]
        return "; ".join(parts) or "(nothing checked)"

    def expected_names(self) -> tuple[str, ...]:
        return self.names


class _SameState:
    """The state a fresh copy reaches by running ``calls``, as BFCL compares."""

    def __init__(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        self.calls = [(str(n), dict(a)) for n, a in calls]

    def describe(self) -> str:
        inner = ", ".join(f"{n}({_args(a)})" for n, a in self.calls)
        return f"same_state([{inner}])"

    def check(self, view: TurnView) -> str | None:
        factory = view.memo.get("factory")
        if factory is None:
            return "same_state() needs the case's tools to be a factory"
        fresh = factory()
        objects = _objects(fresh)
        theirs = _objects(view.state)
        if objects is None or theirs is None or len(objects) != len(theirs):
            return "same_state() compares objects: the factory must return them"
        for name, args in self.calls:
            owner = next((o for o in objects if callable(getattr(o, name, None))), None)
            if owner is None:
                return f"same_state(): no object has a method {name!r}"
            getattr(owner, name)(**args)
        for mine, truth in zip(theirs, objects, strict=True):
            differ = [
                k
                for k in vars(truth)
                if not k.startswith("_") and getattr(mine, k, None) != getattr(truth, k)
            ]
            if differ:
                return (
                    f"{type(truth).__name__} differs from the expected state in: "
                    + ", ".join(differ)
                )
        return None


def _objects(state: object) -> list[Any] | None:
    if isinstance(state, (TrialTools, ToolRegistry)) or state is None:
        return None
    return list(state) if isinstance(state, (list, tuple)) else [state]


def same_state(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> TurnCheck:
    """End state: the state a fresh copy reaches by running ``calls``.

    ``calls`` are ``(method, arguments)`` pairs, run directly on the objects
    a fresh call of the case's factory returns; then every public attribute
    (not starting with ``_``) of each object must equal the trial's, as
    BFCL's multi-turn checker compares instances.
    """
    return _SameState(calls)
