# mypy: disable-error-code="func-returns-value"
"""End-to-end fuzz of the core pipeline (issue 6, item 1).

Random specs (``SchemaProp`` trees and plain-dict props) and random typed
signatures become real tools through ``define_tool`` and ``@tool``; they run
in a registry with listeners at every seam (pre-execute, approval, guards,
execute wrappers with a timeout policy, post-execute, result and trace
observers), fed with random JSON and non-JSON arguments: NaN, -0.0, tuples,
sets, bytes, cycles, huge ints, deep nesting, non-str keys, dict and list
subclasses, and objects whose ``__eq__``/``__str__``/``__hash__`` raise.

Invariants checked on every example:

- ``execute`` never raises;
- every result is lossless JSON (``json.dumps`` then ``json.loads`` equals
  ``to_json()``, no NaN, no -0.0, no non-str keys) and deep-frozen (every
  nested dict/list is a FrozenDict/FrozenList whose mutation raises);
- each result and trace observer fires exactly once per call, on every path;
- ``validate_args`` (and its compiled twin) is total and they agree;
- every JSON Schema we emit is valid under the Draft 2020-12 meta-schema.

The number of examples comes from the hypothesis profile in
``tests/conftest.py``: bounded by default, 10,000 per test with ``--slow``.
Inputs that broke an implementation once are pinned by the named tests at
the end as well as drawn by the properties.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
import json
import math
from collections.abc import Callable, Coroutine, Iterator
from typing import Annotated, Any, Literal, TypedDict, TypeVar

import jsonschema
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from dsh_nb.tools import (
    AbortController,
    Accept,
    Agent,
    Allow,
    ApprovalService,
    Ask,
    Block,
    Deny,
    FrozenDict,
    FrozenList,
    HarnessError,
    SchemaProp,
    TimeoutPolicy,
    ToolDefinition,
    ToolDefinitionError,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRegistry,
    define_tool,
    schema_spec_to_json_schema,
    tool,
    validate_args,
)
from dsh_nb.tools.schema import compile_validator

T = TypeVar("T")

ARGS_NOT_JSON = "Error: tool execution arguments must be losslessly JSON-serializable"
RESULT_NOT_JSON = "Error: tool result must be losslessly JSON-serializable"
INT_LIMIT = 10**4299  # ints with more digits are refused (jsonvalue._INT_LIMIT)
MAX_DEPTH = 256  # deepest accepted nesting (jsonvalue.MAX_DEPTH)
META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
TYPES = ("string", "number", "boolean", "object", "array")

_LOOPS: list[asyncio.AbstractEventLoop] = []


@pytest.fixture(scope="module", autouse=True)
def _close_loop() -> Iterator[None]:
    yield
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


class DictSub(dict):  # type: ignore[type-arg]
    pass


class ListSub(list):  # type: ignore[type-arg]
    pass


class Opaque:
    pass


def _cyclic_dict() -> Any:
    d: dict[str, Any] = {"a": 1}
    d["self"] = d
    return d


def _cyclic_list() -> Any:
    lst: list[Any] = [1]
    lst.append(lst)
    return lst


def _indirect_cycle() -> Any:
    inner: list[Any] = []
    outer = {"inner": inner}
    inner.append(outer)
    return {"root": outer}


def _nest(depth: int, as_dict: bool) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


def _not_negative_zero(f: float) -> bool:
    return not (f == 0.0 and math.copysign(1.0, f) < 0)


def _power(exponent_and_sign: tuple[int, bool]) -> int:
    exponent, negative = exponent_and_sign
    power: int = 3**exponent
    return -power if negative else power


finite_floats = st.floats(allow_nan=False, allow_infinity=False).filter(
    _not_negative_zero
)
# 3**9000 has 4,295 digits: still JSON. 3**9020 has 4,304: refused.
big_json_ints = st.tuples(st.integers(0, 9000), st.booleans()).map(_power)
too_big_ints = st.tuples(st.integers(9020, 20_000), st.booleans()).map(_power)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    big_json_ints,
    finite_floats,
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=6), children, max_size=4),
    ),
    max_leaves=20,
)
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
poison_without_evil_keys = st.one_of(
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
    st.builds(_cyclic_dict),
    st.builds(_cyclic_list),
    st.builds(_indirect_cycle),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.datetimes(),
    st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False),
    st.builds(_nest, st.integers(MAX_DEPTH, 3 * MAX_DEPTH), st.booleans()),
)


poison = st.one_of(poison_without_evil_keys, evil_key_dicts)


def _insert(t: tuple[Any, list[Any], int]) -> list[Any]:
    bad, items, at = t
    items = list(items)
    items.insert(min(at, len(items)), bad)
    return items


def _embed(t: tuple[str, Any, dict[str, Any]]) -> dict[str, Any]:
    key, bad, rest = t
    return {**rest, key: bad}


def _non_json(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Non-JSON leaves, alone or buried in otherwise fine lists and dicts."""
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.tuples(
                children, st.lists(json_values, max_size=3), st.integers(0, 3)
            ).map(_insert),
            st.tuples(
                st.text(max_size=4),
                children,
                st.dictionaries(st.text(max_size=4), json_values, max_size=3),
            ).map(_embed),
        ),
        max_leaves=5,
    )


