"""``run_eval``: every case, every trial, a fresh ``Chat`` through the pipeline.

A trial is one new conversation (:class:`~dsh_nb.models.Chat`) as its own
agent, on the registry the case uses: the case's own tools (a fresh
registry of them), else the variant's registry, else the run's. So the
calls go through that registry's pipeline, with its policies, guards,
listeners and timeouts, exactly as a model's calls do in a notebook; see
:mod:`dsh_nb.evals.dry` for what ``execute="dry"`` changes. Trials run
``concurrency`` at a time; the SDK client handles the provider's 429s and
retries as it was configured. Each trial is graded from its journal
(:mod:`dsh_nb.evals.trial`).

Jobs are ordered case by case, trial by trial, variant by variant, so an
interrupted run leaves pairs that compare. An interrupt (a cancellation)
stops the trials in flight, closes the recording, and propagates; the
trials already finished are in ``progress.results``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dsh_nb.evals.case import Case
from dsh_nb.evals.conversation import ConversationExpect
from dsh_nb.evals.convrun import run_conversation
from dsh_nb.evals.dry import TrialCalls
from dsh_nb.evals.practice import PracticeModel
from dsh_nb.evals.progress import EvalProgress, TextProgress
from dsh_nb.evals.recording import (
    Recorder,
    Recording,
    ReplayError,
    TrialClient,
    resumable,
)
from dsh_nb.evals.report import CaseInfo, EvalReport
from dsh_nb.evals.runargs import (
    case_ids,
    check_options,
    prior_messages,
    variant_registries,
)
from dsh_nb.evals.trial import TrialResult, measure
from dsh_nb.models.chat import Chat
from dsh_nb.models.view import ChatView
from dsh_nb.tools.audit.secrets import add_secret
from dsh_nb.tools.audit.session import SessionLog
from dsh_nb.tools.registry import ToolRegistry
from dsh_nb.tools.runner import run_together

__all__ = ["run_eval"]


@dataclass(frozen=True, slots=True)
class _Job:
    case: Case
    case_id: str
    trial: int
    variant: str | None
    layer: TrialCalls | None


class _StepMarks(ChatView):
    """Notes the trial log's length as each request goes out."""

    def __init__(self, session: SessionLog) -> None:
        self.session = session
        self.marks: list[int] = []

    def begin_step(self, step: int) -> None:
        self.marks.append(len(self.session))


def _jobs(
    cases: Sequence[Case],
    ids: Sequence[str],
    trials: int,
    layers: Mapping[str | None, TrialCalls | None],
    own: Mapping[str, TrialCalls],
) -> Iterator[_Job]:
    for case, case_id in zip(cases, ids, strict=True):
        for trial in range(1, trials + 1):
            for variant, layer in layers.items():
                chosen = own.get(case_id, layer)
                if chosen is None and case.factory is None:
                    raise ValueError(
                        f"case {case_id!r} brings no tools and the run has no "
                        "registry: pass registry= (or Case(tools=...))"
                    )
                yield _Job(case, case_id, trial, variant, chosen)


