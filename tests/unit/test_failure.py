"""What the pipeline keeps of a body that raised, through ``registry.run``.

The model's result stays ``Error: <message>`` with no ``error`` info; the
run's ``failure`` holds the type, message and traceback (dsh_nb's frames
collapsed, bounded, redacted), and the journal's ``tool/result`` the type
and traceback. Routed errors (bad arguments) have no failure.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dsh_nb.tools import Agent, ToolExecutionInput, ToolRegistry, tool
from dsh_nb.tools.audit.failure import failure_of
from dsh_nb.tools.audit.secrets import add_secret
from dsh_nb.tools.modeltext import result_text


def _inner(x: int) -> float:
    return 1 / x


def divide(x: int) -> float:
    """Divide, with a cause."""
    try:
        return _inner(x)
    except ZeroDivisionError as exc:
        raise ValueError("x must not be 0") from exc


async def _run(func: Any, threads: bool, **args: Any) -> Any:
    registry = ToolRegistry(sync_tools="thread" if threads else "inline")
    registry.register(tool(func))
    agent = Agent("a")
    run = await registry.run(
        ToolExecutionInput(call_id="c", name=func.__name__, arguments=args, agent=agent)
    )
    return run, agent


def test_the_failure_rides_beside_the_models_error() -> None:
    for threads in (False, True):
        run, agent = asyncio.run(_run(divide, threads, x=0))
        assert result_text(run.result) == "Error: x must not be 0"
        assert run.result.error is None  # a plain exception: no error info
        failure = run.failure
        assert (failure.type, failure.message) == ("ValueError", "x must not be 0")
        text = failure.traceback
        assert "ZeroDivisionError: division by zero" in text
        assert "direct cause" in text and "in _inner" in text
        assert "dsh_nb frames: the call's pipeline]" in text
        assert "dsh_nb/tools/" not in text
        assert failure.exception is not None
        event = [e for e in agent.session.events if e["type"] == "tool/result"][-1]
        assert event["data"]["exception"]["type"] == "ValueError"
        assert event["data"]["exception"]["traceback"] == text


def test_bad_arguments_and_success_have_no_failure() -> None:
    run, _ = asyncio.run(_run(divide, False, x="no"))
    assert run.result.is_error and run.failure is None
    run, agent = asyncio.run(_run(divide, False, x=2))
    assert run.failure is None
    event = [e for e in agent.session.events if e["type"] == "tool/result"][-1]
    assert "exception" not in event["data"]


def test_failure_text_is_bounded_redacted_and_total() -> None:
    secret = "sk-unit-" + "9" * 24
    undo = add_secret(secret)
    try:
        try:
            raise KeyError(f"{secret} " + "x" * 50_000)
        except KeyError as exc:
            failure = failure_of(exc, limit=2_000)
    finally:
        undo()
    assert secret not in failure.traceback and secret not in failure.message
    assert len(failure.traceback) < 2_200 and "characters cut" in failure.traceback

    class Hostile(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    failure = failure_of(Hostile())
    assert failure.message == "<unprintable exception>"
    assert failure.type.endswith("Hostile")