non_json = _non_json(poison)
# validate_args cannot survive a str-subclass key equal to a spec key (see
# test_validate_args_is_total_for_a_key_colliding_with_a_spec_key).
non_json_for_validation = _non_json(poison_without_evil_keys)
deep_json = st.builds(_nest, st.integers(1, MAX_DEPTH - 2), st.booleans())
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


# -- 1. random specs through define_tool, every seam, exact expectations ---------


@given(data=st.data(), spec=specs(), with_signal=st.booleans())
def test_spec_tools_never_raise_and_agree_with_validate_args(
    data: st.DataObject, spec: dict[str, Any], with_signal: bool
) -> None:
    seen: list[Any] = []

    def echo(args: Any) -> Any:
        seen.append(args)
        return {"content": [text("ok")], "meta": args}

    definition = define_tool(
        name="fuzzed", description="fuzz", parameters=spec, execute=echo
    )
    assert_meta_valid(definition.parameters)
    assert definition.parameters == schema_spec_to_json_schema(spec)
    agent = Agent("fuzz")
    registry, counters = instrumented(agent)
    registry.register(definition)
    for entry in registry.schemas():
        assert_meta_valid(entry["parameters"])

    arguments = data.draw(
        st.one_of(valid_args(spec), chaotic_args(spec), any_arguments),
        label="arguments",
    )
    result = call(registry, "fuzzed", arguments, agent, with_signal)

    payload = assert_lossless_json(result)
    assert_frozen_result(result)
    assert_observed_once(counters, result, "c1")
    assert result.call_id == "c1"
    if not lossless(arguments):
        event("arguments: not JSON")
        assert payload == {
            "callId": "c1",
            "content": [text(ARGS_NOT_JSON)],
            "isError": True,
        }
        assert counters.pre == counters.post == 0
        assert seen == []
        return
    violations = validate_args(spec, arguments)
    event("arguments: " + ("invalid" if violations else "valid"))
    assert compile_validator(spec)(arguments) == violations
    if isinstance(arguments, dict) and not enum_on_containers(spec):
        assert (not violations) == META.evolve(schema=definition.parameters).is_valid(
            arguments
        )
    if violations:
        assert payload == {
            "callId": "c1",
            "content": [text("Error: invalid arguments: " + "; ".join(violations))],
            "isError": True,
            "error": {"name": "ToolArgsError", "code": "INVALID_ARGS"},
        }
        assert seen == []
    else:
        assert payload == {
            "callId": "c1",
            "content": [text("ok")],
            "isError": False,
            "meta": arguments,
        }
        assert seen == [arguments]
        assert seen[0] is not arguments
        assert_deep_frozen(seen[0])
    assert counters.pre == counters.post == 1


# -- 2. random typed signatures through @tool ----------------------------------------


@dataclasses.dataclass(frozen=True)
class Shape:
    """An annotation, how to make values it accepts, and how to check the bound one."""

    annotation: Any
    values: st.SearchStrategy[Any]
    check: Callable[[Any], bool]
    optional: bool = False


_names = iter(range(10**9))


def _fresh(prefix: str) -> str:
    return f"{prefix}{next(_names)}"


_LEAVES: tuple[Callable[[st.DrawFn], Shape], ...] = (
    lambda draw: Shape(str, st.text(max_size=5), lambda v: type(v) is str),
    lambda draw: Shape(int, st.integers(-(2**60), 2**60), lambda v: type(v) is int),
    lambda draw: Shape(
        float,
        st.one_of(finite_floats, st.integers(-100, 100)),
        lambda v: type(v) in (int, float),
    ),
    lambda draw: Shape(bool, st.booleans(), lambda v: type(v) is bool),
    lambda draw: Shape(
        list, st.lists(json_values, max_size=3), lambda v: isinstance(v, list)
    ),
    lambda draw: Shape(
        dict[str, Any],
        st.dictionaries(st.text(max_size=3), json_values, max_size=3),
        lambda v: isinstance(v, dict),
    ),
)


