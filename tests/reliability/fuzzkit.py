# mypy: disable-error-code="func-returns-value"
"""What the fuzz suites share: hostile values, strategies, oracles, a registry.

The suites (``test_fuzz_*.py``, issue 6 item 1) turn random specs
(``SchemaProp`` trees and plain-dict props) and random typed signatures into
real tools through ``define_tool`` and ``@tool``, run them in a registry
with listeners at every seam (pre-execute, approval, guards, execute
wrappers with a timeout policy, post-execute, result and trace observers),
and feed them random JSON and non-JSON arguments: NaN, -0.0, tuples, sets,
bytes, cycles, huge ints, deep nesting, non-str keys, dict and list
subclasses, objects that spoof ``__class__``, and objects whose
``__eq__``/``__str__``/``__hash__``/``__repr__`` raise.

Invariants checked on every example:

- ``execute`` never raises;
- every result is lossless JSON (``json.dumps`` then ``json.loads`` equals
  ``to_json()``, no NaN, no -0.0, no non-str keys) and deep-frozen (every
  nested dict/list is a FrozenDict/FrozenList whose mutation raises);
- each result and trace observer fires exactly once per call, on every path;
- ``validate_args`` is total, and a tool's own check (``define_tool``'s) agrees;
- every JSON Schema we emit is valid under the Draft 2020-12 meta-schema.

The number of examples comes from the hypothesis profile in
``tests/conftest.py``: bounded by default, 10,000 per test with ``--slow``.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import jsonschema
import pytest
from hypothesis import strategies as st
from jsonshapes import (
    DictSub,
    ListSub,
    Opaque,
    buried,
    cyclic_dict,
    cyclic_list,
    finite_floats,
    indirect_cycle,
    json_trees,
    nested,
)

from dsh_nb.tools import (
    AbortController,
    Agent,
    ApprovalService,
    FrozenDict,
    FrozenList,
    SchemaProp,
    TimeoutPolicy,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRegistry,
)

T = TypeVar("T")

ARGS_NOT_JSON = "Error: tool execution arguments must be losslessly JSON-serializable"
RESULT_NOT_JSON = "Error: tool result must be losslessly JSON-serializable"
INT_LIMIT = 10**4299  # ints with more digits are refused (jsonvalue._INT_LIMIT)
MAX_DEPTH = 256  # deepest accepted nesting (jsonvalue.MAX_DEPTH)
META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
TYPES = ("string", "number", "boolean", "object", "array")

_LOOPS: list[asyncio.AbstractEventLoop] = []


def close_loops() -> None:
    """Close the loop :func:`run` keeps; the suites' conftest calls it."""
    while _LOOPS:
        _LOOPS.pop().close()


def run(coro: Coroutine[Any, Any, T]) -> T:
    """One long-lived loop, as in a kernel; much cheaper than asyncio.run."""
    if not _LOOPS:
        _LOOPS.append(asyncio.new_event_loop())
    return _LOOPS[0].run_until_complete(coro)


def text(s: str) -> dict[str, Any]:
    return {"type": "text", "text": s}


# -- oracles ---------------------------------------------------------------------


def lossless(value: Any, depth: int = 0) -> bool:
    """Our own statement of lossless JSON (Appendix A.3), independent of the code."""
    t = type(value)
    if value is None or t is str or t is bool:
        return True
    if t is int:
        return bool(-INT_LIMIT < value < INT_LIMIT)
    if t is float:
        return math.isfinite(value) and not (
            value == 0.0 and math.copysign(1.0, value) < 0
        )
    if t is dict or t is list:
        if depth >= MAX_DEPTH:
            return False
        if t is dict:
            return all(
                type(k) is str and lossless(v, depth + 1) for k, v in value.items()
            )
        return all(lossless(v, depth + 1) for v in value)
    return False


def assert_strict_json(value: Any) -> None:
    """Only exact JSON types: no NaN, no -0.0, no subclass, str keys only."""
    stack = [value]
    while stack:
        item = stack.pop()
        t = type(item)
        if t is dict:
            assert all(type(k) is str for k in item)
            stack.extend(item.values())
        elif t is list:
            stack.extend(item)
        elif t is float:
            assert math.isfinite(item), item
            assert not (item == 0.0 and math.copysign(1.0, item) < 0), item
        else:
            assert item is None or t in (str, int, bool), t


def assert_lossless_json(result: ToolExecutionResult) -> dict[str, Any]:
    assert type(result) is ToolExecutionResult
    payload = result.to_json()
    encoded = json.dumps(payload, allow_nan=False, ensure_ascii=False)
    assert json.loads(encoded) == payload
    assert_strict_json(payload)
    assert type(result.is_error) is bool
    assert type(result.call_id) is str
    return payload