async def run_eval(
    cases: Sequence[Case],
    *,
    model: str | PracticeModel,
    client: Any = None,
    provider: str = "openai",
    registry: ToolRegistry | None = None,
    trials: int = 1,
    concurrency: int = 8,
    execute: str = "dry",
    max_steps: int = 3,
    record: str | None = None,
    replay: str | None = None,
    variants: Mapping[str, ToolRegistry] | None = None,
    progress: bool | EvalProgress = True,
    max_request_errors: int = 5,
) -> EvalReport:
    """Run every case ``trials`` times and grade each trial from its journal.

    Parameters
    ----------
    cases
        The :class:`~dsh_nb.evals.Case` list.
    model, client, provider
        As for :class:`~dsh_nb.models.Chat`; with no ``client`` one is built
        from the environment (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``).
        ``model`` may be a :class:`~dsh_nb.evals.PracticeModel` (such as
        ``oracle(cases)`` or ``noisy(cases, ...)``): a function plays the
        model, offline, with no key.
    registry
        Where calls run for cases that bring no tools of their own.
    trials, concurrency, max_steps
        Trials per case; trials at once; requests per trial.
    execute
        ``"dry"``: validate arguments, then answer a stub, never running a
        body (approvals are answered ``allowed-once``); ``"real"``: run.
    record, replay
        Write the run's requests, responses and verdicts to a JSONL file;
        or answer every request from such a file, with no network.
    variants
        ``{"name": registry}``: each case runs under each registry, paired.
    progress
        True for a text progress line on stderr, False for none, or an
        :class:`~dsh_nb.evals.progress.EvalProgress`.
    max_request_errors
        Stop after this many trials in a row ended in a failed model
        request (a wrong ``base_url``, a bad key): the report keeps the
        trials done, and ``report.meta["stopped"]`` says why.

    Returns
    -------
    EvalReport
        One :class:`~dsh_nb.evals.trial.TrialResult` per trial.
    """
    if isinstance(cases, Case) or not isinstance(cases, Sequence):
        raise TypeError("cases must be a list of Case")
    if isinstance(model, PracticeModel):
        if client is not None:
            raise ValueError("a practice model is its own client: pass no client=")
        model, client = model.name, model
    if not isinstance(model, str) or not model:
        raise ValueError(
            "run_eval needs model='NAME' (the model the endpoint knows), or a "
            "practice model: model=oracle(cases)"
        )
    check_options(provider, trials, concurrency, execute, max_steps)
    if type(max_request_errors) is not int or max_request_errors < 1:
        raise ValueError(
            f"max_request_errors must be a positive int, not {max_request_errors!r}"
        )
    if record is not None and replay is not None:
        raise ValueError("pass record= or replay=, not both")
    ids = case_ids(cases)
    chosen = variant_registries(variants, registry)
    recording = Recording.load(replay) if replay is not None else None
    if recording is not None and recording.provider != provider:
        raise ValueError(
            f"{replay} was recorded with provider {recording.provider!r}; "
            f"pass provider={recording.provider!r}"
        )
    for case, case_id in zip(cases, ids, strict=True):
        prior_messages(case_id, case.messages()[1], provider)
        if case.tools is not None and variants is not None:
            raise ValueError(
                f"case {case_id!r} brings its own tools, so every variant would "
                "run the same tools; variants= compares registries"
            )
        if case.factory is not None and execute != "real":
            raise ValueError(
                f"case {case_id!r} builds fresh tools with state for each trial; "
                'run it with execute="real"'
            )
    if recording is None and client is None:
        from dsh_nb.models.chat import make_client

        client = make_client(provider, None, None)
    # The trials talk to a wrapper, so Chat cannot see the key: register it
    # here, or an error body quoting it reaches the report (and the file).
    add_secret(getattr(client, "api_key", None))
    sink = _sink(progress)
    opened: list[TrialCalls] = []
    try:
        layers: dict[str | None, TrialCalls | None] = {}
        for name, reg in chosen.items():
            layer = TrialCalls(reg, execute) if reg is not None else None
            if layer is not None:
                opened.append(layer)
            layers[name] = layer
        own: dict[str, TrialCalls] = {}
        for case, case_id in zip(cases, ids, strict=True):
            if case.tools is not None and case.factory is None:
                own[case_id] = TrialCalls(_case_registry(case), execute)
                opened.append(own[case_id])
        jobs = list(_jobs(cases, ids, trials, layers, own))
        recorder = None
        prior, kept = None, set()
        if record is not None:
            header = {
                "provider": provider,
                "model": model,
                "execute": execute,
                "maxSteps": max_steps,
                "trials": trials,
                "variants": None if variants is None else list(chosen),
                "cases": ids,
            }
            prior = resumable(record, header)
            if prior is not None:
                wanted = {(j.variant, j.case_id, j.trial) for j in jobs}
                kept = prior.finished() & wanted
            recorder = Recorder(record, header, resume=prior, kept=kept)
        run = _Run(model, client, provider, max_steps, recorder, recording, sink)
        run.max_errors = max_request_errors
        run.prior, run.kept = prior, kept
        sink.start(len(jobs))
        interrupted = True
        try:
            await run.all(jobs, concurrency)
            interrupted = False
        finally:
            if recorder is not None:
                recorder.close(trials=len(sink.results), interrupted=interrupted)
            sink.end(interrupted=interrupted)
    finally:
        for layer in opened:
            layer.close()
    return EvalReport(
        _in_order(sink.results, jobs),
        cases={i: CaseInfo.of(c, i) for c, i in zip(cases, ids, strict=True)},
        variants=None if variants is None else tuple(chosen),  # type: ignore[arg-type]
        meta={
            "model": model,
            "provider": provider,
            "execute": execute,
            "maxSteps": max_steps,
            "trials": trials,
            "replayed": replay is not None,
            **({"resumed": len(kept)} if kept else {}),
            **({"stopped": sink.stopped} if sink.stopped else {}),
        },
    )