def _literal(draw: st.DrawFn) -> Shape:
    members = tuple(
        draw(st.lists(st.text(max_size=3), min_size=1, max_size=3, unique=True))
    )
    return Shape(Literal[members], st.sampled_from(members), lambda v: v in members)


def _enum(draw: st.DrawFn) -> Shape:
    values = draw(st.lists(st.text(max_size=3), min_size=1, max_size=3, unique=True))
    cls = enum.Enum(_fresh("E"), {f"M{i}": v for i, v in enumerate(values)})  # type: ignore[misc]
    return Shape(cls, st.sampled_from(values), lambda v: isinstance(v, cls))


def _all_of(
    kind: type, check: Callable[[Any], bool], items: Callable[[Any], Any]
) -> Callable[[Any], bool]:
    def check_all(v: Any) -> bool:
        return isinstance(v, kind) and all(check(x) for x in items(v))

    return check_all


def _or_none(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def check_optional(v: Any) -> bool:
        return v is None or check(v)

    return check_optional


@st.composite
def shapes(draw: st.DrawFn, depth: int, allow_optional: bool = True) -> Shape:
    choice = draw(st.integers(0, 11 if depth > 0 else 7))
    if choice < len(_LEAVES):
        shape = _LEAVES[choice](draw)
    elif choice == 6:
        shape = _literal(draw)
    elif choice == 7:
        shape = _enum(draw)
    elif choice == 8:
        item = draw(shapes(depth - 1, allow_optional=False))
        shape = Shape(
            list[item.annotation],  # type: ignore[name-defined]
            st.lists(item.values, max_size=3),
            _all_of(list, item.check, lambda v: v),
        )
    elif choice == 9:
        item = draw(shapes(depth - 1, allow_optional=False))
        shape = Shape(
            dict[str, item.annotation],  # type: ignore[name-defined]
            st.dictionaries(st.text("abc", max_size=3), item.values, max_size=3),
            _all_of(dict, item.check, lambda v: v.values()),
        )
    elif choice == 10:
        shape = draw(_dataclass_shape(depth - 1))
    else:
        shape = draw(_typeddict_shape(depth - 1))
    if draw(st.integers(0, 4)) == 0:
        shape = dataclasses.replace(
            shape, annotation=Annotated[shape.annotation, draw(st.text(max_size=5))]
        )
    if allow_optional and draw(st.integers(0, 3)) == 0:
        shape = dataclasses.replace(
            shape,
            annotation=shape.annotation | None,
            check=_or_none(shape.check),
            optional=True,
        )
    return shape


@st.composite
def _fields(draw: st.DrawFn, depth: int) -> list[tuple[str, Shape]]:
    count = draw(st.integers(1, 3))
    return [(f"f{i}", draw(shapes(depth))) for i in range(count)]


def _record(fields: list[tuple[str, Shape]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {n: s.values for n, s in fields if not s.optional},
        optional={n: s.values for n, s in fields if s.optional},
    )


@st.composite
def _dataclass_shape(draw: st.DrawFn, depth: int) -> Shape:
    fields = draw(_fields(depth))
    cls = dataclasses.make_dataclass(
        _fresh("D"), [(n, s.annotation) for n, s in fields]
    )

    def check(v: Any) -> bool:
        return isinstance(v, cls) and all(s.check(getattr(v, n)) for n, s in fields)

    return Shape(cls, _record(fields), check)


@st.composite
def _typeddict_shape(draw: st.DrawFn, depth: int) -> Shape:
    fields = draw(_fields(depth))
    cls = TypedDict(_fresh("TD"), {n: s.annotation for n, s in fields})  # type: ignore[misc]

    def check(v: Any) -> bool:
        return isinstance(v, dict) and all(
            s.check(v[n]) if n in v else s.optional for n, s in fields
        )

    return Shape(cls, _record(fields), check)


@st.composite
def signatures(draw: st.DrawFn) -> tuple[list[tuple[str, Shape, Any]], Any]:
    """Parameters (name, shape, default or ABSENT marker) and a value strategy."""
    params: list[tuple[str, Shape, Any]] = []
    for i in range(draw(st.integers(0, 4))):
        shape = draw(shapes(2))
        default: Any = inspect.Parameter.empty
        if not shape.optional and draw(st.integers(0, 3)) == 0:
            default = draw(shape.values)
        params.append((f"p{i}", shape, default))
    required = {
        n: s.values
        for n, s, d in params
        if not s.optional and d is inspect.Parameter.empty
    }
    optional = {
        n: s.values
        for n, s, d in params
        if s.optional or d is not inspect.Parameter.empty
    }
    return params, st.fixed_dictionaries(required, optional=optional)


@given(data=st.data(), signature=signatures())
def test_signature_tools_schema_binding_and_totality(
    data: st.DataObject, signature: tuple[list[tuple[str, Shape, Any]], Any]
) -> None:
    params, values = signature
    calls: list[dict[str, Any]] = []

    def body(**kwargs: Any) -> str:
        calls.append(kwargs)
        return "ok"

    body.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=s.annotation
            )
            for n, s, d in params
        ]
    )
    body.__annotations__ = {n: s.annotation for n, s, _ in params}
    definition = tool(name="typed", description="typed fuzz")(body)
    assert_meta_valid(definition.parameters)
    agent = Agent("sig")
    registry, counters = instrumented(agent)
    registry.register(definition)

    valid = data.draw(values, label="valid")
    result = call(registry, "typed", valid, agent)
    payload = assert_lossless_json(result)
    assert_observed_once(counters, result, "c1")
    assert payload == {"callId": "c1", "content": [text("ok")], "isError": False}
    bound = calls[-1]
    for name, shape, default in params:
        if name in valid:
            assert shape.check(bound[name]), (name, bound[name])
        elif shape.optional and default is inspect.Parameter.empty:
            assert bound[name] is None
        else:
            assert name not in bound

    junk = data.draw(
        st.one_of(
            any_arguments,
            st.fixed_dictionaries(
                {},
                optional={
                    n: st.one_of(s.values, json_scalars, non_json) for n, s, _ in params
                },
            ),
        ),
        label="junk",
    )
    counters.result.clear()
    counters.scoped_result.clear()
    counters.trace.clear()
    result = call(registry, "typed", junk, agent, call_id="c2")
    payload = assert_lossless_json(result)
    assert_frozen_result(result)
    assert_observed_once(counters, result, "c2")
    event("junk: " + (payload["error"]["code"] if "error" in payload else "other"))
    if not lossless(junk):
        assert result.text == ARGS_NOT_JSON
    elif result.is_error:
        assert payload["error"] == {"name": "ToolArgsError", "code": "INVALID_ARGS"}
    if lossless(junk) and isinstance(junk, dict):
        schema_ok = META.evolve(schema=definition.parameters).is_valid(junk)
        if not result.is_error:
            assert schema_ok
        elif schema_ok:  # only the int check goes beyond the wire schema
            assert all(
                v.endswith("must be an integer")
                for v in result.text.removeprefix("Error: invalid arguments: ").split(
                    "; "
                )
            ), result.text


