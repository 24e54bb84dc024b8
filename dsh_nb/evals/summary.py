"""What a report shares with its HTML: the cases and the rates.

Kept apart from :mod:`dsh_nb.evals.report` so the report's HTML
(:mod:`dsh_nb.evals.reporthtml`) can use them without importing the
report back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from dsh_nb.evals.metrics import trial_metrics
from dsh_nb.evals.stats import Rate, wilson
from dsh_nb.evals.trial import TrialResult

if TYPE_CHECKING:
    from dsh_nb.evals.case import Case

__all__ = ["NO_CALL", "CaseInfo", "rates"]

#: The ``by_tool()`` key of cases that expect no call.
NO_CALL: Final = "(no call)"


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseInfo:
    """What a case asked and expected, as a report keeps it."""

    id: str
    prompt: str
    expect: str
    expected: tuple[str, ...]
    tags: tuple[str, ...] = ()
    display_names: Mapping[str, str] | None = None

    @classmethod
    def of(cls, case: Case, case_id: str) -> CaseInfo:
        from dsh_nb.evals.expect import expected_names

        return cls(
            id=case_id,
            prompt=(
                "\n".join(t.text for t in case.turns)
                if case.turns is not None
                else case.messages()[2]
            ),
            expect=case.expect.describe(),
            expected=tuple(expected_names(case.expect)),
            tags=tuple(case.tags),
            display_names=dict(case.display_names) or None,
        )

    def shown(self, name: str) -> str:
        """A tool's name as the report shows it (BFCL's dotted names)."""
        return (self.display_names or {}).get(name, name)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "prompt": self.prompt,
            "expect": self.expect,
            "expected": list(self.expected),
        }
        if self.tags:
            out["tags"] = list(self.tags)
        if self.display_names:
            out["displayNames"] = dict(self.display_names)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseInfo:
        """Read one saved case; a wrong field is a ``ValueError`` naming it."""
        from dsh_nb.evals import fields as f

        names = f.optional_object(data, "displayNames")
        lists = {}
        for key in ("expected", "tags"):
            value = data.get(key) or []
            if not isinstance(value, list) or not all(
                isinstance(v, str) for v in value
            ):
                raise ValueError(f"{key!r} must be a list of strings")
            lists[key] = tuple(value)
        if names is not None and not all(isinstance(v, str) for v in names.values()):
            raise ValueError("'displayNames' must map names to strings")
        return cls(
            id=f.need_str(data, "id"),
            prompt=f.optional_str(data, "prompt") or "",
            expect=f.optional_str(data, "expect") or "",
            expected=lists["expected"],
            tags=lists["tags"],
            display_names=names,
        )


def rates(trials: Iterable[TrialResult]) -> dict[str, Rate]:
    """Each metric rated over trials (:mod:`~dsh_nb.evals.metrics`) as a
    Rate over ``trials``."""
    answered = [t for t in trials if t.answered]
    out = {}
    for metric in trial_metrics():
        values = [metric.value(t) for t in answered]
        counted = [v for v in values if v is not None]
        out[metric.name] = wilson(sum(bool(v) for v in counted), len(counted))
    return out
