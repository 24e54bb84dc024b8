"""``ToolContext``: progress, log lines, questions and samples, per call.

Real registries and the real runner; a door is a plain hearer object,
exactly what the MCP server and the notebook hand the runner.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
import time
import warnings
from typing import Any, Literal

import pydantic
import pytest

from dsh_nb.tools import (
    AbortController,
    Agent,
    Answer,
    SamplingUnavailable,
    ToolContext,
    ToolContextError,
    ToolRegistry,
    current_tool_context,
    tool,
)
from dsh_nb.tools.context.forms import FormError, form_of, schema_form
from dsh_nb.tools.context.toolcontext import MAX_LINES
from dsh_nb.tools.runner import CallRunner, DoorCall


class Door:
    """A door that hears everything, and answers as told."""

    def __init__(self, answer: Any = None, text: str | None = None) -> None:
        self.lines: list[tuple[str, str, str, str]] = []
        self.progress_seen: list[tuple[str, float, float | None, str | None]] = []
        self.questions: list[Any] = []
        self.samples: list[Any] = []
        self._answer = answer
        self._text = text

    def log(self, ctx: ToolContext, line: Any) -> None:
        self.lines.append((ctx.call_id, line.source, line.level, line.text))

    def progress(self, ctx: ToolContext, report: Any) -> None:
        self.progress_seen.append(
            (ctx.call_id, report.done, report.total, report.message)
        )

    async def ask(self, ctx: ToolContext, question: Any) -> Answer:
        self.questions.append(question)
        if self._answer == "forever":
            await asyncio.Event().wait()
        return self._answer  # type: ignore[no-any-return]

    async def sample(self, ctx: ToolContext, request: Any) -> str:
        self.samples.append(request)
        if self._text is None:
            await asyncio.Event().wait()
        return self._text  # type: ignore[return-value]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def call(
    registry: ToolRegistry,
    name: str,
    args: dict[str, Any] | None = None,
    *,
    door: Any = None,
    agent: Agent | None = None,
    wire_id: str = "",
    signal: Any = None,
) -> Any:
    runner = CallRunner(registry, talk=door)
    answer = await runner.run(
        DoorCall(name=name, arguments=args or {}, wire_id=wire_id),
        agent=agent or Agent("t"),
        signal=signal,
    )
    return answer.result


def text(result: Any) -> str:
    return "".join(b.get("text", "") for b in result.content)


def test_a_context_parameter_is_injected_and_never_in_the_schema() -> None:
    @tool
    async def where(path: str, ctx: ToolContext) -> str:
        return f"{ctx.name}:{ctx.call_id}:{path}"

    registry = ToolRegistry()
    registry.register(where)
    schema = registry.schemas()[0]["parameters"]
    assert list(schema["properties"]) == ["path"]
    assert "ctx" not in schema.get("required", [])
    result = run(call(registry, "where", {"path": "a"}, wire_id="w1"))
    assert text(result) == "where:w1:a"


def test_outside_a_call_is_a_clear_error() -> None:
    with pytest.raises(ToolContextError, match="only available while a tool runs"):
        current_tool_context()


def test_each_concurrent_call_gets_its_own_prints_logs_and_warnings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @tool
    def noisy(n: int) -> str:
        time.sleep(0.05)  # the three run at once on worker threads
        print(f"hello from {n}")
        print(f"partial {n}", end="")
        logging.getLogger("my.tool").warning("warned %d", n)
        warnings.warn(f"careful {n}", UserWarning, stacklevel=1)
        return "ok"

    registry = ToolRegistry(sync_tools="thread")
    registry.register(noisy)
    door = Door()

    async def main() -> None:
        await asyncio.gather(
            *(
                call(registry, "noisy", {"n": i}, door=door, wire_id=f"c{i}")
                for i in range(3)
            )
        )

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        run(main())
    for i in range(3):
        own = [(s, lv, t) for c, s, lv, t in door.lines if c == f"c{i}"]
        assert ("stdout", "info", f"hello from {i}") in own
        assert ("stdout", "info", f"partial {i}") in own  # flushed at the end
        assert ("logging", "warning", f"warned {i}") in own
        assert any(s == "warning" and f"careful {i}" in t for s, _, t in own)
        assert all(str(i) in t for _, _, t in own)  # nobody else's line
    out = capsys.readouterr()
    assert "hello from" not in out.out and "warned" not in out.err
    assert "careful" not in out.err


def test_a_bare_registry_call_leaves_prints_where_they_were(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @tool
    def chatty() -> str:
        print("to the terminal")
        return "ok"

    registry = ToolRegistry()
    registry.register(chatty)
    assert text(run(call(registry, "chatty"))) == "ok"  # no door: no capture
    assert "to the terminal" in capsys.readouterr().out


def test_ten_thousand_progress_reports_are_throttled_and_the_last_arrives() -> None:
    @tool
    async def busy(ctx: ToolContext) -> str:
        for i in range(10_000):
            await ctx.progress(i, 10_000, "step")
        return "ok"

    registry = ToolRegistry()
    registry.register(busy)
    door = Door()
    agent = Agent("p")
    run(call(registry, "busy", door=door, agent=agent))
    assert 1 <= len(door.progress_seen) < 100
    assert door.progress_seen[-1][1:] == (9999.0, 10_000.0, "step")
    journaled = [e for e in agent.session.events if e["type"] == "tool/progress"]
    assert len(journaled) == len(door.progress_seen)


def test_a_flood_of_lines_is_bounded_with_a_count_of_the_rest() -> None:
    @tool
    def flood() -> str:
        for i in range(MAX_LINES + 1234):
            print(f"line {i}")
        print("x" * 50_000)
        return "ok"

    registry = ToolRegistry()
    registry.register(flood)
    door = Door()
    agent = Agent("f")
    run(call(registry, "flood", door=door, agent=agent))
    assert len(door.lines) == MAX_LINES + 1
    assert door.lines[-1][1:] == ("dsh", "info", "… 1235 more lines")
    logs = [e for e in agent.session.events if e["type"] == "tool/log"]
    assert len(logs) == MAX_LINES + 1


def test_log_levels_are_checked_and_multiline_messages_split() -> None:
    @tool
    async def logs(ctx: ToolContext) -> str:
        ctx.log("one\ntwo", level="warn")
        try:
            ctx.log("x", level="loud")
        except ValueError as exc:
            return str(exc)
        return "accepted"

    registry = ToolRegistry()
    registry.register(logs)
    door = Door()
    out = text(run(call(registry, "logs", door=door)))
    assert "log level must be one of debug, info" in out and "'loud'" in out
    assert [(lv, t) for _, _, lv, t in door.lines] == [
        ("warning", "one"),
        ("warning", "two"),
    ]


class Color(enum.Enum):
    RED = "red"
    DARK_BLUE = "blue"


class Options(pydantic.BaseModel):
    path: str = pydantic.Field(description="which file")
    rows: int = 10
    color: Color = Color.RED
    header: bool = True
    tags: list[Literal["x", "y"]] = pydantic.Field(default_factory=list)
    legacy: Literal["a", "b"] = pydantic.Field(
        "a", json_schema_extra={"enumNames": ["Ay", "Bee"]}
    )


def test_forms_follow_sep_1034_defaults_and_sep_1330_enums() -> None:
    assert form_of(int).schema == {
        "type": "object",
        "properties": {"value": {"type": "integer"}},
        "required": ["value"],
    }
    choice = form_of(Literal["a.csv", "b.csv"]).schema["properties"]["value"]
    assert choice == {"type": "string", "enum": ["a.csv", "b.csv"]}
    schema = form_of(Options).schema
    assert schema["required"] == ["path"]
    assert schema["properties"]["rows"] == {"type": "integer", "default": 10}
    assert schema["properties"]["path"]["description"] == "which file"
    color = schema["properties"]["color"]
    assert "enum" not in color and color["default"] == "red"
    assert color["oneOf"][1] == {"const": "blue", "title": "Dark blue"}
    assert schema["properties"]["tags"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["x", "y"]},
        "default": [],
    }
    assert schema["properties"]["legacy"] == {
        "type": "string",
        "enum": ["a", "b"],
        "enumNames": ["Ay", "Bee"],
        "default": "a",
    }
    assert form_of(list[Color]).schema["properties"]["value"]["items"] == {
        "anyOf": [
            {"const": "red", "title": "Red"},
            {"const": "blue", "title": "Dark blue"},
        ]
    }
    with pytest.raises(FormError, match="a form holds str, int"):
        form_of(list[int])


def test_a_schema_forms_defaults_fill_what_the_answer_leaves_out() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
            "note": {"type": "string"},
        },
        "required": ["name"],
    }
    form = schema_form(schema)
    filled = form.read({})
    assert filled == {"name": "John Doe", "age": 30, "tags": ["a"]}
    filled["tags"].append("b")  # a copy: the schema's default is untouched
    assert schema["properties"]["tags"]["default"] == ["a"]
    assert form.read({"age": 41, "note": "hi"}) == {
        "name": "John Doe",
        "age": 41,
        "tags": ["a"],
        "note": "hi",
    }
    with pytest.raises(ValueError, match="is not of type 'integer'"):
        form.read({"age": "old"})  # a given value is checked, never replaced
    bad = schema_form(
        {"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}
    )
    with pytest.raises(ValueError, match="is not of type 'integer'"):
        bad.read({})  # a server's default that breaks its own schema: decline

    @tool
    async def asks(ctx: ToolContext) -> str:
        answer = await ctx.ask_form("Who?", schema)
        return json.dumps(answer.value, sort_keys=True)

    registry = ToolRegistry()
    registry.register(asks)
    agent = Agent("a")
    door = Door(answer=Answer("accept", {"age": 7}))
    sent = {"age": 7, "name": "John Doe", "tags": ["a"]}
    assert json.loads(text(run(call(registry, "asks", door=door, agent=agent)))) == sent
    answered = [e for e in agent.session.events if e["type"] == "tool/answer"]
    assert answered[-1]["data"]["content"] == sent


def test_ask_returns_typed_answers_and_declines_where_nobody_can_answer() -> None:
    seen: list[Answer] = []

    @tool
    async def pick(ctx: ToolContext) -> str:
        seen.append(await ctx.ask("Which file?", type=Literal["a.csv", "b.csv"]))
        seen.append(await ctx.ask("Options?", type=Options))
        return "ok"

    registry = ToolRegistry()
    registry.register(pick)
    run(call(registry, "pick"))  # no door that asks: decline
    assert seen == [Answer("decline"), Answer("decline")]
    seen.clear()
    agent = Agent("a")
    door = Door(answer=Answer("accept", {"value": "b.csv", "path": "x", "rows": 3}))
    run(call(registry, "pick", door=door, agent=agent))
    assert seen[0] == Answer("accept", "b.csv")
    assert seen[1].value == Options(path="x", rows=3)
    assert door.questions[0].message == "Which file?"
    types = [e["type"] for e in agent.session.events]
    assert types.count("tool/ask") == 2 and types.count("tool/answer") == 2


def test_an_answer_that_does_not_fit_the_form_is_a_decline() -> None:
    @tool
    async def number(ctx: ToolContext) -> str:
        return (await ctx.ask("How many?", type=int)).action

    registry = ToolRegistry()
    registry.register(number)
    door = Door(answer=Answer("accept", {"value": "many"}))
    assert text(run(call(registry, "number", door=door))) == "decline"


def test_an_abort_ends_a_pending_ask_as_cancel_and_a_sample_as_an_error() -> None:
    @tool
    async def waits(ctx: ToolContext) -> str:
        answer = await ctx.ask("Still there?", type=bool)
        try:
            await ctx.sample("hello")
        except Exception as exc:  # noqa: BLE001 - the test reads it
            return f"{answer.action}; {type(exc).__name__}: {exc}"
        return answer.action

    registry = ToolRegistry()
    registry.register(waits)
    door = Door(answer="forever", text=None)

    async def main() -> str:
        controller = AbortController()
        asyncio.get_running_loop().call_later(0.05, controller.abort, "stop")
        return text(await call(registry, "waits", door=door, signal=controller.signal))

    out = run(main())
    assert out.startswith("cancel; AbortError: the call was aborted")


def test_sample_asks_the_doors_model_or_fails_clearly() -> None:
    @tool
    async def summarise(ctx: ToolContext) -> str:
        return await ctx.sample("Summarise x", system="brief", max_tokens=20)

    registry = ToolRegistry()
    registry.register(summarise)
    result = run(call(registry, "summarise"))
    assert result.is_error
    assert "door has none to ask" in text(result)
    assert SamplingUnavailable.__name__ == "SamplingUnavailable"
    agent = Agent("s")
    door = Door(text="a summary")
    assert text(run(call(registry, "summarise", door=door, agent=agent))) == (
        "a summary"
    )
    assert door.samples[0].system == "brief" and door.samples[0].max_tokens == 20
    sampled = [e for e in agent.session.events if e["type"] == "tool/sampled"]
    assert sampled[0]["data"]["text"] == "a summary"


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"max_tokens": 0}, "max_tokens must be a positive int or None, not 0"),
        ({"max_tokens": True}, "max_tokens must be a positive int or None, not True"),
        ({"system": 3}, "system must be a str or None, not 3"),
    ],
)
def test_a_bad_sample_request_fails_before_any_door_hears_it(
    kwargs: dict[str, Any], why: str
) -> None:
    @tool
    async def summarise(ctx: ToolContext) -> str:
        return await ctx.sample("Summarise x", **kwargs)

    registry = ToolRegistry()
    registry.register(summarise)
    door = Door(text="a summary")
    result = run(call(registry, "summarise", door=door))
    assert result.is_error and why in text(result)
    assert door.samples == []


def test_a_hearer_that_raises_never_breaks_the_call() -> None:
    class Broken:
        def log(self, ctx: ToolContext, line: Any) -> None:
            raise RuntimeError("boom")

        def progress(self, ctx: ToolContext, report: Any) -> None:
            raise RuntimeError("boom")

    @tool
    async def fine(ctx: ToolContext) -> str:
        await ctx.progress(1, 1)
        print("printed")
        return "ok"

    registry = ToolRegistry()
    registry.register(fine)
    assert text(run(call(registry, "fine", door=Broken()))) == "ok"


def test_a_nested_call_without_a_door_talks_through_its_caller() -> None:
    registry = ToolRegistry()

    @tool
    async def inner() -> str:
        current_tool_context().log("from inner")
        return "in"

    @tool
    async def outer(ctx: ToolContext) -> str:
        from dsh_nb.tools import ToolExecutionInput

        result = await registry.execute(
            ToolExecutionInput(call_id="n1", name="inner", arguments={})
        )
        return text(result)

    registry.register(inner)
    registry.register(outer)
    door = Door()
    assert text(run(call(registry, "outer", door=door, wire_id="o1"))) == "in"
    assert door.lines == [("o1", "log", "info", "from inner")]


def test_replay_shows_the_journaled_progress_and_lines() -> None:
    from dsh_nb.notebook.replay import replay

    @tool
    async def talks(ctx: ToolContext) -> str:
        await ctx.progress(2, 4, "half")
        print("hello")
        return "ok"

    registry = ToolRegistry()
    registry.register(talks)
    agent = Agent("r")
    run(call(registry, "talks", door=Door(), agent=agent))
    cards = replay(agent.session, display=False)
    payload = cards[0].data["application/vnd.dsh.tool-card+json"]
    assert payload["talk"] == {
        "progress": {"progress": 2.0, "total": 4.0, "message": "half"},
        "lines": [{"level": "info", "text": "hello", "source": "stdout"}],
    }
    assert "hello" in cards[0].data["text/html"]


def test_replay_shows_what_a_sample_asked_and_the_model_answered() -> None:
    from dsh_nb.notebook.replay import replay

    @tool
    async def asks(ctx: ToolContext) -> str:
        return await ctx.sample("Summarise:\nrow 1\nrow 2")

    registry = ToolRegistry()
    registry.register(asks)
    agent = Agent("r")
    run(call(registry, "asks", door=Door(text="two rows"), agent=agent))
    cards = replay(agent.session, display=False)
    payload = cards[0].data["application/vnd.dsh.tool-card+json"]
    assert payload["talk"]["lines"] == [
        {"level": "info", "text": "asks the model: Summarise:", "source": "sample"},
        {"level": "info", "text": "row 1", "source": "sample"},
        {"level": "info", "text": "row 2", "source": "sample"},
        {"level": "info", "text": "the model answered: two rows", "source": "sample"},
    ]


def test_a_long_sample_is_bounded_in_the_card() -> None:
    from dsh_nb.cards.talk import sample_lines

    lines = sample_lines("the model answered", "\n".join(["x" * 600] * 30))
    assert len(lines) == 21 and lines[-1].text == "… 10 more lines"
    assert lines[0].text == "the model answered: " + "x" * 500 + "…"
    assert {line.source for line in lines} == {"sample"}