# -- 3. listener, approval, timeout and tool chaos --------------------------------

PRE = (
    "next",
    "allow",
    "deny",
    "ask",
    "ask-reason",
    "none",
    "raise",
    "raise-base",
    "sys-exit",
    "garbage",
    "twice",
    "deny-not-str",
)
GUARD = ("none", "reason", "empty", "raise", "sys-exit", "garbage", "async")
WRAP = (
    "next",
    "short",
    "wrong-id",
    "none",
    "raise",
    "raise-after",
    "non-json",
    "twice",
    "swap-signal",
    "sys-exit",
)
POST = (
    "next",
    "accept",
    "accept-content",
    "accept-bad-content",
    "accept-context",
    "block",
    "block-bad",
    "none",
    "raise",
    "garbage",
    "mutate-result",
)
ANSWER = (
    "allowed-once",
    "rejected",
    "cancelled",
    "unavailable",
    "next",
    "garbage",
    "yolo",
    "raise",
    "raise-base",
    "async-allowed",
    "str-subclass",
)
TOOL = (
    "text",
    "list",
    "object",
    "str",
    "none",
    "set",
    "nan-content",
    "cyclic-meta",
    "opaque",
    "list-sub",
    "raise",
    "raise-harness",
    "raise-base",
    "sys-exit",
    "raise-unprintable",
    "mutate-args",
    "mutate-nested",
    "sleep",
    "slow",
    "print",
    "huge-text",
)
OBSERVER = ("fine", "raise", "raise-base", "sys-exit", "async", "mutate")


class CustomBase(BaseException):
    """A BaseException that is neither KeyboardInterrupt nor SystemExit."""


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


class OddStr(str):
    pass


def _pre(behaviour: str) -> Callable[..., Any]:
    async def listener(e: Any, n: Any) -> Any:
        match behaviour:
            case "next":
                return await n()
            case "allow":
                return Allow()
            case "deny":
                return Deny("denied")
            case "ask":
                return Ask()
            case "ask-reason":
                return Ask("why")
            case "none":
                return None
            case "raise":
                raise HarnessError("pre", "PRE")
            case "raise-base":
                raise CustomBase("pre base")
            case "sys-exit":
                raise SystemExit(2)
            case "twice":
                await n()
                return await n()
            case "deny-not-str":
                return Deny(5)  # type: ignore[arg-type]
        return object()

    return listener


