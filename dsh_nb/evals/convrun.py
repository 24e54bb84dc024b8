"""One trial of a conversation case: its turns, one ``Chat``, fresh state.

The trial builds its tools with the case's factory (so no two trials share
state, however many run at once), sends each user turn once the model has
finished the one before, and checks each turn as soon as it ends, while the
state is the state that turn left (BFCL checks after each turn too). The
model's requests go through the same :class:`~dsh_nb.evals.recording.TrialClient`
as a one-request trial, numbered across turns, so a conversation records
and replays like any trial: on replay the tools run again, for real, and
rebuild the same state.

A step's calls run one after another, in the order the model wrote them
(:class:`InOrderRunner`): with state, ``cd`` then ``mkdir`` is not ``mkdir``
then ``cd``. Every door runs a message's calls concurrently; a conversation
with stateful tools cannot.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dsh_nb.evals.answers import ScriptedAnswers
from dsh_nb.evals.conversation import (
    STATE,
    Broken,
    ConversationExpect,
    TrialTools,
    TurnView,
    _Calls,
    tools_of,
)
from dsh_nb.evals.dry import TrialCalls
from dsh_nb.evals.recording import ReplayError, TrialClient
from dsh_nb.evals.trial import CallRecord, TrialResult, calls_of
from dsh_nb.models.chat import Chat
from dsh_nb.models.usage import Usage
from dsh_nb.models.view import ChatView
from dsh_nb.tools.audit.session import Agent
from dsh_nb.tools.runner import CallAnswer, CallRunner, DoorCall

if TYPE_CHECKING:
    from dsh_nb.evals.case import Case
    from dsh_nb.tools.audit.session import SessionLog

__all__ = ["InOrderRunner", "play_turns", "run_conversation"]


class InOrderRunner(CallRunner):
    """A runner whose calls run one at a time, in the order they came.

    ``answer_calls`` starts a message's calls in order; an ``asyncio.Lock``
    queues its waiters first come, first served, so they also run in order.
    """

    def __init__(self, registry: Any, *, talk: object | None = None) -> None:
        super().__init__(registry, talk=talk)
        self._lock = asyncio.Lock()

    async def run(self, call: DoorCall, **kwargs: Any) -> CallAnswer:
        async with self._lock:
            return await super().run(call, **kwargs)


class _Marks(ChatView):
    """Notes the trial log's length as each request goes out."""

    def __init__(self, session: SessionLog) -> None:
        self.session = session
        self.marks: list[int] = []

    def begin_step(self, step: int) -> None:
        self.marks.append(len(self.session))


def _check(check: Any, view: TurnView) -> str | None:
    try:
        result = check.check(view)
    except Exception as exc:  # noqa: BLE001 - a broken check fails the trial
        return f"the check raised {type(exc).__name__}: {exc}"
    return None if result is None else str(result)


class _Grader:
    """Checks each turn as it ends, then the end; keeps the first break."""

    def __init__(self, expect: ConversationExpect, state: Any, factory: Any) -> None:
        self.expect = expect
        self.state = state
        self.memo: dict[str, Any] = {"factory": factory}
        self.per_turn: list[tuple[CallRecord, ...]] = []
        self.broken: Broken | None = None
        self.selected = self.correct = True

    def view(self, index: int, text: str, stop: str) -> TurnView:
        return TurnView(
            turn=index,
            calls=self.per_turn[-1] if self.per_turn else (),
            all_calls=tuple(self.per_turn),
            text=text,
            stop=stop,
            state=self.state,
            memo=self.memo,
        )

    def turn(
        self, index: int, calls: tuple[CallRecord, ...], text: str, stop: str
    ) -> None:
        self.per_turn.append(calls)
        check = self.expect.turns[index - 1]
        if check is None:
            return
        view = self.view(index, text, stop)
        why = _check(check, view)
        if isinstance(check, _Calls):
            self.selected = self.selected and check.graded(view)[0]
        if why is not None:
            self.correct = False
            self.broken = self.broken or Broken(index, check.describe(), why)

    def end(self, index: int, text: str, stop: str) -> None:
        view = self.view(index, text, stop)
        for check in self.expect.end:
            why = _check(check, view)
            if why is not None:
                self.broken = self.broken or Broken(0, check.describe(), why)


