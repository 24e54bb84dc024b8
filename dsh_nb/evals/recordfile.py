"""A recording read back: its header, exchanges and verdicts, checked.

:class:`Recording` is what ``replay=`` answers from and what a resumed
``record=`` keeps (see :mod:`dsh_nb.evals.recording` for the format). A
malformed file fails as one ``ValueError`` naming the file and the line,
never a ``KeyError`` in the middle of a run; a FIFO or a device is refused
before it is opened.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from dsh_nb.evals.matchkey import match_key
from dsh_nb.models.providers import PROVIDERS
from dsh_nb.tools.audit.journalfile import json_object, not_regular
from dsh_nb.tools.audit.privatefile import check_private

__all__ = ["FORMAT", "Key", "Recording", "TrialKey", "resumable", "trial_order"]

FORMAT: Final = "dsh-eval-recording/1"

Key = tuple[str | None, str, int, int]  # variant, case id, trial, step
TrialKey = tuple[str | None, str, int]  # variant, case id, trial


@dataclass(frozen=True, slots=True)
class _Exchange:
    request: str  # the match key
    response: Any
    error: Mapping[str, Any] | None
    elapsed: float
    where: str = ""  # path:line, for an error about it


class Recording:
    """A recording read back: its header, its exchanges by trial step, and
    the verdicts of the trials it finished (with their raw lines, so a
    resumed run can copy them)."""

    def __init__(
        self,
        header: Mapping[str, Any],
        exchanges: dict[Key, _Exchange],
        verdicts: dict[TrialKey, Mapping[str, Any]] | None = None,
        lines: dict[TrialKey, list[Mapping[str, Any]]] | None = None,
    ):
        self.header = dict(header)
        self.exchanges = exchanges
        self.verdicts = dict(verdicts or {})
        self.lines = dict(lines or {})

    @property
    def provider(self) -> str:
        return str(self.header.get("provider", PROVIDERS[0]))

    def finished(self) -> set[TrialKey]:
        """Trials with a verdict and no request error (a resume keeps them)."""
        return {k for k, v in self.verdicts.items() if v.get("error") is None}

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Recording:
        """Read ``path``; a malformed line fails as one ``ValueError`` that
        names the file and the line."""
        name = os.fspath(path)
        _regular(name)
        header: dict[str, Any] | None = None
        exchanges: dict[Key, _Exchange] = {}
        verdicts: dict[TrialKey, Mapping[str, Any]] = {}
        lines: dict[TrialKey, list[Mapping[str, Any]]] = {}
        with open(name, encoding="utf-8") as fh:
            for number, text in enumerate(fh, 1):
                if not text.strip():
                    continue
                where = f"{name}:{number}"
                try:
                    obj = json_object(text, where, "a line")
                    kind = obj.get("type")
                    if header is None:
                        if kind != "start" or obj.get("format") != FORMAT:
                            raise ValueError(
                                f"{name} is not an evaluation recording "
                                f"(its first line must be a {FORMAT!r} start "
                                "line); record one with run_eval(..., record=PATH)"
                            )
                        header = obj
                    elif kind == "exchange":
                        key, exchange = _exchange(obj, where)
                        exchanges[key] = exchange
                        lines.setdefault(key[:3], []).append(obj)
                    elif kind == "verdict":
                        result = obj.get("result")
                        if not isinstance(result, dict):
                            raise ValueError("a verdict's result must be an object")
                        trial = (
                            _variant(result.get("variant")),
                            _text(result["caseId"]),
                            _count(result["trial"]),
                        )
                        verdicts[trial] = result
                except ValueError as exc:
                    text = str(exc)
                    raise ValueError(
                        text if text.startswith(name) else f"{where}: {text}"
                    ) from None
                except (KeyError, TypeError, OverflowError, RecursionError) as exc:
                    what = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
                    raise ValueError(
                        f"{where}: not a recording line ({type(exc).__name__}: "
                        f"{what[:200]})"
                    ) from None
        if header is None:
            raise ValueError(f"{name} is empty; record one with run_eval(record=...)")
        for trial in verdicts:
            lines.setdefault(trial, [])
        return cls(header, exchanges, verdicts, lines)


_SAME: Final = ("provider", "model", "execute", "maxSteps")


def resumable(path: str, header: Mapping[str, Any]) -> Recording | None:
    """The recording at ``path`` to resume, None when there is none yet.

    A resumed run keeps the trials the file finished (a verdict with no
    request error), asks the rest, and rewrites the file with both. The
    settings that change an answer must be the file's. What is at the path
    must be a private file (or nothing), before anything is read or asked.
    """
    check_private(path)
    if not os.path.exists(path) or (
        os.path.isfile(path) and os.path.getsize(path) == 0
    ):
        return None
    try:
        prior = Recording.load(path)
    except ValueError as exc:
        raise ValueError(
            f"{path} exists and cannot be resumed ({exc}); record= resumes its "
            "own recording and overwrites nothing else: remove the file or "
            "pick another path"
        ) from None
    for key in _SAME:
        if prior.header.get(key) != header.get(key):
            raise ValueError(
                f"{path} was recorded with {key} {prior.header.get(key)!r}, "
                f"and this run has {header.get(key)!r}: a run resumes only "
                "its own recording; record to another file"
            )
    return prior


def trial_order(trial: TrialKey) -> tuple[str, str, int]:
    variant, case_id, number = trial
    return (variant or "", case_id, number)


def _regular(path: str) -> None:
    """Refuse a FIFO or a device: reading it would block or never end."""
    what = not_regular(path)
    if what is not None:
        raise ValueError(f"{what}; pass a recording file")


def _variant(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"a variant is a string or null, not {value!r:.80}")


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    raise ValueError(f"a case id is a string, not {value!r:.80}")


def _count(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value < 2**31:
        return value
    raise ValueError(f"a trial or step is a positive integer, not {value!r:.80}")


def _exchange(obj: Mapping[str, Any], where: str) -> tuple[Key, _Exchange]:
    key: Key = (
        _variant(obj.get("variant")),
        _text(obj["case"]),
        _count(obj["trial"]),
        _count(obj["step"]),
    )
    error = obj.get("error")
    if error is not None and not isinstance(error, dict):
        raise ValueError("an exchange's error must be an object")
    if error is None and not isinstance(obj.get("response"), dict):
        raise ValueError("an exchange needs a response object or an error")
    elapsed = obj.get("elapsed") or 0.0
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)):
        raise ValueError(f"elapsed must be a number, not {elapsed!r:.80}")
    exchange = _Exchange(
        match_key(obj.get("request")),
        obj.get("response"),
        error,
        float(elapsed),
        where,
    )
    return key, exchange