def _guard(behaviour: str) -> Callable[..., Any]:
    def guard(e: Any) -> Any:
        match behaviour:
            case "reason":
                return "guarded"
            case "empty":
                return ""
            case "raise":
                raise RuntimeError("guard")
            case "sys-exit":
                raise SystemExit("guard exit")
            case "garbage":
                return 42
            case "async":
                return asyncio.sleep(0)
        return None

    return guard


def _wrap(behaviour: str) -> Callable[..., Any]:
    async def wrapper(e: Any, n: Any) -> Any:
        match behaviour:
            case "next":
                return await n()
            case "short":
                return ToolExecutionResult(
                    call_id=e.call_id, content=[text("short")], is_error=False
                )
            case "wrong-id":
                return ToolExecutionResult(call_id="other", content=[], is_error=False)
            case "none":
                return None
            case "raise":
                raise RuntimeError("wrap")
            case "raise-after":
                await n()
                raise RuntimeError("wrap after")
            case "twice":
                await n()
                return await n()
            case "swap-signal":
                e.signal = AbortController().signal
                return await n()
            case "sys-exit":
                raise SystemExit(0)
        return ToolExecutionResult(
            call_id=e.call_id, content=[text("x")], is_error=False, meta={"bad": {1, 2}}
        )

    return wrapper


def _post(behaviour: str) -> Callable[..., Any]:
    def listener(e: Any, r: Any, n: Any) -> Any:
        match behaviour:
            case "next":
                return n()
            case "accept":
                return Accept()
            case "accept-content":
                return Accept(content=[text("replaced")])
            case "accept-bad-content":
                return Accept(content=[{"type": "text", "text": math.nan}])
            case "accept-context":
                return Accept(
                    additional_context={
                        "content": [text("ctx")],
                        "source": {"kind": "plugin"},
                    }
                )
            case "block":
                return Block(feedback=[text("blocked")])
            case "block-bad":
                return Block(feedback=[{"type": "text", "text": b"bytes"}])
            case "none":
                return None
            case "raise":
                raise RuntimeError("post")
            case "mutate-result":
                r.content.append(text("sneaky"))
        return "garbage"

    return listener


def _answerer(behaviour: str) -> Callable[..., Any]:
    async def answer(request: Any, n: Any) -> Any:
        match behaviour:
            case "next":
                return await n()
            case "garbage":
                return 42
            case "yolo":
                return "yolo"
            case "raise":
                raise RuntimeError("answerer")
            case "raise-base":
                raise CustomBase("answerer base")
            case "async-allowed":
                await asyncio.sleep(0)
                return "allowed-once"
            case "str-subclass":
                return OddStr("allowed-once")
        return behaviour

    return answer


def _tool(behaviour: str) -> Callable[..., Any]:
    async def body(args: Any, execution: Any) -> Any:
        match behaviour:
            case "text":
                return [text("ok")]
            case "list":
                return [{"type": "json", "value": [1, {"a": None}]}]
            case "object":
                return {"content": [text("ok")], "meta": {"m": [1, 2.5]}}
            case "str":
                return "plain"
            case "none":
                return None
            case "set":
                return {1, 2}
            case "nan-content":
                return [{"type": "text", "text": "x", "score": math.nan}]
            case "cyclic-meta":
                return {"content": [text("ok")], "meta": _cyclic_dict()}
            case "opaque":
                return Opaque()
            case "list-sub":
                return ListSub([text("ok")])
            case "raise":
                raise ValueError("tool failed")
            case "raise-harness":
                raise HarnessError("tool harness", "BOOM")
            case "raise-base":
                raise CustomBase("tool base")
            case "sys-exit":
                raise SystemExit(3)
            case "raise-unprintable":
                raise Unprintable()
            case "mutate-args":
                args["new"] = 1
            case "mutate-nested":
                for value in args.values():
                    if isinstance(value, list):
                        value.append(1)
                    if isinstance(value, dict):
                        value.clear()
                return [text("no containers")]
            case "sleep":
                await asyncio.sleep(0)
                return [text("slept")]
            case "slow":
                await asyncio.sleep(0.004)
                return [text("late")]
            case "print":
                print("x" * 1000)
                return [text("printed")]
            case "huge-text":
                return [text("y" * 100_000)]
        return [text("fallthrough")]

    return body


