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

What "the same request" means is :func:`match_key`: the request body as
the adapter built it, in canonical JSON, less what cannot change the
model's answer and differs between where a run happens. Today that is the
approval-policy marker (``<approval-policy value="ask"/>``) a kernel's
registry adds to the system prompt and a script's has not: a recording
made by ``%tool_eval`` replays in a script or CI, and the other way round.
The ``never`` policy's sentence stays in the key: it tells the model
something, so a change of it must be recorded again.

No API key or header is recorded: only the request body the adapter built.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, Final

from dsh_nb.tools.audit.journalfile import read_objects

__all__ = [
    "FORMAT",
    "RecordedError",
    "Recorder",
    "Recording",
    "ReplayError",
    "TrialClient",
    "comparable",
    "match_key",
]

FORMAT: Final = "dsh-eval-recording/1"

Key = tuple[str | None, str, int, int]  # variant, case id, trial, step


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


_MARKER: Final = re.compile(r'\s*<approval-policy value="[^"<>]*"/>')


def _unmarked(text: str) -> str:
    return _MARKER.sub("", text).strip() if "<approval-policy" in text else text


def comparable(request: Any) -> Any:
    """The request less the approval-policy marker (see the module doc)."""
    if not isinstance(request, Mapping):
        return request
    out = dict(request)
    system = out.get("system")
    if isinstance(system, str):
        out["system"] = _unmarked(system)
        if not out["system"]:
            del out["system"]
    elif isinstance(system, list):
        blocks = [
            {**b, "text": _unmarked(b["text"])}
            if isinstance(b, Mapping) and isinstance(b.get("text"), str)
            else b
            for b in system
        ]
        blocks = [
            b for b in blocks if not (isinstance(b, Mapping) and b.get("text") == "")
        ]
        if blocks:
            out["system"] = blocks
        else:
            del out["system"]
    messages = out.get("messages")
    if isinstance(messages, list):
        kept = []
        for message in messages:
            if (
                isinstance(message, Mapping)
                and message.get("role") in ("system", "developer")
                and isinstance(message.get("content"), str)
            ):
                content = _unmarked(message["content"])
                if not content:
                    continue
                message = {**message, "content": content}
            kept.append(message)
        out["messages"] = kept
    return out


def match_key(request: Any) -> str:
    """What a replayed request must equal: :func:`comparable`, canonical."""
    return canonical(comparable(request))


def canonical(value: object) -> str:
    """One JSON text per value: how requests are compared and written."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=_plain)


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (list, tuple, frozenset, set)):
        return list(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    raise TypeError(f"not JSON: {type(value).__name__}")


def _response_json(response: object) -> Any:
    to_dict = getattr(response, "to_dict", None)
    if callable(to_dict):
        return to_dict(mode="json")
    dump = getattr(response, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return json.loads(canonical(response))


class Recorder:
    """Writes a run's recording as it goes; every line is flushed."""

    def __init__(self, path: str | os.PathLike[str], header: Mapping[str, Any]) -> None:
        self.path = os.fspath(path)
        self._file: IO[str] | None = open(self.path, "w", encoding="utf-8")
        self._write({"type": "start", "format": FORMAT, **header})

    def _write(self, obj: Mapping[str, Any]) -> None:
        if self._file is None:
            return
        self._file.write(canonical(obj) + "\n")
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


@dataclass(frozen=True, slots=True)
class _Exchange:
    request: str  # canonical JSON
    response: Any
    error: Mapping[str, Any] | None
    elapsed: float


class Recording:
    """A recording read back: its header and its exchanges by trial step."""

    def __init__(self, header: Mapping[str, Any], exchanges: dict[Key, _Exchange]):
        self.header = dict(header)
        self.exchanges = exchanges

    @property
    def provider(self) -> str:
        return str(self.header.get("provider", "openai"))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Recording:
        """Read ``path``; a file that is not a recording fails naming the line."""
        header: dict[str, Any] | None = None
        exchanges: dict[Key, _Exchange] = {}
        for obj in read_objects(path, what="a line"):
            kind = obj.get("type")
            if header is None:
                if kind != "start" or obj.get("format") != FORMAT:
                    raise ValueError(
                        f"{path} is not an evaluation recording "
                        f"(its first line must be a {FORMAT!r} start line); "
                        "record one with run_eval(..., record=PATH)"
                    )
                header = obj
            elif kind == "exchange":
                key: Key = (
                    obj.get("variant"),
                    str(obj["case"]),
                    int(obj["trial"]),
                    int(obj["step"]),
                )
                exchanges[key] = _Exchange(
                    match_key(obj.get("request")),
                    obj.get("response"),
                    obj.get("error"),
                    float(obj.get("elapsed") or 0.0),
                )
        if header is None:
            raise ValueError(f"{path} is empty; record one with run_eval(record=...)")
        return cls(header, exchanges)


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

    It has the two methods the adapters call (``chat.completions.create``
    and ``messages.create``). Live, it forwards to the real client and
    records; replaying, it answers from the recording.
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
        self.chat = _Namespace(completions=_Namespace(create=self._openai))
        self.messages = _Namespace(create=self._anthropic)

    async def _openai(self, **kwargs: Any) -> Any:
        return await self._create("openai", kwargs)

    async def _anthropic(self, **kwargs: Any) -> Any:
        return await self._create("anthropic", kwargs)

    async def _create(self, api: str, kwargs: dict[str, Any]) -> Any:
        self.step += 1
        key: Key = (*self.key, self.step)
        if self.recording is not None:
            return self._replay(api, key, kwargs)
        if api == "openai":
            create = self.real.chat.completions.create
        else:
            create = self.real.messages.create
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

    def _replay(self, api: str, key: Key, kwargs: dict[str, Any]) -> Any:
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
        return _sdk_response(api, found.response)


def _sdk_response(api: str, body: Any) -> Any:
    """The recorded body as the SDK's own response object."""
    if api == "openai":
        from openai.types.chat import ChatCompletion

        return ChatCompletion.model_validate(body)
    from anthropic.types import Message

    return Message.model_validate(body)


class _Namespace:
    def __init__(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)