_DICT_MUTATIONS: tuple[Callable[[Any], object], ...] = (
    lambda d: d.__setitem__("__fuzz__", 1),
    lambda d: d.update({"__fuzz__": 1}),
    lambda d: d.clear(),
    lambda d: d.pop("__fuzz__", None),
    lambda d: d.setdefault("__fuzz__", 1),
    lambda d: d.popitem(),
)
_LIST_MUTATIONS: tuple[Callable[[Any], object], ...] = (
    lambda lst: lst.append(1),
    lambda lst: lst.extend([1]),
    lambda lst: lst.__setitem__(0, 1),
    lambda lst: lst.insert(0, 1),
    lambda lst: lst.clear(),
    lambda lst: lst.sort(),
    lambda lst: lst.reverse(),
    lambda lst: lst.pop(),
)


def assert_deep_frozen(value: Any) -> None:
    """Every nested container is Frozen*, and each refuses a mutation."""
    stack = [value]
    n = 0
    while stack:
        item = stack.pop()
        t = type(item)
        assert t is not dict and t is not list, f"a plain {t.__name__} leaked"
        if t is FrozenDict:
            before = dict(item)
            with pytest.raises(TypeError):
                _DICT_MUTATIONS[n % len(_DICT_MUTATIONS)](item)
            assert dict(item) == before
            stack.extend(item.values())
        elif t is FrozenList:
            before_list = list(item)
            with pytest.raises(TypeError):
                _LIST_MUTATIONS[n % len(_LIST_MUTATIONS)](item)
            assert list(item) == before_list
            stack.extend(item)
        n += 1


def assert_frozen_result(result: ToolExecutionResult) -> None:
    assert type(result.content) is FrozenList
    assert_deep_frozen(result.content)
    assert_deep_frozen(result.additional_context)
    assert_deep_frozen(result.meta)
    with pytest.raises(AttributeError):
        result.is_error = not result.is_error  # type: ignore[misc]


# -- hostile and non-JSON values -----------------------------------------------


class HostileEq:
    """Equality raises; hashable by identity so it can be a dict key."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile __eq__")

    __hash__ = object.__hash__


class HostileStr:
    """str() and repr() raise, as a value and as a dict key."""

    def __str__(self) -> str:
        raise RuntimeError("hostile __str__")

    __repr__ = __str__


class HostileRepr:
    """repr() and str() raise a BaseException: SystemExit, KeyboardInterrupt."""

    def __init__(self, exc: type[BaseException]) -> None:
        self.exc = exc

    def __repr__(self) -> str:
        raise self.exc()

    __str__ = __repr__


class HostileHash:
    def __hash__(self) -> int:
        raise RuntimeError("hostile __hash__")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile __eq__")


class HostileDict(dict):  # type: ignore[type-arg]
    """A dict subclass whose every read path raises."""

    def _boom(self, *args: object) -> Any:
        raise RuntimeError("hostile dict")

    items = keys = values = get = __iter__ = __getitem__ = __len__ = _boom


class HostileList(list):  # type: ignore[type-arg]
    def _boom(self, *args: object) -> Any:
        raise RuntimeError("hostile list")

    __iter__ = __getitem__ = __len__ = _boom


class SpoofDict:
    """isinstance(x, dict) is True through __class__; it is not a dict."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return dict