def _observer(behaviour: str) -> Callable[..., Any]:
    def observer(e: Any, r: Any, *extra: Any) -> Any:
        match behaviour:
            case "raise":
                raise RuntimeError("observer")
            case "raise-base":
                raise CustomBase("observer base")
            case "sys-exit":
                raise SystemExit(9)
            case "async":
                return asyncio.sleep(0)
            case "mutate":
                r.content.append(text("sneaky"))
        return None

    return observer


def _mostly(default: str, choices: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Half the time the well-behaved choice, so calls also reach later stages."""
    return st.one_of(st.just(default), st.sampled_from(choices))


@given(
    pre=_mostly("next", PRE),
    guard=_mostly("none", GUARD),
    wrap=_mostly("next", WRAP),
    post=_mostly("next", POST),
    answer=st.sampled_from(ANSWER),
    behaviour=st.sampled_from(TOOL),
    observer=_mostly("fine", OBSERVER),
    timeout=st.sampled_from([None, 1, 60_000]),
    signal=st.sampled_from(["none", "fresh", "aborted"]),
    open_turn=st.booleans(),
    name=st.sampled_from(["chaos", "missing"]),
    arguments=st.one_of(
        st.dictionaries(st.text(max_size=3), json_values, max_size=3), any_arguments
    ),
)
def test_chaos_at_every_seam_never_raises_and_registry_survives(
    pre: str,
    guard: str,
    wrap: str,
    post: str,
    answer: str,
    behaviour: str,
    observer: str,
    timeout: int | None,
    signal: str,
    open_turn: bool,
    name: str,
    arguments: Any,
) -> None:
    agent = Agent("chaos")
    if open_turn:
        agent.session.start_turn()
    registry = ToolRegistry()
    registry.approval = ApprovalService()
    registry.register(
        ToolDefinition(
            name="chaos",
            description="chaos",
            parameters={"type": "object", "properties": {}},
            execute=_tool(behaviour),
            timeout_ms=timeout,
        )
    )
    registry.register(
        define_tool(
            name="ping", description="", parameters={}, execute=lambda a: "pong"
        )
    )
    touched: list[str] = []
    registry.on_pre_execute(lambda e, n: touched.append("pre") or n(), scope=agent)
    registry.on_pre_execute(_pre(pre), scope=agent)
    registry.guard(_guard(guard), scope=agent)
    TimeoutPolicy().install(registry, scope=agent)
    registry.on_execute(_wrap(wrap), scope=agent)
    registry.on_post_execute(_post(post), scope=agent)
    registry.approval.on_request(_answerer(answer), scope=agent)
    registry.on_result(_observer(observer), scope=agent)
    registry.on_trace(_observer(observer), scope=agent)
    seen: list[ToolExecutionResult] = []
    traced: list[ToolExecutionResult] = []
    registry.on_result(lambda e, r: seen.append(r))
    registry.on_trace(lambda e, r, records: traced.append(r))

    controller = AbortController()
    if signal == "aborted":
        controller.abort("caller gave up")
    result = run(
        registry.execute(
            ToolExecutionInput(
                call_id="c1",
                name=name,
                arguments=arguments,
                agent=agent,
                signal=None if signal == "none" else controller.signal,
            )
        )
    )

    payload = assert_lossless_json(result)
    assert_frozen_result(result)
    event("chaos: " + (result.error.code if result.error else str(result.is_error)))
    assert seen == [result] and seen[0] is result
    assert traced == [result] and traced[0] is result
    assert result.call_id == "c1"
    if not lossless(arguments):
        assert payload == {
            "callId": "c1",
            "content": [text(ARGS_NOT_JSON)],
            "isError": True,
        }
        assert touched == []
    else:
        assert touched == ["pre"]
    asked = agent.session.of_type("approval/asked")
    decided = agent.session.of_type("approval/decided")
    if answer != "str-subclass":  # see test_hostile_outcome_keeps_the_audit_pair
        assert len(asked) == len(decided) <= 1

    # The registry is still usable: an agent-less call sees none of the chaos.
    after = run(
        registry.execute(ToolExecutionInput(call_id="c2", name="ping", arguments={}))
    )
    assert after.to_json() == {
        "callId": "c2",
        "content": [text("pong")],
        "isError": False,
    }


# -- 4. validate_args is total ---------------------------------------------------------

hostile_noise = st.one_of(json_scalars, non_json_for_validation)
hostile_top_level = st.one_of(
    json_values,
    non_json_for_validation,
    st.builds(HostileDict),
    st.dictionaries(
        st.one_of(st.text(max_size=3), bad_keys),
        st.one_of(json_values, non_json_for_validation),
        max_size=3,
    ),
)


@given(data=st.data(), spec=specs(3))
def test_validate_args_is_total_and_the_compiled_twin_agrees(
    data: st.DataObject, spec: dict[str, Any]
) -> None:
    args = data.draw(
        st.one_of(chaotic_args(spec, hostile_noise), hostile_top_level), label="args"
    )
    violations = validate_args(spec, args)
    assert isinstance(violations, list)
    assert all(type(v) is str for v in violations)
    assert compile_validator(spec)(args) == violations
    if not isinstance(args, dict):
        assert violations == ['"arguments" must be an object']


# -- 5. every schema we emit is valid Draft 2020-12 -------------------------------


@given(spec=specs(3))
def test_emitted_schemas_are_valid_draft_2020_12(spec: dict[str, Any]) -> None:
    schema = schema_spec_to_json_schema(spec)
    assert_meta_valid(schema)
    definition = define_tool(
        name="s", description="", parameters=spec, execute=lambda a: []
    )
    assert definition.parameters == schema
    raw = define_tool(
        name="raw", description="", parameters=schema, execute=lambda a: []
    )
    registry = ToolRegistry()
    registry.register(definition)
    registry.register(raw)
    projected = registry.schemas()
    assert [p["name"] for p in projected] == ["s", "raw"]
    for entry in projected:
        assert set(entry) == {"name", "description", "parameters"}
        assert entry["parameters"] == schema
        assert_meta_valid(entry["parameters"])


# What an author might wrongly put in a spec. Values that cannot even be
# printed (raising __repr__/__eq__, ints past the str limit) are left out:
# see test_define_tool_names_an_unprintable_spec_value.
tame_poison = st.one_of(
    st.sampled_from([math.nan, math.inf, -0.0]),
    st.lists(json_scalars, max_size=3).map(tuple),
    st.sets(st.integers(), max_size=3),
    st.binary(max_size=4),
    st.dictionaries(st.text(max_size=3), json_scalars, max_size=2).map(DictSub),
    st.lists(json_scalars, max_size=2).map(ListSub),
    st.builds(Opaque),
    st.just(len),
    st.just(int),
    st.dictionaries(st.integers(), json_scalars, min_size=1, max_size=2),
    st.builds(_cyclic_dict),
    st.builds(_cyclic_list),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.datetimes(),
)
junk_props = st.one_of(
    props(2),
    st.dictionaries(
        st.sampled_from(
            ["type", "required", "enum", "default", "properties", "items", "typo"]
        ),
        st.one_of(json_values, tame_poison, st.sampled_from(TYPES), st.just("weird")),
        max_size=4,
    ),
    st.builds(SchemaProp, type=st.one_of(st.sampled_from(TYPES), st.text(max_size=4))),
    json_scalars,
    tame_poison,
)


@given(
    spec=st.one_of(
        st.dictionaries(
            st.one_of(st.text(max_size=3), st.integers()), junk_props, max_size=4
        ),
        json_values,
    )
)
def test_define_tool_accepts_or_raises_a_definition_error(spec: Any) -> None:
    try:
        definition = define_tool(
            name="junk", description="", parameters=spec, execute=lambda a: []
        )
    except ToolDefinitionError as exc:
        assert str(exc)
        return
    assert_meta_valid(definition.parameters)


def test_define_tool_names_an_unprintable_spec_value() -> None:
    with pytest.raises(ToolDefinitionError):
        define_tool(
            name="t",
            description="",
            parameters={"a": {"type": 10**5000}},
            execute=lambda a: [],
        )


# -- 6. boundaries of lossless JSON --------------------------------------------------


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        (_nest(MAX_DEPTH - 1, True), True),
        (_nest(MAX_DEPTH, True), True),
        (_nest(MAX_DEPTH + 1, True), False),
        (_nest(MAX_DEPTH, False), True),
        (_nest(MAX_DEPTH + 1, False), False),
        (_nest(50_000, False), False),
        (10**4298, True),  # 4,299 digits
        (-(10**4298), True),
        (10**4300, False),  # 4,301 digits
        (10**100_000, False),
    ],
    ids=[
        "depth-255",
        "depth-256",
        "depth-257",
        "list-256",
        "list-257",
        "depth-50000",
        "int-4299-digits",
        "negative-4299-digits",
        "int-4301-digits",
        "int-100001-digits",
    ],
)
def test_depth_and_int_limits(value: Any, accepted: bool) -> None:
    seen: list[Any] = []

    def echo(args: Any) -> Any:
        seen.append(args)
        return {"content": [text("ok")], "meta": args}

    agent = Agent("limits")
    registry, counters = instrumented(agent)
    registry.register(
        define_tool(name="echo", description="", parameters={}, execute=echo)
    )
    result = call(
        registry, "echo", {"v": value} if type(value) is int else value, agent
    )
    payload = assert_lossless_json(result)
    assert_observed_once(counters, result, "c1")
    if not accepted:
        assert result.text == ARGS_NOT_JSON
    elif type(value) is int:
        assert payload["meta"] == {"v": value}
    else:
        # A nested non-object is not an object; the call still ends cleanly.
        assert result.is_error is (type(value) is not dict)


# -- known bugs (reported; strict so that a fix flips them) --------------------------


class ReprRaises:
    def __repr__(self) -> str:
        raise RuntimeError("hostile __repr__")

    __str__ = __repr__
    __hash__ = object.__hash__


@pytest.mark.parametrize("where", ["arguments", "result-meta", "result-content"])
@pytest.mark.parametrize("key_kind", ["repr-raises", "huge-int"])
def test_execute_is_total_for_keys_whose_repr_fails(where: str, key_kind: str) -> None:
    key: Any = ReprRaises() if key_kind == "repr-raises" else 10**5000
    poisoned = {key: 1}

    def body(args: Any) -> Any:
        if where == "result-meta":
            return {"content": [text("ok")], "meta": poisoned}
        if where == "result-content":
            return [poisoned]
        return [text("ok")]

    agent = Agent("bug")
    registry, counters = instrumented(agent)
    registry.register(
        define_tool(name="t", description="", parameters={}, execute=body)
    )
    result = call(registry, "t", poisoned if where == "arguments" else {}, agent)
    expected = ARGS_NOT_JSON if where == "arguments" else RESULT_NOT_JSON
    assert result.text == expected
    assert_observed_once(counters, result, "c1")


@pytest.mark.parametrize(
    ("where", "violation"),
    [
        ("top", '"arguments" must be an object'),
        ("nested", '"o" must be an object'),
        ("enum", '"e" must be a string'),
    ],
)
def test_validate_args_sees_through_a_spoofed_class(where: str, violation: str) -> None:
    """isinstance() honours a spoofed __class__; the validators read type()."""
    spec = {
        "o": SchemaProp(type="object", properties={"b": SchemaProp(type="string")}),
        "e": SchemaProp(type="string", enum=("x",)),
    }
    args: Any = {
        "top": SpoofDict(),
        "nested": {"o": SpoofDict()},
        "enum": {"e": SpoofStr()},
    }[where]
    assert validate_args(spec, args) == [violation]
    assert compile_validator(spec)(args) == [violation]


@pytest.mark.parametrize(
    ("key_kind", "message"),
    [("colliding-object", "hostile __eq__"), ("str-subclass", "hostile str __eq__")],
)
def test_validate_args_is_total_for_a_key_colliding_with_a_spec_key(
    key_kind: str, message: str
) -> None:
    """A lookup of "a" runs the colliding key's __eq__; what it raises is reported."""
    spec = {"a": SchemaProp(type="string")}
    key = CollidingKey() if key_kind == "colliding-object" else EvilStr("a")
    args = {key: 1}
    expected = [f"arguments could not be validated: {message}"]
    assert validate_args(spec, args) == expected
    assert compile_validator(spec)(args) == expected


def test_a_malformed_spec_still_raises_through_the_net() -> None:
    spec: Any = {"a": {"type": "strang"}}
    with pytest.raises(
        ValueError, match='unreachable variant in validateArgs: "strang"'
    ):
        validate_args(spec, {"a": 1})
    with pytest.raises(
        ValueError, match='unreachable variant in validateArgs: "strang"'
    ):
        compile_validator(spec)({"a": 1})


def test_execute_is_total_for_those_same_hostile_arguments() -> None:
    """What validate_args chokes on never reaches it through execute()."""
    agent = Agent("ok")
    registry, counters = instrumented(agent)
    registry.register(
        define_tool(
            name="t",
            description="",
            parameters={"a": SchemaProp(type="string")},
            execute=lambda a: [text("ok")],
        )
    )
    for i, args in enumerate(
        [SpoofDict(), {"a": SpoofStr()}, {CollidingKey(): 1}, {"a": HostileStr()}]
    ):
        counters.result.clear()
        counters.scoped_result.clear()
        counters.trace.clear()
        result = call(registry, "t", args, agent, call_id=f"c{i}")
        assert result.text == ARGS_NOT_JSON
        assert_observed_once(counters, result, f"c{i}")
