"""Record an evaluation's model traffic, and replay it with no network.

``record="run.jsonl"`` writes one JSON object a line: a ``start`` header
(provider, model, settings, case ids), an ``exchange`` per model request
(which variant, case, trial and step asked; the request as sent; the
response as the SDK read it, or the error; the seconds it took), a
``verdict`` per finished trial, and an ``end`` line.

``replay="run.jsonl"`` runs the same trials again, through the same
``Chat`` loop and pipeline, with each trial's client answering from the
recording instead of the network: the recorded body is read back into the
SDK's own response type, so the provider adapter parses exactly what it
parsed live. A request that differs from the recorded one (a tool's
description was edited since, another model) cannot be answered
faithfully; the run stops with a :class:`ReplayError` naming the trial.

What "the same request" means is :func:`~dsh_nb.evals.matchkey.match_key`.

No API key or header is recorded: only the request body the adapter built.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from typing import IO, Any

from dsh_nb.evals.matchkey import canonical, match_key
from dsh_nb.evals.recordfile import (
    FORMAT,
    Key,
    Recording,
    TrialKey,
    resumable,
    trial_order,
)
from dsh_nb.models.providers import Create, Provider, sdk_shaped
from dsh_nb.tools.audit.privatefile import check_private
from dsh_nb.tools.audit.secrets import redact_value

__all__ = [
    "FORMAT",
    "RecordedError",
    "Recorder",
    "Recording",
    "ReplayError",
    "TrialClient",
    "canonical",
    "match_key",
    "resumable",
]


class ReplayError(RuntimeError):
    """The recording cannot answer this run (a request differs, or is missing)."""


class RecordedError(Exception):
    """A failed request, raised again from the recording.

    Carries ``status_code`` and ``message`` like the SDKs' errors, so the
    trial's error text is the one the live run had.
    """

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status_code is not None:
            self.status_code = status_code


def _response_json(response: object) -> Any:
    to_dict = getattr(response, "to_dict", None)
    if callable(to_dict):
        return to_dict(mode="json")
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return json.loads(canonical(response))


class Recorder:
    """Writes a run's recording as it goes; every line is flushed.

    The file is written beside ``path`` and moved over it once the header
    (and, on a resume, the kept trials of ``resume``) are in, so an
    existing recording is never half overwritten; it is readable by its
    owner only (it holds prompts and tool results), and a link at ``path``
    is replaced, not followed. Every line is redacted of the registered
    secrets, as ``%tool_log --save`` redacts a session log.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: Mapping[str, Any],
        *,
        resume: Recording | None = None,
        kept: Iterable[TrialKey] = (),
    ) -> None:
        self.path = os.fspath(path)
        # Prompts and tool results: a private file, as a journal is; the
        # temporary file is created 0600 and moved over what is checked.
        check_private(self.path)
        folder = os.path.dirname(os.path.abspath(self.path))
        fd, temp = tempfile.mkstemp(prefix=".dsh-recording-", dir=folder)
        self._file: IO[str] | None = open(fd, "w", encoding="utf-8")
        try:
            self._write({"type": "start", "format": FORMAT, **header})
            if resume is not None:
                for trial in sorted(kept, key=trial_order):
                    for line in resume.lines.get(trial, ()):
                        self._write(line)
                    self.verdict(resume.verdicts[trial])
            os.replace(temp, self.path)
        except BaseException:
            self._file.close()
            self._file = None
            os.unlink(temp)
            raise

    def _write(self, obj: Mapping[str, Any]) -> None:
        if self._file is None:
            return
        self._file.write(canonical(redact_value(obj)) + "\n")
        self._file.flush()

    def exchange(
        self,
        key: Key,
        request: object,
        *,
        response: object = None,
        error: BaseException | None = None,
        elapsed: float,
    ) -> None:
        variant, case_id, trial, step = key
        line: dict[str, Any] = {
            "type": "exchange",
            "variant": variant,
            "case": case_id,
            "trial": trial,
            "step": step,
            "request": request,
            "elapsed": round(elapsed, 6),
        }
        if error is not None:
            status = getattr(error, "status_code", None)
            line["error"] = {
                "status": status if isinstance(status, int) else None,
                "message": str(getattr(error, "message", None) or error),
                "type": type(error).__name__,
            }
        else:
            line["response"] = _response_json(response)
        self._write(line)

    def verdict(self, result: Mapping[str, Any]) -> None:
        self._write({"type": "verdict", "result": result})

    def close(self, *, trials: int, interrupted: bool) -> None:
        self._write({"type": "end", "trials": trials, "interrupted": interrupted})
        if self._file is not None:
            self._file.close()
            self._file = None


