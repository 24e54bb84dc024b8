"""Token counts, per step and in total, as the provider reported them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Usage", "openai_usage", "anthropic_usage"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Tokens one request (or a sum of them) used; zero when not reported."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            requests=self.requests + other.requests,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def footer(self, steps: int | None = None) -> str:
        """The one-line footer: ``2 steps · 120 in · 45 out tokens``."""
        parts: list[str] = []
        if steps is not None:
            parts.append(f"{steps} step" + ("" if steps == 1 else "s"))
        parts.append(f"{self.input_tokens:,} in")
        parts.append(f"{self.output_tokens:,} out tokens")
        if self.reasoning_tokens:
            parts.append(f"{self.reasoning_tokens:,} reasoning")
        if self.cached_tokens:
            parts.append(f"{self.cached_tokens:,} cached")
        return " · ".join(parts)

    def to_json(self) -> dict[str, int]:
        """The counts as a plain dict."""
        return {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "reasoningTokens": self.reasoning_tokens,
            "cachedTokens": self.cached_tokens,
            "requests": self.requests,
        }


def _int(obj: Any, key: str) -> int:
    if obj is None:
        return 0
    value = obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def openai_usage(usage: Any) -> Usage:
    """Read a Chat Completions ``usage`` (SDK object or dict; DeepSeek too)."""
    if usage is None:
        return Usage(requests=1)
    details = getattr(usage, "completion_tokens_details", None)
    prompt = getattr(usage, "prompt_tokens_details", None)
    extra = getattr(usage, "model_extra", None) or {}
    cached = _int(prompt, "cached_tokens") or _int(extra, "prompt_cache_hit_tokens")
    return Usage(
        input_tokens=_int(usage, "prompt_tokens"),
        output_tokens=_int(usage, "completion_tokens"),
        reasoning_tokens=_int(details, "reasoning_tokens"),
        cached_tokens=cached,
        requests=1,
    )


def anthropic_usage(usage: Any) -> Usage:
    """Read a Messages API ``usage`` (SDK object or dict)."""
    if usage is None:
        return Usage(requests=1)
    return Usage(
        input_tokens=_int(usage, "input_tokens"),
        output_tokens=_int(usage, "output_tokens"),
        cached_tokens=_int(usage, "cache_read_input_tokens"),
        requests=1,
    )
