"""The report's HTML: every string a case, model or tool wrote is escaped."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from xss_payloads import PAYLOADS

from dsh_nb.cards.escape import visible
from dsh_nb.cards.markup import THEME_STYLE
from dsh_nb.evals import CallRecord, CaseInfo, EvalReport, TrialResult
from dsh_nb.evals.reporthtml import MAX_FAILURES

TAGS = {
    "div",
    "span",
    "pre",
    "details",
    "summary",
    "table",
    "tbody",
    "tr",
    "td",
    "th",
    "ul",
    "li",
    "code",
    "b",
    "p",
}
ATTRS = {"class", "style", "colspan"}


class Checked(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, value in attrs:
            if name not in ATTRS:
                self.problems.append(f"attribute {name}={value!r} on <{tag}>")
            elif value and ("url(" in value or "expression(" in value):
                self.problems.append(f"style {value!r}")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def hostile_report(payload: str) -> EvalReport:
    record = CallRecord(
        step=1,
        name=payload,
        arguments={payload: payload},
        status="error",
        code="INVALID_ARGS",
        result={
            "callId": "c",
            "content": [{"type": "text", "text": payload}],
            "isError": True,
        },
    )
    trial = TrialResult(
        case_id=payload,
        trial=1,
        variant=payload,
        selected=False,
        args_valid_first_try=False,
        args_correct=False,
        recovered=False,
        passed=False,
        steps=1,
        latency=0.1,
        calls=(record,),
        error=payload,
        messages=(
            {"role": "user", "content": payload},
            {
                "role": "assistant",
                "content": payload,
                "tool_calls": [
                    {"id": "c", "function": {"name": payload, "arguments": payload}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": payload},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": payload},
                    {"type": "tool_use", "id": "t", "name": payload, "input": {}},
                ],
            },
        ),
    )
    info = CaseInfo(
        id=payload,
        prompt=payload,
        expect=payload,
        expected=(payload,),
        tags=(payload,),
        display_names={payload: payload},
    )
    return EvalReport(
        [trial],
        cases={payload: info},
        variants=(payload,),
        meta={"model": payload, "provider": payload, "execute": payload},
    )


@pytest.mark.parametrize(("name", "payload"), PAYLOADS)
def test_hostile_strings_stay_text(name: str, payload: str) -> None:
    # The cards' theme block is one constant; no payload adds another.
    html = hostile_report(payload)._repr_html_().replace(THEME_STYLE, "")
    assert "<style" not in html
    parser = Checked()
    parser.feed(html)
    parser.close()
    assert parser.problems == [], name
    assert visible(payload).strip()[:20] in "".join(parser.text)


def test_failures_are_capped() -> None:
    report = hostile_report("x")
    trial = report.trials[0]
    many = EvalReport(
        [
            TrialResult(
                **{
                    **{f: getattr(trial, f) for f in trial.__dataclass_fields__},
                    "trial": i,
                }
            )
            for i in range(1, MAX_FAILURES + 11)
        ],
        cases=report.cases,
        variants=report.variants,
    )
    html = many._repr_html_()
    assert html.count("dsh-EvalFailure") == MAX_FAILURES
    assert "… and 10 more" in html


@pytest.mark.parametrize(("name", "payload"), PAYLOADS[:12])
def test_a_comparison_escapes_its_names(name: str, payload: str) -> None:
    from dsh_nb.evals.compare import compare_trials

    trial = hostile_report(payload).trials[0]
    comparison = compare_trials(payload, [trial], payload + "2", [trial])
    parser = Checked()
    parser.feed(comparison._repr_html_())
    parser.close()
    assert parser.problems == [], name


def test_to_pandas_has_one_row_per_trial() -> None:
    pd = pytest.importorskip("pandas")
    frame = hostile_report("x").to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["case_id"]) == ["x"] and not frame["passed"].any()
    assert {"selected", "recovered", "latency", "input_tokens"} <= set(frame.columns)
