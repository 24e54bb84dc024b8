# mypy: disable-error-code="func-returns-value"
"""Contract tests for the tool registry (contract §3).

Layers, register/dispose, get, schemas, restrict, guard and tools/change.
Written from the contract, independently of the implementation.
"""

from __future__ import annotations

import copy
import gc
import re
import weakref
from collections.abc import Callable
from typing import Any

import pytest

from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.definition import ToolDefinition
from dsh_nb.tools.errors import ToolDefinitionError
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.values.execution import ToolExecutionInput, ToolExecutionResult

# -- helpers -----------------------------------------------------------------

EMPTY_PARAMS: dict[str, Any] = {"type": "object", "properties": {}}


def make_def(
    name: str,
    *,
    text: str | None = None,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    timeout_ms: float | None = None,
) -> ToolDefinition:
    reply = text if text is not None else f"{name} ran"

    async def body(args: Any, execution: Any) -> list[dict[str, Any]]:
        return [{"type": "text", "text": reply}]

    return ToolDefinition(
        name=name,
        description=description if description is not None else f"the {name} tool",
        parameters=parameters if parameters is not None else dict(EMPTY_PARAMS),
        execute=body,
        timeout_ms=timeout_ms,
    )


def names(registry: ToolRegistry, scope: Agent | None = None) -> list[str]:
    return [s["name"] for s in registry.schemas(scope)]


async def call(
    registry: ToolRegistry,
    name: str,
    *,
    agent: Agent | None = None,
    call_id: str = "c1",
    arguments: Any = None,
) -> ToolExecutionResult:
    return await registry.execute(
        ToolExecutionInput(
            call_id=call_id,
            name=name,
            arguments={} if arguments is None else arguments,
            agent=agent,
        )
    )