async def run_conversation(
    run: Any, case: Case, case_id: str, trial: int, variant: str | None, layer: Any
) -> TrialResult:
    """Run one trial of a conversation ``case`` (``run`` is the runner's)."""
    expect = case.expect
    turns = case.turns
    assert isinstance(expect, ConversationExpect) and turns is not None
    own: TrialCalls | None = None
    if case.factory is not None:
        made = tools_of(case.factory(), f"case {case_id!r}")
        own = layer = TrialCalls(made.registry, "real")
    else:
        made = TrialTools(layer.registry, layer.registry)
    agent = layer.agent(f"eval {case_id} #{trial}")
    client = TrialClient(
        key=(variant, case_id, trial),
        real=run.client,
        recorder=run.recorder,
        recording=run.recording,
        provider=run.provider,
    )
    marks = _Marks(agent.session)
    chat = Chat(
        run.model,
        client=client,
        provider=run.provider,
        system=case.system,
        runner=InOrderRunner(
            layer.registry,
            talk=None if case.answers is None else ScriptedAnswers(case.answers),
        ),
        agent=agent,
        max_steps=run.max_steps,
        stream=False,
        view=marks,
    )
    grader = _Grader(expect, made.state, case.factory)
    spans: list[int] = []
    error: str | None = None
    answered = True
    text, stop = "", "end"
    token = STATE.set(made.state)
    started = time.perf_counter()
    try:
        for index, turn in enumerate(turns, 1):
            if turn.tools is not None:
                chat.tools = turn.tools
            before = len(marks.marks)
            reply = await chat.send(turn.text)
            spans.append(len(marks.marks) - before)
            if reply.stop == "error":
                error = reply.error
                answered = not (index == 1 and reply.steps == 1)
                break
            text, stop = reply.text, reply.stop
            calls = calls_of(agent.session.events, marks.marks)
            now = len(marks.marks)
            grader.turn(
                index, tuple(c for c in calls if before < c.step <= now), text, stop
            )
        if error is None:
            grader.end(len(turns), text, stop)
    finally:
        STATE.reset(token)
        layer.release(agent)
        if own is not None:
            own.close()
    latency = time.perf_counter() - started
    if client.problem is not None:
        raise ReplayError(client.problem)
    if run.recording is not None:
        latency = client.model_time
    calls = calls_of(agent.session.events, marks.marks)
    valid = not any(c.refused for c in calls)
    broken = grader.broken
    passed = broken is None and error is None
    usage = Usage()
    for step in chat.step_usage:
        usage = usage + step
    return TrialResult(
        case_id=case_id,
        trial=trial,
        variant=variant,
        selected=grader.selected and answered and error is None,
        args_valid_first_try=valid,
        args_correct=grader.correct and answered and error is None,
        recovered=None if valid else passed,
        passed=passed,
        steps=len(marks.marks),
        latency=latency,
        usage=usage,
        calls=tuple(calls),
        error=error,
        answered=answered,
        messages=tuple(chat.messages),
        conversation={
            "turns": len(turns),
            "stepsPerTurn": spans,
            "broken": None if broken is None else broken.to_json(),
        },
    )


async def play_turns(
    case: Case, turns: Sequence[Sequence[tuple[str, Mapping[str, Any]]]]
) -> Broken | None:
    """Grade a conversation case on given calls, with no model.

    ``turns[i]`` are the calls made in turn ``i + 1``, ``(name, arguments)``
    each; they run in order through the pipeline on fresh tools (as a
    trial's would), then every check runs as in a trial. Returns where the
    conversation went wrong, or None. For checking a grader (BFCL's
    agreement test) and for a ground truth written as calls.
    """
    expect = case.expect
    if not isinstance(expect, ConversationExpect) or case.turns is None:
        raise TypeError(f"play_turns() grades a conversation case, not {case!r}")
    if len(turns) != len(case.turns):
        raise ValueError(f"{len(turns)} turns of calls for {len(case.turns)} turns")
    if case.factory is None:
        raise TypeError("play_turns() needs a case whose tools are a factory")
    made = tools_of(case.factory(), f"case {case.id!r}")
    talk = None if case.answers is None else ScriptedAnswers(case.answers)
    runner = CallRunner(made.registry, talk=talk)
    agent = Agent(f"play {case.id}")
    grader = _Grader(expect, made.state, case.factory)
    offered: tuple[str, ...] | None = None
    token = STATE.set(made.state)
    try:
        for index, (turn, calls) in enumerate(zip(case.turns, turns, strict=True), 1):
            offered = turn.tools if turn.tools is not None else offered
            records = []
            for n, (name, arguments) in enumerate(calls):
                answer = await runner.run(
                    DoorCall(name=name, arguments=dict(arguments), wire_id=f"p{n}"),
                    agent=agent,
                    door="chat",
                    offered=offered,
                )
                error = answer.result.error if answer.result.is_error else None
                records.append(
                    CallRecord(
                        step=index,
                        name=name,
                        arguments=dict(arguments),
                        status=answer.outcome.status,
                        stage=answer.outcome.stage,
                        code=getattr(error, "code", None),
                    )
                )
            grader.turn(index, tuple(records), "", "end")
        grader.end(len(turns), "", "end")
    finally:
        STATE.reset(token)
    return grader.broken