class SpoofStr:
    """isinstance(x, str) is True through __class__; it is not a str."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


class CollidingKey:
    """Hashes like "a" and refuses comparison: a dict lookup of "a" runs __eq__."""

    def __hash__(self) -> int:
        return hash("a")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile __eq__")


class EvilStr(str):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile str __eq__")

    __hash__ = str.__hash__


class EvilInt(int):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile int __eq__")

    __hash__ = int.__hash__


class EvilFloat(float):
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("hostile float __eq__")

    __hash__ = float.__hash__


def _power(exponent_and_sign: tuple[int, bool]) -> int:
    exponent, negative = exponent_and_sign
    power: int = 3**exponent
    return -power if negative else power


# 3**9000 has 4,295 digits: still JSON. 3**9020 has 4,304: refused.
big_json_ints = st.tuples(st.integers(0, 9000), st.booleans()).map(_power)
too_big_ints = st.tuples(st.integers(9020, 20_000), st.booleans()).map(_power)
# Any code point, lone surrogates included (hypothesis leaves them out by
# default): Python holds them, UTF-8 cannot encode them (issue 15 item 3).
any_text = st.text(st.characters(exclude_categories=()), max_size=8)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    big_json_ints,
    finite_floats,
    st.text(max_size=8),
    any_text,
)
json_values = json_trees(json_scalars, max_leaves=20)
# Keys that are not str, including one whose repr() raises.
bad_keys = st.one_of(
    st.builds(HostileStr),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.none(),
    st.booleans(),
    finite_floats,
    st.tuples(st.integers()),
    st.binary(max_size=3),
    st.builds(HostileEq),
)


def _evil_keys(keys: list[str]) -> dict[Any, Any]:
    return {EvilStr(k): None for k in keys}


# str subclasses with a raising __eq__ as keys: distinct texts, so distinct
# hashes (hypothesis itself compares keys when it draws a dictionary).
evil_key_dicts = st.lists(st.text(max_size=3), min_size=1, max_size=3, unique=True).map(
    _evil_keys
)
poison = st.one_of(
    evil_key_dicts,
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0]),
    too_big_ints,
    st.lists(json_scalars, max_size=3).map(tuple),
    st.sets(st.integers(), max_size=3),
    st.frozensets(st.text(max_size=2), max_size=3),
    st.binary(max_size=4),
    st.binary(max_size=4).map(bytearray),
    st.dictionaries(st.text(max_size=3), json_scalars, max_size=2).map(DictSub),
    st.lists(json_scalars, max_size=2).map(ListSub),
    st.builds(HostileDict),
    st.builds(HostileList),
    st.builds(HostileEq),
    st.builds(HostileStr),
    st.builds(HostileHash),
    st.builds(SpoofDict),
    st.builds(SpoofStr),
    st.builds(lambda: {CollidingKey(): 1}),
    st.builds(lambda s: EvilStr(s), st.text(max_size=3)),
    st.builds(lambda i: EvilInt(i), st.integers()),
    st.builds(lambda f: EvilFloat(f), finite_floats),
    st.builds(Opaque),
    st.just(len),
    st.just(int),
    st.dictionaries(bad_keys, json_scalars, min_size=1, max_size=2),
    st.builds(cyclic_dict),
    st.builds(cyclic_list),
    st.builds(indirect_cycle),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.datetimes(),
    st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False),
    st.builds(nested, st.integers(MAX_DEPTH, 3 * MAX_DEPTH), st.booleans()),
    st.builds(nested, st.just(10_000), st.booleans()),
    st.builds(
        HostileRepr, st.sampled_from([SystemExit, KeyboardInterrupt, RuntimeError])
    ),
)


non_json = buried(poison, json_values, max_leaves=5)
deep_json = st.builds(nested, st.integers(1, MAX_DEPTH - 2), st.booleans())
any_arguments = st.one_of(
    json_values,
    st.dictionaries(st.text(max_size=4), json_values, max_size=4),
    deep_json.map(lambda v: {"deep": v}),
    non_json,
)

# -- random specs ------------------------------------------------------------------


@st.composite
def props(draw: st.DrawFn, depth: int) -> Any:
    """A prop that define_tool accepts, as a SchemaProp or a plain dict."""
    kind = draw(st.sampled_from(TYPES))
    fields: dict[str, Any] = {"type": kind}
    if draw(st.booleans()):
        fields["required"] = draw(st.booleans())
    if draw(st.booleans()):
        fields["description"] = draw(st.text(max_size=8))
    if draw(st.integers(0, 3)) == 0:
        fields["enum"] = draw(st.lists(st.text(max_size=3), max_size=3, unique=True))
    if draw(st.integers(0, 3)) == 0:
        fields["default"] = draw(json_values)
    if depth > 0 and kind == "object" and draw(st.booleans()):
        fields["properties"] = draw(specs(depth - 1))
    if depth > 0 and kind == "array" and draw(st.booleans()):
        fields["items"] = draw(props(depth - 1))
    if draw(st.booleans()):
        return fields
    return SchemaProp(**fields)


def specs(depth: int = 2) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.text(max_size=5), props(depth), max_size=5)


def field(prop: Any, name: str) -> Any:
    if isinstance(prop, SchemaProp):
        value = getattr(prop, name)
        return None if name == "required" and value is False else value
    return prop.get(name)


def valid_value(prop: Any) -> st.SearchStrategy[Any]:
    """Values that satisfy ``prop`` (nothing() when none can)."""
    kind, enum_ = field(prop, "type"), field(prop, "enum")
    if kind in ("string", "number", "boolean") and enum_ is not None:
        strings = [m for m in enum_ if kind == "string"]
        return st.sampled_from(strings) if strings else st.nothing()
    if kind == "string":
        return st.text(max_size=6)
    if kind == "number":
        return st.one_of(st.integers(), finite_floats)
    if kind == "boolean":
        return st.booleans()
    if kind == "object":
        properties = field(prop, "properties")
        if properties is None:
            return st.dictionaries(st.text(max_size=3), json_values, max_size=3)
        return valid_args(properties)
    items = field(prop, "items")
    if items is None:
        return st.lists(json_values, max_size=3)
    item = valid_value(items)
    if item.is_empty:
        return st.just([])
    return st.lists(item, max_size=3)


def valid_args(spec: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    required = {k: valid_value(p) for k, p in spec.items() if field(p, "required")}
    optional = {
        k: v
        for k, p in spec.items()
        if not field(p, "required") and not (v := valid_value(p)).is_empty
    }
    return st.fixed_dictionaries(required, optional=optional)


def chaotic_value(
    prop: Any, noise: st.SearchStrategy[Any] | None = None
) -> st.SearchStrategy[Any]:
    noise = st.one_of(json_scalars, non_json) if noise is None else noise
    kind = field(prop, "type")
    if kind == "object" and field(prop, "properties") is not None:
        return st.one_of(noise, chaotic_args(field(prop, "properties"), noise))
    if kind == "array" and field(prop, "items") is not None:
        return st.one_of(
            noise, st.lists(chaotic_value(field(prop, "items"), noise), max_size=3)
        )
    return st.one_of(noise, valid_value(prop))


def chaotic_args(
    spec: dict[str, Any], noise: st.SearchStrategy[Any] | None = None
) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {}, optional={k: chaotic_value(p, noise) for k, p in spec.items()}
    )


def enum_on_containers(spec: dict[str, Any]) -> bool:
    """The converter emits enum on object/array props; the validator ignores it."""
    for prop in spec.values():
        kind = field(prop, "type")
        if kind in ("object", "array") and field(prop, "enum") is not None:
            return True
        properties, items = field(prop, "properties"), field(prop, "items")
        if kind == "object" and properties is not None:
            if enum_on_containers(properties):
                return True
        if kind == "array" and items is not None and enum_on_containers({"": items}):
            return True
    return False


# -- the registry: listeners of every seam ---------------------------------------


class Counters:
    """How often each seam saw a call, by call id."""

    def __init__(self) -> None:
        self.result: list[tuple[Any, ToolExecutionResult]] = []
        self.scoped_result: list[ToolExecutionResult] = []
        self.trace: list[tuple[Any, ToolExecutionResult, tuple[Any, ...]]] = []
        self.pre = 0
        self.post = 0


def instrumented(agent: Agent) -> tuple[ToolRegistry, Counters]:
    """A registry with pass-through listeners at every seam, global and scoped."""
    registry = ToolRegistry()
    registry.approval = ApprovalService()
    counters = Counters()

    def pre_sync(execution: Any, next_: Any) -> Any:
        counters.pre += 1
        return next_()

    async def pre_async(execution: Any, next_: Any) -> Any:
        return await next_()

    async def wrapper(execution: Any, next_: Any) -> Any:
        return await next_()

    def post(execution: Any, result: Any, next_: Any) -> Any:
        counters.post += 1
        assert type(result.content) is FrozenList
        return next_()

    registry.on_pre_execute(pre_sync)
    registry.on_pre_execute(pre_async, scope=agent)
    registry.guard(lambda execution: None)
    registry.guard(lambda execution: None, scope=agent)
    TimeoutPolicy(default_timeout_ms=60_000).install(registry)
    registry.on_execute(wrapper, scope=agent)
    registry.on_post_execute(post)
    registry.on_post_execute(lambda e, r, n: n(), scope=agent)
    registry.on_result(lambda e, r: counters.result.append((e, r)))
    registry.on_result(lambda e, r: counters.scoped_result.append(r), scope=agent)
    registry.on_trace(lambda e, r, records: counters.trace.append((e, r, records)))
    return registry, counters


def assert_observed_once(
    counters: Counters, result: ToolExecutionResult, call_id: str
) -> None:
    assert len(counters.result) == 1
    execution, seen = counters.result[0]
    assert seen is result
    assert execution.call_id == call_id
    assert counters.scoped_result == [result]
    assert len(counters.trace) == 1
    assert counters.trace[0][1] is result
    with pytest.raises(AttributeError):
        execution.signal = None


def assert_meta_valid(schema: Any) -> None:
    META.validate(schema)
    assert json.loads(json.dumps(schema, allow_nan=False)) == schema


def call(
    registry: ToolRegistry,
    name: str,
    arguments: Any,
    agent: Agent | None,
    with_signal: bool = False,
    call_id: str = "c1",
) -> ToolExecutionResult:
    signal = AbortController().signal if with_signal else None
    return run(
        registry.execute(
            ToolExecutionInput(
                call_id=call_id,
                name=name,
                arguments=arguments,
                agent=agent,
                signal=signal,
            )
        )
    )
