"""The report reads well: a 950-pixel area, prompts, tags, names, bounds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from dsh_nb.evals import CallRecord, CaseInfo, EvalReport, TrialResult
from dsh_nb.evals.reporthtml import MAX_CARDS, MAX_FAILURE_HTML, MAX_LINES

CHROMIUM = Path(os.environ.get("DSH_E2E_CHROMIUM", "/usr/bin/chromium"))


def trial(case_id: str, n: int, passed: bool, **extra: Any) -> TrialResult:
    fields: dict[str, Any] = {
        "case_id": case_id,
        "trial": n,
        "variant": None,
        "selected": passed,
        "args_valid_first_try": True,
        "args_correct": passed,
        "recovered": None,
        "passed": passed,
        "steps": 1,
        "latency": 0.01,
    }
    fields.update(extra)
    return TrialResult(**fields)


def report(variants: tuple[str, ...] | None = None) -> EvalReport:
    long = "get_the_current_weather_conditions_for_a_city_" * 3
    cases = {
        f"c{i}": CaseInfo(
            id=f"c{i}",
            prompt=f"Question {i}: what is the weather in a city with a long name?",
            expect=f"{long}{i}(city='x')",
            expected=(f"{long}{i}",),
            tags=("weather", "easy") if i % 2 else ("weather",),
        )
        for i in range(4)
    }
    trials = []
    for name in variants or (None,):
        for i in range(4):
            for n in (1, 2, 3):
                trials.append(trial(f"c{i}", n, passed=(i + n) % 3 != 0, variant=name))
    return EvalReport(trials, cases=cases, variants=variants)


def test_failures_show_their_prompt() -> None:
    html = report()._repr_html_()
    summary = html.split("dsh-EvalFailure", 1)[1].split("</summary>", 1)[0]
    assert "“Question 0: what is the weather in a city" in summary


def test_by_tag_and_tags_in_pandas() -> None:
    r = report()
    tags = r.by_tag()
    assert sorted(tags) == ["easy", "weather"]
    assert tags["weather"]["passed"].n == 12
    assert tags["easy"]["passed"].n == 6  # cases 1 and 3
    assert tags["easy"]["passed"].successes == sum(
        t.passed for t in r.trials if t.case_id in ("c1", "c3")
    )
    assert "<b>by tag</b>" in r._repr_html_()
    pd = pytest.importorskip("pandas")
    frame = r.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["tags"][:4]) == [["weather"]] * 3 + [["weather", "easy"]]
    assert set(frame["state"]) == {"passed", "failed"}


def test_compare_takes_names() -> None:
    a, b = report(), report()
    comparison = a.compare(b, names=("vague", "precise"))
    assert (comparison.a, comparison.b) == ("vague", "precise")
    assert "'vague'" in comparison.verdict() and "this" not in comparison.verdict()
    both = report(("A", "B"))
    assert both.compare(names=("old", "new")).a == "old"
    for bad in (("x",), ("x", "x"), ["a", "b"], ("", "b")):
        with pytest.raises(ValueError, match="names= takes two different names"):
            a.compare(b, names=bad)  # type: ignore[arg-type]


def test_each_failure_is_bounded_and_says_what_was_cut() -> None:
    flood = tuple(
        CallRecord(
            step=1,
            name="spam",
            arguments={"blob": "z" * 3000},
            status="done",
            result={"content": [{"type": "text", "text": "y" * 3000}]},
        )
        for _ in range(400)
    )
    messages = tuple({"role": "user", "content": f"line {i}"} for i in range(500))
    one = trial("c0", 1, False, calls=flood, messages=messages)
    r = EvalReport([one], cases=report().cases)
    html = r._repr_html_()
    assert len(html) < MAX_FAILURE_HTML + 50_000
    assert f"… {500 - MAX_LINES:,} more lines not drawn" in html
    drawn = html.count("<div style='opacity:.7;font-size:85%'>step 1</div>")
    assert 0 < drawn <= MAX_CARDS
    assert f"… {400 - drawn:,} of 400 calls not drawn" in html


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium")
@pytest.mark.parametrize("variants", [None, ("vague description", "precise one")])
def test_the_report_fits_a_950_pixel_output_area(variants: Any) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    html = report(variants)._repr_html_()
    page_html = (
        "<html><body style='margin:0'><div id='out' style='width:950px;"
        f"font-family:sans-serif'>{html}</div></body></html>"
    )
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            headless=True,
            args=["--no-sandbox", "--disable-gpu"],
        )
        try:
            page = browser.new_page(viewport={"width": 950, "height": 800})
            page.set_content(page_html)
            page.evaluate(
                "document.querySelectorAll('details').forEach(d => d.open = true)"
            )
            widest = page.evaluate(
                "Math.max(document.documentElement.scrollWidth,"
                " ...[...document.querySelectorAll('#out table')]"
                ".map(t => t.getBoundingClientRect().right))"
            )
        finally:
            browser.close()
    assert widest <= 950, widest