def _difference(recorded: Any, sent: Any) -> str:
    """Which top-level part of a request changed, for the error."""
    if isinstance(recorded, dict) and isinstance(sent, dict):
        keys = sorted(
            k
            for k in set(recorded) | set(sent)
            if canonical(recorded.get(k)) != canonical(sent.get(k))
        )
        return ", ".join(keys) or "the request"
    return "the request"


class TrialClient:
    """The SDK client one trial's ``Chat`` talks to.

    It has every provider's request method (``chat.completions.create``,
    ``messages.create``: the provider table's ``request``). Live, it
    forwards to the real client and records; replaying, it answers from
    the recording.
    """

    def __init__(
        self,
        *,
        key: tuple[str | None, str, int],
        real: Any = None,
        recorder: Recorder | None = None,
        recording: Recording | None = None,
        provider: str = "openai",
    ) -> None:
        self.key = key
        self.real = real
        self.recorder = recorder
        self.recording = recording
        self.provider = provider
        self.step = 0
        #: Seconds the model took: measured live, as recorded on replay.
        self.model_time = 0.0
        #: Why the recording could not answer (the run stops on it).
        self.problem: str | None = None
        sdk_shaped(self, self._method)

    def _method(self, row: Provider) -> Create:
        async def create(**kwargs: Any) -> Any:
            return await self._create(row, kwargs)

        return create

    async def _create(self, row: Provider, kwargs: dict[str, Any]) -> Any:
        self.step += 1
        key: Key = (*self.key, self.step)
        if self.recording is not None:
            return self._replay(row, key, kwargs)
        create = row.request_method(self.real)
        started = time.perf_counter()
        try:
            response = await create(**kwargs)
        except Exception as exc:
            elapsed = time.perf_counter() - started
            self.model_time += elapsed
            if self.recorder is not None:
                request = json.loads(canonical(kwargs))
                self.recorder.exchange(key, request, error=exc, elapsed=elapsed)
            raise
        elapsed = time.perf_counter() - started
        self.model_time += elapsed
        if self.recorder is not None:
            request = json.loads(canonical(kwargs))
            self.recorder.exchange(key, request, response=response, elapsed=elapsed)
        return response

    def _replay(self, row: Provider, key: Key, kwargs: dict[str, Any]) -> Any:
        assert self.recording is not None
        variant, case_id, trial, step = key
        where = f"case {case_id!r} trial {trial} step {step}" + (
            f" (variant {variant!r})" if variant is not None else ""
        )
        found = self.recording.exchanges.get(key)
        if found is None:
            self.problem = (
                f"the recording has no answer for {where}; record the run again "
                "with the same cases, trials and variants"
            )
            raise ReplayError(self.problem)
        sent = match_key(json.loads(canonical(kwargs)))
        if sent != found.request:
            changed = _difference(json.loads(found.request), json.loads(sent))
            self.problem = (
                f"the request for {where} differs from the recording in: "
                f"{changed}; the tools, the prompt or the model changed since "
                "it was recorded: record it again"
            )
            raise ReplayError(self.problem)
        self.model_time += found.elapsed
        if found.error is not None:
            status = found.error.get("status")
            raise RecordedError(
                str(found.error.get("message", "")),
                status if isinstance(status, int) else None,
            )
        try:
            return row.parse_response(found.response)
        except ValueError as exc:  # pydantic's ValidationError is one
            self.problem = (
                f"{found.where}: the recorded response is not a {row.name} response "
                f"({str(exc).splitlines()[0][:200]})"
            )
            raise ReplayError(self.problem) from None
