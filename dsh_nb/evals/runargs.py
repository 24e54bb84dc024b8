"""``run_eval``'s arguments, checked before anything runs.

Every mistake a caller can make with a run's options fails here, at once,
with a message that names the fix, instead of as a confusing trial error
a thousand trials later.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_nb.evals.case import Case
from dsh_nb.evals.dry import EXECUTE_MODES
from dsh_nb.models.providers import provider_row
from dsh_nb.tools.registry import ToolRegistry

__all__ = ["case_ids", "check_options", "prior_messages", "variant_registries"]


def case_ids(cases: Sequence[Case]) -> list[str]:
    ids: list[str] = []
    seen: set[str] = set()
    for index, case in enumerate(cases):
        if not isinstance(case, Case):
            raise TypeError(
                f"cases[{index}] is a {type(case).__name__}, not a Case; "
                "build cases with Case(prompt, expect=call(...))"
            )
        case_id = case.id if case.id is not None else f"case-{index + 1}"
        if case_id in seen:
            raise ValueError(f"two cases have the id {case_id!r}; ids must be unique")
        seen.add(case_id)
        ids.append(case_id)
    return ids


def check_options(
    provider: str, trials: int, concurrency: int, execute: str, max_steps: int
) -> None:
    provider_row(provider)
    for name, value in (
        ("trials", trials),
        ("concurrency", concurrency),
        ("max_steps", max_steps),
    ):
        if type(value) is not int or value < 1:
            raise ValueError(f"{name} must be a positive int, not {value!r}")
    if execute not in EXECUTE_MODES:
        raise ValueError(f'execute must be "dry" or "real", not {execute!r}')


def variant_registries(
    variants: Mapping[str, ToolRegistry] | None, registry: ToolRegistry | None
) -> dict[str | None, ToolRegistry | None]:
    if variants is None:
        return {None: registry}
    out: dict[str | None, ToolRegistry | None] = {}
    if registry is not None:
        raise ValueError("pass registry= or variants=, not both")
    if not isinstance(variants, Mapping) or not variants:
        raise ValueError("variants= maps names to registries: {'A': reg_a, ...}")
    for name, reg in variants.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"a variant's name must be a non-empty str, not {name!r}")
        if not isinstance(reg, ToolRegistry):
            raise TypeError(f"variant {name!r} must be a ToolRegistry, not {reg!r}")
    out.update(variants)
    return out


def prior_messages(
    case_id: str, prior: list[dict[str, Any]], provider: str
) -> list[Any]:
    """Earlier conversation of a case, in the provider's wire form."""
    try:
        return provider_row(provider).adapter_class().earlier(prior)
    except ValueError as exc:
        raise ValueError(f"case {case_id!r}: {exc}") from None
