"""variants= pairs cases; compare() says which is better, with McNemar's test."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from evalkit import sdk_client

from dsh_nb.evals import Case, EvalReport, call, run_eval
from dsh_nb.models.replay_server import RecordedRequest, ReplayServer
from dsh_nb.models.scripted import Reply, ToolCallSpec, Turn
from dsh_nb.tools import ToolRegistry, tool

CASES = 20
_ASK = re.compile(r"CASE-(\d+): the weather in (\w+)")


def weather(description: str) -> ToolRegistry:
    @tool(description=description)
    def get_weather(city: str, unit: str = "celsius") -> str:
        return "sunny"

    reg = ToolRegistry()
    reg.register(get_weather)
    return reg


def cases() -> list[Case]:
    return [
        Case(
            f"CASE-{k}: the weather in City{k} please",
            expect=call("get_weather", city=f"City{k}"),
            id=f"c{k:02d}",
        )
        for k in range(CASES)
    ]


def description(body: Any) -> str:
    tool = body["tools"][0]
    return str(tool.get("description") or tool["function"]["description"])


def answer(request: RecordedRequest) -> Reply:
    """Vague: right on every third case; precise: right but on case 19."""
    body = request.body
    if any(m["role"] == "assistant" for m in body["messages"]):
        return Turn(text="Done.")
    first = body["messages"][0]["content"]
    match = _ASK.search(first if isinstance(first, str) else first[0]["text"])
    assert match is not None
    k, city = int(match[1]), match[2]
    precise = "precise" in description(body)
    right = k != 19 if precise else k % 3 == 0
    args = {"city": city if right else city.lower()}
    return Turn(
        tool_calls=(ToolCallSpec(name="get_weather", arguments=json.dumps(args)),)
    )


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer(answer) as srv:
        yield srv


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_variants_are_paired_and_compared(
    provider: str, server: ReplayServer
) -> None:
    report = await run_eval(
        cases(),
        model="m",
        client=sdk_client(provider, server),
        provider=provider,
        variants={
            "vague": weather("Weather."),
            "precise": weather("The precise current weather; city as written."),
        },
        trials=2,
        progress=False,
    )
    assert report.variants == ("vague", "precise")
    assert len(report.trials) == 2 * 2 * CASES
    summaries = report.by_variant()
    assert summaries["vague"]["passed"].successes == 2 * 7
    assert summaries["precise"]["passed"].successes == 2 * 19
    comparison = report.compare()
    assert (comparison.a, comparison.b) == ("vague", "precise")
    assert (comparison.only_a, comparison.only_b) == (0, 12)
    assert (comparison.both, comparison.neither) == (7, 1)
    assert comparison.p_value == pytest.approx(2 / 2**12)
    assert comparison.better == "precise"
    assert comparison.n == CASES
    assert comparison.b_rate.successes == 19
    pair = next(c for c in comparison.cases if c.case_id == "c01")
    assert (pair.a, pair.b, pair.difference) == (0.0, 1.0, 1.0)
    assert "'precise' is better than 'vague'" in comparison.verdict()
    # The same comparison from two separate reports.
    apart = report.variant("vague").compare(report.variant("precise"))
    assert (apart.only_a, apart.only_b, apart.better) == (0, 12, "precise")
    html = report._repr_html_()
    assert "get_weather · vague" in html and "is better than" in html
    # Fewer discordant cases: no verdict.
    few = report.variant("vague").compare(
        EvalReport(
            [t for t in report.variant("precise").trials if t.case_id < "c04"],
            cases=report.cases,
            variants=("precise",),
        )
    )
    assert few.n == 4 and (few.only_a, few.only_b) == (0, 2)
    assert few.p_value == 0.5 and few.better is None
    assert "no significant difference" in few.verdict()


async def test_compare_needs_two_variants(server: ReplayServer) -> None:
    report = await run_eval(
        cases()[:2],
        model="m",
        client=sdk_client("openai", server),
        registry=weather("Weather."),
        progress=False,
    )
    with pytest.raises(ValueError, match="compares the two variants"):
        report.compare()
    with pytest.raises(KeyError, match="no variant 'x'"):
        report.variant("x")
    with pytest.raises(ValueError, match="metric must be one of"):
        report.compare(report, metric="recovered")
    same = report.compare(report)
    assert same.better is None and same.p_value == 1.0