def text_of(result: ToolExecutionResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert block["type"] == "text"
    text: str = block["text"]
    return text


def force_timeout(defn: ToolDefinition, value: Any) -> ToolDefinition:
    """Bypass any constructor check so the registry's own check is tested."""
    object.__setattr__(defn, "timeout_ms", value)
    return defn


# -- §3.1 layers and §3.2 register --------------------------------------------


def test_register_stores_the_definition_object_as_is(registry: ToolRegistry) -> None:
    defn = make_def("echo")
    registry.register(defn)
    assert registry.get("echo") is defn


def test_get_unknown_is_none(registry: ToolRegistry, agent: Agent) -> None:
    assert registry.get("nope") is None
    assert registry.get("nope", agent) is None


@pytest.mark.parametrize(
    "bad", [0, -1, -0.5, float("inf"), float("-inf"), float("nan"), True, "100"]
)
def test_register_rejects_bad_timeout(registry: ToolRegistry, bad: Any) -> None:
    defn = force_timeout(make_def("slow"), bad)
    with pytest.raises(ToolDefinitionError) as info:
        registry.register(defn)
    message = str(info.value)
    assert "timeoutMs must be a positive finite number" in message
    assert '"slow"' in message
    assert info.value.code == "INVALID_DEFINITION"
    assert isinstance(info.value, ValueError)
    assert registry.get("slow") is None


def test_register_rejects_bad_timeout_scoped(
    registry: ToolRegistry, agent: Agent
) -> None:
    defn = force_timeout(make_def("slow"), 0)
    with pytest.raises(ToolDefinitionError, match="positive finite number"):
        registry.register(defn, scope=agent)
    assert registry.get("slow", agent) is None


@pytest.mark.parametrize("good", [1, 0.5, 100, 1e9])
def test_register_accepts_positive_finite_timeout(
    registry: ToolRegistry, good: float
) -> None:
    defn = make_def("slow", timeout_ms=good)
    registry.register(defn)
    got = registry.get("slow")
    assert got is defn
    assert got.timeout_ms == good


def test_timeout_is_checked_before_duplicates(registry: ToolRegistry) -> None:
    registry.register(make_def("echo"))
    with pytest.raises(ToolDefinitionError) as info:
        registry.register(force_timeout(make_def("echo"), -5))
    assert "timeoutMs must be a positive finite number" in str(info.value)
    assert "already registered" not in str(info.value)


def test_global_duplicate_raises_and_points_to_scoped_registration(
    registry: ToolRegistry,
) -> None:
    first = make_def("echo")
    registry.register(first)
    with pytest.raises(ToolDefinitionError) as info:
        registry.register(make_def("echo"))
    message = str(info.value)
    assert "already registered" in message
    assert "is already registered" in message
    assert "scope=" in message
    assert info.value.code == "INVALID_DEFINITION"
    assert registry.get("echo") is first


def test_scoped_duplicate_raises_exact_message(
    registry: ToolRegistry, agent: Agent
) -> None:
    first = make_def("echo")
    registry.register(first, scope=agent)
    with pytest.raises(ToolDefinitionError) as info:
        registry.register(make_def("echo"), scope=agent)
    assert 'tool "echo" is already registered in this scope' in str(info.value)
    assert registry.get("echo", agent) is first


def test_same_name_in_different_layers_is_allowed(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    g = make_def("echo")
    a = make_def("echo")
    b = make_def("echo")
    registry.register(g)
    registry.register(a, scope=agent)
    registry.register(b, scope=other)
    assert registry.get("echo") is g
    assert registry.get("echo", agent) is a
    assert registry.get("echo", other) is b


def test_scopes_are_compared_by_identity(registry: ToolRegistry) -> None:
    first = Agent("same")
    second = Agent("same")
    defn = make_def("echo")
    registry.register(defn, scope=first)
    assert registry.get("echo", first) is defn
    assert registry.get("echo", second) is None
    # Registering the same name for the equal-named twin is not a duplicate.
    registry.register(make_def("echo"), scope=second)


def test_register_emits_one_change(registry: ToolRegistry) -> None:
    seen: list[int] = []
    registry.on_change(lambda: seen.append(1))
    registry.register(make_def("echo"))
    assert seen == [1]


def test_register_sees_tool_during_change_notification(
    registry: ToolRegistry,
) -> None:
    visible: list[bool] = []
    registry.on_change(lambda: visible.append(registry.get("echo") is not None))
    registry.register(make_def("echo"))
    assert visible == [True]


def test_register_rolls_back_when_change_listener_raises(
    registry: ToolRegistry,
) -> None:
    seen: list[bool] = []

    def listener() -> None:
        seen.append(registry.get("echo") is not None)
        if len(seen) == 1:
            raise RuntimeError("change listener broke")

    dispose = registry.on_change(listener)
    with pytest.raises(RuntimeError, match="change listener broke"):
        registry.register(make_def("echo"))
    assert registry.get("echo") is None
    assert names(registry) == []
    # A second tools/change fired for the removal, after which it is gone.
    assert seen == [True, False]

    dispose()
    again = make_def("echo")
    registry.register(again)
    assert registry.get("echo") is again
    assert names(registry) == ["echo"]


def test_scoped_register_rolls_back_when_change_listener_raises(
    registry: ToolRegistry, agent: Agent
) -> None:
    fired: list[int] = []

    def listener() -> None:
        fired.append(1)
        if len(fired) == 1:
            raise RuntimeError("nope")

    registry.on_change(listener)
    with pytest.raises(RuntimeError, match="nope"):
        registry.register(make_def("echo"), scope=agent)
    assert registry.get("echo", agent) is None
    assert len(fired) == 2
    registry.register(make_def("echo"), scope=agent)
    assert names(registry, agent) == ["echo"]


def test_rolled_back_register_is_not_listed_in_known_globals(
    registry: ToolRegistry, agent: Agent
) -> None:
    calls: list[int] = []

    def listener() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("x")

    registry.on_change(listener)
    with pytest.raises(RuntimeError):
        registry.register(make_def("ghost"))
    with pytest.raises(ToolDefinitionError, match=re.escape("(none)")):
        registry.restrict(agent, deny=["ghost"])


# -- disposers ---------------------------------------------------------------


def test_dispose_unregisters_and_emits_change_once(registry: ToolRegistry) -> None:
    seen: list[int] = []
    dispose = registry.register(make_def("echo"))
    registry.on_change(lambda: seen.append(1))
    dispose()
    assert registry.get("echo") is None
    assert seen == [1]
    dispose()
    assert seen == [1]


def test_stale_dispose_does_not_remove_a_reregistered_tool(
    registry: ToolRegistry,
) -> None:
    dispose_first = registry.register(make_def("echo"))
    dispose_first()
    second = make_def("echo")
    registry.register(second)
    dispose_first()
    assert registry.get("echo") is second


def test_stale_scoped_dispose_does_not_remove_a_reregistered_tool(
    registry: ToolRegistry, agent: Agent
) -> None:
    dispose_first = registry.register(make_def("echo"), scope=agent)
    dispose_first()
    second = make_def("echo")
    registry.register(second, scope=agent)
    dispose_first()
    assert registry.get("echo", agent) is second


def test_disposing_a_scoped_tool_reveals_the_global_twin(
    registry: ToolRegistry, agent: Agent
) -> None:
    g = make_def("echo", description="global")
    registry.register(g)
    dispose = registry.register(make_def("echo", description="scoped"), scope=agent)
    assert registry.schemas(agent)[0]["description"] == "scoped"
    dispose()
    assert registry.get("echo", agent) is g
    assert registry.schemas(agent) == registry.schemas()


def test_empty_scoped_layer_leaves_no_residue(registry: ToolRegistry) -> None:
    scope = Agent("ephemeral")
    try:
        ref = weakref.ref(scope)
    except TypeError:
        pytest.skip("Agent does not support weak references")
    dispose = registry.register(make_def("echo"), scope=scope)
    dispose()
    del dispose
    del scope
    gc.collect()
    assert ref() is None, "the registry still holds the scope of an empty layer"


async def test_dispose_scope_drops_tools_restrictions_guards_and_listeners(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("shared"))
    registry.register(make_def("mine"), scope=agent)
    registry.restrict(agent, deny=["shared"])
    guard_calls: list[str] = []

    def guard(execution: Any) -> str | None:
        guard_calls.append(execution.name)
        return "blocked by scoped guard"

    registry.guard(guard, scope=agent)
    pre_calls: list[str] = []

    def pre(execution: Any, next: Any) -> Any:
        pre_calls.append(execution.name)
        return next()

    registry.on_pre_execute(pre, scope=agent)
    assert names(registry, agent) == ["mine"]

    registry.dispose_scope(agent)

    assert names(registry, agent) == ["shared"]
    assert registry.get("mine", agent) is None
    result = await call(registry, "shared", agent=agent)
    assert result.is_error is False
    assert text_of(result) == "shared ran"
    assert guard_calls == []
    assert pre_calls == []


def test_dispose_scope_of_unknown_scope_is_harmless(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("echo"))
    registry.dispose_scope(agent)
    assert names(registry) == ["echo"]


def test_dispose_scope_leaves_other_scopes_alone(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def("a"), scope=agent)
    registry.register(make_def("b"), scope=other)
    registry.dispose_scope(agent)
    assert names(registry, agent) == []
    assert names(registry, other) == ["b"]


# -- §3.3 get ------------------------------------------------------------------


def test_get_visibility(registry: ToolRegistry, agent: Agent, other: Agent) -> None:
    g = make_def("echo")
    s = make_def("echo")
    only_scoped = make_def("private")
    registry.register(g)
    registry.register(s, scope=agent)
    registry.register(only_scoped, scope=agent)
    assert registry.get("echo") is g
    assert registry.get("echo", agent) is s
    assert registry.get("echo", other) is g
    assert registry.get("private", agent) is only_scoped
    assert registry.get("private") is None
    assert registry.get("private", other) is None


def test_get_hides_restricted_away_global(registry: ToolRegistry, agent: Agent) -> None:
    registry.register(make_def("echo"))
    registry.restrict(agent, deny=["echo"])
    assert registry.get("echo", agent) is None
    assert registry.get("echo") is not None


# -- §3.4 schemas --------------------------------------------------------------


def test_schemas_allowlist_only_three_keys(registry: ToolRegistry) -> None:
    def present_call(args: Any) -> None:
        return None

    def present_result(args: Any, result: Any) -> None:
        return None

    async def body(args: Any, execution: Any) -> list[dict[str, Any]]:
        return []

    params = {"type": "object", "properties": {"x": {"type": "string"}}}
    registry.register(
        ToolDefinition(
            name="full",
            description="has everything",
            parameters=params,
            execute=body,
            timeout_ms=250,
            present_call=present_call,
            present_result=present_result,
        )
    )
    schemas = registry.schemas()
    assert schemas == [
        {"name": "full", "description": "has everything", "parameters": params}
    ]
    assert set(schemas[0]) == {"name", "description", "parameters"}


def test_schemas_parameters_are_deep_copies(registry: ToolRegistry) -> None:
    params: dict[str, Any] = {
        "type": "object",
        "properties": {"x": {"type": "string", "enum": ["a", "b"]}},
        "required": ["x"],
    }
    original = copy.deepcopy(params)
    defn = make_def("echo", parameters=params)
    registry.register(defn)

    first: dict[str, Any] = dict(registry.schemas()[0])
    assert first["parameters"] == original
    assert first["parameters"] is not params
    assert first["parameters"]["properties"] is not params["properties"]
    assert first["parameters"]["properties"]["x"] is not params["properties"]["x"]
    mutations: tuple[Callable[[Any], object], ...] = (
        lambda p: p["properties"]["x"].__setitem__("type", "number"),
        lambda p: p["properties"]["x"]["enum"].append("c"),
        lambda p: p["required"].clear(),
        lambda p: p.__setitem__("extra", True),
    )
    for mutate in mutations:
        try:
            mutate(first["parameters"])
        except TypeError:
            pass  # a frozen copy is fine too
    assert params == original
    assert defn.parameters == original
    assert registry.schemas()[0]["parameters"] == original
    assert registry.schemas()[0]["parameters"] is not first["parameters"]


def test_schemas_each_call_is_a_fresh_list(registry: ToolRegistry) -> None:
    registry.register(make_def("a"))
    first = registry.schemas()
    try:
        first.clear()
    except (TypeError, AttributeError):
        pass
    assert names(registry) == ["a"]


def test_schemas_registration_order_and_reregistration_goes_last(
    registry: ToolRegistry,
) -> None:
    dispose_a = registry.register(make_def("a"))
    registry.register(make_def("b"))
    registry.register(make_def("c"))
    assert names(registry) == ["a", "b", "c"]
    dispose_a()
    registry.register(make_def("a"))
    assert names(registry) == ["b", "c", "a"]


def test_scoped_entry_replaces_global_in_place_and_new_ones_append(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("a"))
    registry.register(make_def("b", description="global b"))
    registry.register(make_def("c"))
    registry.register(make_def("d"), scope=agent)
    registry.register(make_def("b", description="scoped b"), scope=agent)
    schemas = registry.schemas(agent)
    assert [s["name"] for s in schemas] == ["a", "b", "c", "d"]
    assert schemas[1]["description"] == "scoped b"
    assert [s["description"] for s in registry.schemas()] == [
        "the a tool",
        "global b",
        "the c tool",
    ]


def test_scoped_twin_of_restricted_global_is_appended(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("a"))
    registry.register(make_def("b"))
    registry.register(make_def("c"))
    registry.restrict(agent, deny=["a"])
    registry.register(make_def("a", description="scoped a"), scope=agent)
    schemas = registry.schemas(agent)
    assert [s["name"] for s in schemas] == ["b", "c", "a"]
    assert schemas[2]["description"] == "scoped a"


def test_schemas_reflect_registration_immediately(
    registry: ToolRegistry, agent: Agent
) -> None:
    assert registry.schemas() == []
    assert registry.schemas(agent) == []
    dispose = registry.register(make_def("a"))
    assert names(registry, agent) == ["a"]
    dispose()
    assert registry.schemas(agent) == []


# -- §3.5 restrict -------------------------------------------------------------


def test_restrict_requires_a_scope(registry: ToolRegistry) -> None:
    registry.register(make_def("a"))
    with pytest.raises(ToolDefinitionError, match="requires a scoped context"):
        registry.restrict(None, deny=["a"])


def test_restrict_without_allow_or_deny_is_a_noop_error(
    registry: ToolRegistry, agent: Agent
) -> None:
    with pytest.raises(ToolDefinitionError, match="no-op"):
        registry.restrict(agent)


def test_restrict_error_code(registry: ToolRegistry, agent: Agent) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        registry.restrict(agent)
    assert info.value.code == "INVALID_DEFINITION"
    assert isinstance(info.value, ValueError)


def test_allow_empty_hides_every_global_but_keeps_scope_tools(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("a"))
    registry.register(make_def("b"))
    registry.register(make_def("capture"), scope=agent)
    registry.restrict(agent, allow=[])
    assert names(registry, agent) == ["capture"]
    assert names(registry) == ["a", "b"]


def test_deny_empty_is_accepted_and_hides_nothing(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("a"))
    registry.restrict(agent, deny=[])
    assert names(registry, agent) == ["a"]


def test_restrict_rejects_scope_local_name(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("real"))
    registry.register(make_def("local"), scope=agent)
    with pytest.raises(ToolDefinitionError) as info:
        registry.restrict(agent, deny=["local"])
    assert 'unknown global tool "local"' in str(info.value)


def test_restrict_unknown_name_lists_known_globals(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("real"))
    with pytest.raises(ToolDefinitionError) as info:
        registry.restrict(agent, allow=["reall"])
    assert 'unknown global tool "reall"; known global tools: real' in str(info.value)


def test_restrict_several_unknown_names_plural_allow_then_deny(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("real"))
    with pytest.raises(ToolDefinitionError) as info:
        registry.restrict(agent, allow=["ghost", "real"], deny=["wraith"])
    assert 'unknown global tools "ghost", "wraith"' in str(info.value)


def test_restrict_unknown_with_no_globals(registry: ToolRegistry, agent: Agent) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        registry.restrict(agent, deny=["x"])
    assert "known global tools: (none)" in str(info.value)
    assert 'unknown global tool "x"' in str(info.value)


def test_restrict_known_globals_are_sorted(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("zeta"))
    registry.register(make_def("alpha"))
    registry.register(make_def("mid"))
    with pytest.raises(ToolDefinitionError) as info:
        registry.restrict(agent, deny=["nope"])
    assert "known global tools: alpha, mid, zeta" in str(info.value)


def test_failed_restrict_installs_nothing(registry: ToolRegistry, agent: Agent) -> None:
    registry.register(make_def("a"))
    seen: list[int] = []
    registry.on_change(lambda: seen.append(1))
    with pytest.raises(ToolDefinitionError):
        registry.restrict(agent, allow=["a"], deny=["nope"])
    assert names(registry, agent) == ["a"]
    assert seen == []


def test_restrict_names_may_be_already_restricted_globals(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("a"))
    registry.register(make_def("b"))
    registry.restrict(agent, deny=["a"])
    registry.restrict(agent, allow=["a", "b"])
    assert names(registry, agent) == ["b"]


def test_restrict_snapshots_caller_lists(registry: ToolRegistry, agent: Agent) -> None:
    registry.register(make_def("a"))
    registry.register(make_def("b"))
    allow = ["a"]
    deny = ["b"]
    registry.restrict(agent, allow=allow)
    registry.restrict(agent, deny=deny)
    allow.append("b")
    deny.append("a")
    deny.remove("b")
    assert names(registry, agent) == ["a"]


def test_allow_and_deny_together(registry: ToolRegistry, agent: Agent) -> None:
    for n in ("a", "b", "c"):
        registry.register(make_def(n))
    registry.restrict(agent, allow=["a", "b"], deny=["b"])
    assert names(registry, agent) == ["a"]


def test_several_restrictions_intersect(registry: ToolRegistry, agent: Agent) -> None:
    for n in ("a", "b", "c", "d"):
        registry.register(make_def(n))
    registry.restrict(agent, allow=["a", "b", "c"])
    registry.restrict(agent, allow=["b", "c", "d"])
    registry.restrict(agent, deny=["c"])
    assert names(registry, agent) == ["b"]


def test_deny_only_admits_later_globals_allow_list_excludes_them(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def("a"))
    registry.restrict(agent, deny=["a"])
    registry.restrict(other, allow=["a"])
    later = make_def("later")
    registry.register(later)
    assert names(registry, agent) == ["later"]
    assert registry.get("later", agent) is later
    assert names(registry, other) == ["a"]
    assert registry.get("later", other) is None


def test_restriction_follows_live_global_layer(
    registry: ToolRegistry, agent: Agent
) -> None:
    dispose_a = registry.register(make_def("a"))
    registry.register(make_def("b"))
    registry.restrict(agent, allow=["a"])
    assert names(registry, agent) == ["a"]
    dispose_a()
    assert names(registry, agent) == []
    registry.register(make_def("a"))
    assert names(registry, agent) == ["a"]


def test_scope_tools_survive_an_allow_list(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("a"))
    registry.register(make_def("b"))
    registry.register(make_def("capture"), scope=agent)
    registry.restrict(agent, allow=["b"])
    assert names(registry, agent) == ["b", "capture"]


def test_restriction_does_not_touch_other_scopes_or_global_view(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def("a"))
    registry.register(make_def("b"))
    registry.restrict(agent, deny=["a"])
    assert names(registry, agent) == ["b"]
    assert names(registry, other) == ["a", "b"]
    assert names(registry) == ["a", "b"]
    assert registry.get("a", other) is not None


def test_restriction_twin_agents_are_distinct(registry: ToolRegistry) -> None:
    registry.register(make_def("a"))
    first, second = Agent("x"), Agent("x")
    registry.restrict(first, deny=["a"])
    assert names(registry, first) == []
    assert names(registry, second) == ["a"]


def test_restriction_disposer_lifts_only_itself_and_emits_change(
    registry: ToolRegistry, agent: Agent
) -> None:
    for n in ("a", "b", "c"):
        registry.register(make_def(n))
    seen: list[int] = []
    registry.on_change(lambda: seen.append(1))
    lift_a = registry.restrict(agent, deny=["a"])
    assert seen == [1]
    registry.restrict(agent, deny=["b"])
    assert seen == [1, 1]
    assert names(registry, agent) == ["c"]
    lift_a()
    assert seen == [1, 1, 1]
    assert names(registry, agent) == ["a", "c"]
    lift_a()
    assert seen == [1, 1, 1]
    assert names(registry, agent) == ["a", "c"]


async def test_restricted_away_tool_is_unknown_at_dispatch(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("a"))
    registry.restrict(agent, deny=["a"])
    result = await call(registry, "a", agent=agent)
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": 'Error: unknown tool "a"'}],
        "isError": True,
        "error": {"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
    }
    assert (await call(registry, "a")).is_error is False


# -- §3.6 guards ---------------------------------------------------------------


async def test_guards_global_then_scoped_in_registration_order(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("echo"))
    log: list[str] = []

    def mk(label: str, reason: str | None = None) -> Any:
        def guard(execution: Any) -> str | None:
            log.append(label)
            return reason

        return guard

    registry.guard(mk("scoped1"), scope=agent)
    registry.guard(mk("global1"))
    registry.guard(mk("scoped2"), scope=agent)
    registry.guard(mk("global2"))
    result = await call(registry, "echo", agent=agent)
    assert result.is_error is False
    assert log == ["global1", "global2", "scoped1", "scoped2"]


async def test_first_guard_reason_denies_and_later_guards_do_not_run(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("echo"))
    log: list[str] = []

    def first(execution: Any) -> str | None:
        log.append("first")
        return None

    def second(execution: Any) -> str | None:
        log.append("second")
        return "no echo today"

    def third(execution: Any) -> str | None:
        log.append("third")
        return "never reached"

    registry.guard(first)
    registry.guard(second, scope=agent)
    registry.guard(third, scope=agent)
    result = await call(registry, "echo", agent=agent)
    assert result.to_json() == {
        "callId": "c1",
        "content": [{"type": "text", "text": "Error: no echo today"}],
        "isError": True,
    }
    assert log == ["first", "second"]


async def test_scoped_guard_does_not_apply_to_agentless_or_other_calls(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    registry.register(make_def("echo"))
    registry.guard(lambda execution: "denied for alice", scope=agent)
    assert (await call(registry, "echo")).is_error is False
    assert (await call(registry, "echo", agent=other)).is_error is False
    denied = await call(registry, "echo", agent=agent)
    assert text_of(denied) == "Error: denied for alice"


async def test_global_guard_applies_to_agentless_calls(
    registry: ToolRegistry,
) -> None:
    registry.register(make_def("echo"))
    registry.guard(lambda execution: "global says no")
    assert text_of(await call(registry, "echo")) == "Error: global says no"


async def test_same_guard_twice_is_two_entries(registry: ToolRegistry) -> None:
    registry.register(make_def("echo"))
    count: list[int] = []

    def guard(execution: Any) -> None:
        count.append(1)

    dispose_one = registry.guard(guard)
    registry.guard(guard)
    await call(registry, "echo")
    assert len(count) == 2
    dispose_one()
    dispose_one()
    await call(registry, "echo")
    assert len(count) == 3


async def test_guard_dispose_and_no_change_event(registry: ToolRegistry) -> None:
    registry.register(make_def("echo"))
    seen: list[int] = []
    registry.on_change(lambda: seen.append(1))
    dispose = registry.guard(lambda execution: "no")
    assert text_of(await call(registry, "echo")) == "Error: no"
    dispose()
    assert (await call(registry, "echo")).is_error is False
    assert seen == []


async def test_a_stale_guard_disposer_spares_the_scopes_new_guards(
    registry: ToolRegistry, agent: Agent
) -> None:
    """Disposing a guard after dispose_scope must not drop guards added since."""
    registry.register(make_def("echo"))
    stale = registry.guard(lambda execution: "old", scope=agent)
    registry.dispose_scope(agent)
    registry.guard(lambda execution: "new", scope=agent)
    stale()
    assert text_of(await call(registry, "echo", agent=agent)) == "Error: new"


def test_change_listeners_dispose_in_any_order_and_keep_theirs(
    registry: ToolRegistry,
) -> None:
    heard: list[int] = []
    disposers = [registry.on_change(lambda i=i: heard.append(i)) for i in range(5)]
    registry.on_change(lambda: heard.append(-1), prepend=True)
    disposers[3]()
    disposers[0]()
    disposers[3]()  # idempotent
    registry.register(make_def("a"))
    assert heard == [-1, 1, 2, 4]


# -- §3.7 tools/change ---------------------------------------------------------


def test_change_is_unfiltered_for_scoped_listeners(
    registry: ToolRegistry, agent: Agent, other: Agent
) -> None:
    heard: list[str] = []
    registry.on_change(lambda: heard.append("scoped"), scope=agent)
    registry.on_change(lambda: heard.append("global"))
    registry.register(make_def("a"))
    registry.register(make_def("b"), scope=other)
    registry.restrict(other, deny=["a"])
    assert heard == ["scoped", "global"] * 3


def test_change_listener_dispose_stops_notifications(registry: ToolRegistry) -> None:
    seen: list[int] = []
    dispose = registry.on_change(lambda: seen.append(1))
    registry.register(make_def("a"))
    dispose()
    dispose()
    registry.register(make_def("b"))
    assert seen == [1]


def test_change_listener_prepend(registry: ToolRegistry) -> None:
    heard: list[str] = []
    registry.on_change(lambda: heard.append("first"))
    registry.on_change(lambda: heard.append("front"), prepend=True)
    registry.register(make_def("a"))
    assert heard == ["front", "first"]


def test_change_count_for_each_mutation(registry: ToolRegistry, agent: Agent) -> None:
    seen: list[int] = []
    registry.on_change(lambda: seen.append(1))
    dispose_a = registry.register(make_def("a"))
    dispose_s = registry.register(make_def("s"), scope=agent)
    lift = registry.restrict(agent, deny=["a"])
    lift()
    dispose_s()
    dispose_a()
    assert len(seen) == 6


def test_restrict_change_listener_error_propagates(
    registry: ToolRegistry, agent: Agent
) -> None:
    registry.register(make_def("a"))

    def listener() -> None:
        raise RuntimeError("listener says no")

    registry.on_change(listener)
    with pytest.raises(RuntimeError, match="listener says no"):
        registry.restrict(agent, deny=["a"])


def test_unregister_change_listener_error_propagates(registry: ToolRegistry) -> None:
    dispose = registry.register(make_def("a"))

    def listener() -> None:
        raise RuntimeError("listener says no")

    registry.on_change(listener)
    with pytest.raises(RuntimeError, match="listener says no"):
        dispose()