def _sink(progress: bool | EvalProgress) -> EvalProgress:
    if isinstance(progress, EvalProgress):
        return progress
    if progress is True:
        return TextProgress()
    if progress is False:
        return EvalProgress()
    raise TypeError(
        f"progress must be True, False or an EvalProgress, not {progress!r}"
    )


def _case_registry(case: Case) -> ToolRegistry:
    tools = case.tools
    if isinstance(tools, ToolRegistry):
        return tools
    registry = ToolRegistry()
    assert not callable(tools)
    for definition in tools or ():
        registry.register(definition)
    return registry


def _in_order(results: list[TrialResult], jobs: list[_Job]) -> list[TrialResult]:
    rank = {(j.case_id, j.trial, j.variant): n for n, j in enumerate(jobs)}
    return sorted(results, key=lambda r: rank[(r.case_id, r.trial, r.variant)])


class _Run:
    """The settings every trial of one run shares."""

    def __init__(
        self,
        model: str,
        client: Any,
        provider: str,
        max_steps: int,
        recorder: Recorder | None,
        recording: Recording | None,
        sink: EvalProgress,
    ) -> None:
        self.model = model
        self.client = client
        self.provider = provider
        self.max_steps = max_steps
        self.recorder = recorder
        self.recording = recording
        self.sink = sink
        self.max_errors = 5
        self._in_a_row = 0
        #: A resumed recording, and the trials it finished (not asked again).
        self.prior: Recording | None = None
        self.kept: set[tuple[str | None, str, int]] = set()

    async def all(self, jobs: list[_Job], concurrency: int) -> None:
        queue = iter(jobs)

        async def worker() -> None:
            for job in queue:  # one shared iterator: each job runs once
                if self.sink.stopped:
                    return
                result = await self.one(job)
                self.sink.trial(result)
                done = (job.variant, job.case_id, job.trial) in self.kept
                if self.recorder is not None and not done:
                    self.recorder.verdict(_without_messages(result))
                self._count(result)

        await run_together(worker() for _ in range(min(concurrency, len(jobs))))

    def _count(self, result: TrialResult) -> None:
        """Stop taking trials after ``max_errors`` request errors in a row."""
        self._in_a_row = self._in_a_row + 1 if result.error is not None else 0
        if self._in_a_row >= self.max_errors and not self.sink.stopped:
            self.sink.stopped = (
                f"stopped after {self._in_a_row} request errors in a row; "
                f"the last: {_bare(result.error or '')}"
            )

    async def one(self, job: _Job) -> TrialResult:
        case = job.case
        if case.turns is not None:
            return await run_conversation(
                self, case, job.case_id, job.trial, job.variant, job.layer
            )
        system, prior, text = case.messages()
        layer = job.layer
        expect = case.expect
        assert layer is not None and not isinstance(expect, ConversationExpect)
        agent = layer.agent(f"eval {job.case_id} #{job.trial}")
        key = (job.variant, job.case_id, job.trial)
        # A trial a resumed recording finished is answered from it, not asked.
        replaying = self.prior if key in self.kept else self.recording
        trial_client = TrialClient(
            key=key,
            real=self.client,
            recorder=None if key in self.kept else self.recorder,
            recording=replaying,
            provider=self.provider,
        )
        marks = _StepMarks(agent.session)
        chat = Chat(
            self.model,
            client=trial_client,
            provider=self.provider,
            system=system,
            runner=layer.runner_for(case.answers),
            agent=agent,
            max_steps=self.max_steps,
            stream=False,
            view=marks,
        )
        chat.messages.extend(prior_messages(job.case_id, prior, self.provider))
        started = time.perf_counter()
        try:
            reply = await chat.send(text)
        finally:
            layer.release(agent)
        latency = time.perf_counter() - started
        if trial_client.problem is not None:
            raise ReplayError(trial_client.problem)
        if replaying is not None:
            latency = trial_client.model_time  # as recorded: the same every replay
        error = reply.error if reply.stop == "error" else None
        return measure(
            expect,
            agent.session.events,
            marks.marks,
            case_id=job.case_id,
            trial=job.trial,
            variant=job.variant,
            steps=reply.steps,
            latency=latency,
            usage=reply.usage,
            error=error,
            answered=not (error is not None and reply.steps == 1),
            messages=chat.messages,
        )


def _bare(error: str) -> str:
    """An error text without its ``Error: `` lead, to quote it once."""
    return error.removeprefix("Error: ")


def _without_messages(result: TrialResult) -> dict[str, Any]:
    data = result.to_json()
    data.pop("messages", None)  # the exchanges already hold the conversation
    return data
