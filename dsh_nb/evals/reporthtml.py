"""An evaluation report as self-contained HTML: rates, bars, failures.

What a notebook shows for an :class:`~dsh_nb.evals.report.EvalReport`:
a table of rates with an inline bar each (per variant when there are
several), the same per expected tool, and each failure as a
``<details>`` that opens onto the case, the conversation and the cards of
its calls (drawn by :mod:`dsh_nb.cards`, as the live cards are). Inline
styles with JupyterLab's theme variables, no script. Every string that
came from a case, a model or a tool goes through the cards' one escape,
:func:`~dsh_nb.cards.escape.esc`. At most :data:`MAX_FAILURES` failures
are drawn, so a 10,000-trial report stays a page, not a download.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

from dsh_nb.cards.arguments import value_text
from dsh_nb.cards.escape import esc
from dsh_nb.evals.compare import Comparison
from dsh_nb.evals.metrics import trial_metrics
from dsh_nb.evals.stats import Rate
from dsh_nb.evals.summary import CaseInfo
from dsh_nb.evals.trial import CallRecord, TrialResult

__all__ = [
    "MAX_CARDS",
    "MAX_FAILURES",
    "MAX_FAILURE_HTML",
    "MAX_LINES",
    "DrawnReport",
    "failure_reason",
    "report_html",
]

MAX_FAILURES: Final = 25
#: Per failure: conversation lines and call cards drawn, and an HTML budget
#: (a model flooding parallel calls must not make a report of megabytes).
MAX_LINES: Final = 40
MAX_CARDS: Final = 12
MAX_FAILURE_HTML: Final = 120_000
_MAX_TEXT: Final = 2000
_PROMPT_SHOWN: Final = 90
_CELL: Final = "padding:3px 6px;text-align:left;vertical-align:top"
# A name may be long (a tool, a variant): it wraps rather than widen the table.
_NAME: Final = _CELL + ";overflow-wrap:anywhere;max-width:16em"
_MUTED: Final = "opacity:.7"
_RED: Final = "color:var(--jp-error-color1,#d32f2f)"


class DrawnReport(Protocol):
    """What the HTML reads of a report (:class:`~dsh_nb.evals.EvalReport`).

    Declared here, by the reader, so this module never imports the report
    that imports it to draw itself: no circle, type-only imports included.
    """

    @property
    def meta(self) -> Mapping[str, Any]: ...
    @property
    def trials(self) -> Sequence[TrialResult]: ...
    @property
    def cases(self) -> Mapping[str, CaseInfo]: ...
    @property
    def variants(self) -> Sequence[str] | None: ...
    def totals(self) -> Mapping[str, float]: ...
    def summary(self) -> Mapping[str, Rate]: ...
    def by_variant(self) -> Mapping[str, Mapping[str, Rate]]: ...
    def by_tool(
        self, variant: str | None = None
    ) -> Mapping[str, Mapping[str, Rate]]: ...
    def by_tag(self) -> Mapping[str, Mapping[str, Rate]]: ...
    def compare(self) -> Comparison: ...
    def failures(self) -> Sequence[TrialResult]: ...


def _cut(text: str, limit: int = _MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} chars)"


def _bar(rate: Rate) -> str:
    """A rate as a small bar, its value, and its interval below (~100 px)."""
    if rate.n == 0:
        return f"<span style='{_MUTED}'>-</span>"
    width = round(rate.value * 100)
    low, high = round(rate.low * 100), round(rate.high * 100)
    return (
        "<div style='display:flex;flex-wrap:wrap;align-items:center;"
        "column-gap:6px;max-width:150px'>"
        "<div style='position:relative;width:60px;height:10px;border-radius:2px;"
        "background:var(--jp-layout-color3,#ddd)'>"
        f"<div style='width:{width}%;height:100%;border-radius:2px;"
        "background:var(--jp-brand-color1,#1976d2)'></div>"
        f"<div style='position:absolute;top:4px;left:{low}%;width:{high - low}%;"
        "height:2px;background:var(--jp-ui-font-color1,#000);opacity:.45'></div>"
        "</div>"
        f"<span>{width}%</span>"
        f"<span style='{_MUTED};font-size:85%;white-space:nowrap'>"
        f"[{low}-{high}] n={rate.n}</span>"
        "</div>"
    )


def _rates_table(rows: Sequence[tuple[str, Mapping[str, Rate]]], head: str) -> str:
    metrics = trial_metrics()
    header = "".join(f"<th style='{_CELL}'>{esc(m.label)}</th>" for m in metrics)
    body = "".join(
        f"<tr><td style='{_NAME}'>{esc(name)}</td>"
        + "".join(f"<td style='{_CELL}'>{_bar(rates[m.name])}</td>" for m in metrics)
        + "</tr>"
        for name, rates in rows
    )
    # Six columns fit a 950-pixel output area; a narrower one scrolls the
    # table, not the page.
    return (
        "<div style='overflow-x:auto;max-width:100%'>"
        f"<table style='border-collapse:collapse'><tr><th style='{_CELL}'>"
        f"{esc(head)}</th>{header}</tr>{body}</table></div>"
    )


def failure_reason(trial: TrialResult, info: CaseInfo | None) -> str:
    """One line on why a trial failed, from its verdict and first step."""
    if not trial.answered or (trial.error is not None and trial.passed):
        return (trial.error or "the model request failed").removeprefix("Error: ")
    if trial.conversation is not None:  # where the conversation went wrong
        broken = trial.conversation.get("broken") or {}
        if trial.error is not None and not broken:
            return trial.error.removeprefix("Error: ")
        where = f"turn {broken.get('turn')}" if broken.get("turn") else "the end"
        return f"{where}: {broken.get('expect')}: {broken.get('why')}"
    first = trial.first_step()
    shown = [info.shown(c.name) if info else c.name for c in first]
    if not trial.selected:
        called = ", ".join(shown) if shown else "no tool"
        wanted = ", ".join(info.shown(n) for n in info.expected) if info else "?"
        return f"called {called}; expected {wanted or 'no call'}"
    if not trial.args_valid_first_try:
        codes = sorted({c.code or "not JSON" for c in first if c.refused})
        tail = (
            ""
            if trial.recovered is None
            else ("; recovered later" if trial.recovered else "; not recovered")
        )
        return f"arguments refused ({', '.join(codes)}){tail}"
    return "right tool, wrong arguments"


def _message_lines(message: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(speaker, text) pairs of one wire message, either provider."""
    role = str(message.get("role", ""))
    content = message.get("content")
    out: list[tuple[str, str]] = []
    if isinstance(content, str) and content:
        out.append((role, content))
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                out.append((role, str(block["text"])))
            elif kind == "tool_use":
                shown = f"{block.get('name')}({value_text(block.get('input'))})"
                out.append(("call", shown))
            elif kind == "tool_result":
                out.append(("result", value_text(block.get("content"))))
    calls = message.get("tool_calls")
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            shown = f"{function.get('name')}({function.get('arguments')})"
            out.append(("call", shown))
    return out


def _conversation(messages: Sequence[Mapping[str, Any]]) -> str:
    lines = [
        ("tool" if speaker in ("tool", "result") else speaker, text)
        for message in messages
        if isinstance(message, Mapping)
        for speaker, text in _message_lines(message)
    ]
    rows = [
        f"<div><b>{esc(speaker)}:</b> "
        f"<span style='white-space:pre-wrap'>{esc(_cut(text))}</span></div>"
        for speaker, text in lines[:MAX_LINES]
    ]
    if len(lines) > MAX_LINES:
        rows.append(
            f"<div style='{_MUTED}'>… {len(lines) - MAX_LINES:,} more lines not "
            "drawn (the trial's messages hold them all)</div>"
        )
    return "".join(rows) or f"<div style='{_MUTED}'>(no conversation kept)</div>"


def _card(record: CallRecord, index: int) -> str:
    """One call's card, drawn as a replay draws a journal's call."""
    from dsh_nb.cards.callbook import CallEntry
    from dsh_nb.cards.callcard import entry_card

    entry = CallEntry(
        f"eval-{index}",
        record.name,
        record.arguments,
        result=record.result,
        status=record.status,
        approval=record.approval,
    )
    text: str = entry_card(entry).data.get("text/html") or ""
    return text


def _failure(trial: TrialResult, info: CaseInfo | None, number: int) -> str:
    where = f"{trial.case_id} · trial {trial.trial}"
    if trial.variant is not None:
        where += f" · {trial.variant}"
    reason = failure_reason(trial, info)
    red = f" style='{_RED}'" if trial.error is not None else ""
    asked = ""
    if info is not None and info.prompt:
        line = " ".join(info.prompt.split())
        shown = line if len(line) <= _PROMPT_SHOWN else line[:_PROMPT_SHOWN] + "…"
        asked = f" <span style='{_MUTED}'>“{esc(shown)}”</span>"
    parts = [
        "<details class='dsh-EvalFailure' style='margin:2px 0'>"
        f"<summary><code>{esc(where)}</code>{asked} "
        f"— <span{red}>{esc(reason)}</span></summary>"
        "<div style='margin:4px 0 8px 16px'>"
    ]
    if info is not None:
        parts.append(
            f"<div><b>asked:</b> <span style='white-space:pre-wrap'>"
            f"{esc(_cut(info.prompt))}</span></div>"
            f"<div><b>expected:</b> <code>{esc(_cut(info.expect))}</code></div>"
        )
    if trial.error is not None and trial.error.removeprefix("Error: ") != reason:
        bare = trial.error.removeprefix("Error: ")
        parts.append(f"<div style='{_RED}'><b>error:</b> {esc(_cut(bare))}</div>")
    parts.append(
        "<div style='margin-top:4px'><b>conversation</b></div>"
        + _conversation(trial.messages)
    )
    if trial.calls:
        parts.append("<div style='margin-top:4px'><b>calls</b></div>")
        size = sum(map(len, parts))
        drawn = 0
        for index, record in enumerate(trial.calls[:MAX_CARDS]):
            card = _card(record, number * 1000 + index)
            if size + len(card) > MAX_FAILURE_HTML:
                break
            size += len(card)
            drawn += 1
            parts.append(
                f"<div style='{_MUTED};font-size:85%'>step {record.step}</div>"
                f"<div style='max-width:100%;overflow-x:auto'>{card}</div>"
            )
        if drawn < len(trial.calls):
            parts.append(
                f"<div style='{_MUTED}'>… {len(trial.calls) - drawn:,} of "
                f"{len(trial.calls):,} calls not drawn (the trial's calls "
                "hold them all)</div>"
            )
    parts.append("</div></details>")
    return "".join(parts)


def _errors(report: DrawnReport) -> str:
    """The request errors, in red: a failed run must not look like success."""
    failed = [t for t in report.trials if t.error is not None]
    lines = []
    if failed:
        first = (failed[0].error or "").removeprefix("Error: ")
        lines.append(
            f"{len(failed):,} of {len(report.trials):,} trials ended in a request "
            f"error (those with no answer are left out of the rates): {_cut(first)}"
        )
    if report.meta.get("stopped"):
        lines.append(str(report.meta["stopped"]))
    return "".join(
        f"<div class='dsh-EvalErrors' style='{_RED};font-weight:bold;"
        f"margin-bottom:4px'>{esc(line)}</div>"
        for line in lines
    )


def report_html(report: DrawnReport) -> str:
    """The report's ``text/html``."""
    meta = report.meta
    totals = report.totals()
    facts = [
        f"{len(report.trials):,} trials",
        f"{len(report.cases):,} cases",
    ]
    for key in ("model", "provider", "execute"):
        if meta.get(key):
            facts.append(f"{key} {meta[key]}")
    if meta.get("replayed"):
        facts.append("replayed from a recording")
    if meta.get("interrupted"):
        facts.append("interrupted: only the trials done")
    facts.append(f"latency p50 {totals['latency_p50']:.2f} s")
    parts = [
        "<div class='dsh-EvalReport' style='font-size:13px;max-width:100%;"
        "overflow-wrap:anywhere'>",
        f"<div style='{_MUTED};margin-bottom:4px'>{esc(' · '.join(facts))}</div>",
        _errors(report),
    ]
    if report.variants and len(report.variants) > 1:
        rows = list(report.by_variant().items())
        parts.append(_rates_table(rows, "variant"))
    else:
        parts.append(_rates_table([("all trials", report.summary())], ""))
    tool_rows: list[tuple[str, Mapping[str, Rate]]] = []
    names = report.variants if report.variants and len(report.variants) > 1 else None
    if names is None:
        tool_rows = list(report.by_tool().items())
    else:
        for name in names:
            tool_rows += [(f"{t} · {name}", r) for t, r in report.by_tool(name).items()]
    if tool_rows:
        parts.append("<div style='margin-top:8px'><b>by tool</b></div>")
        parts.append(_rates_table(tool_rows, "tool"))
    tag_rows = list(report.by_tag().items()) if names is None else []
    if tag_rows:
        parts.append("<div style='margin-top:8px'><b>by tag</b></div>")
        parts.append(_rates_table(tag_rows, "tag"))
    if names is not None and len(names) == 2:
        parts.append(f"<p>{esc(report.compare().verdict())}</p>")
    failures = report.failures()
    parts.append(
        f"<div style='margin-top:8px'><b>failures</b> ({len(failures):,})</div>"
    )
    for number, trial in enumerate(failures[:MAX_FAILURES]):
        parts.append(_failure(trial, report.cases.get(trial.case_id), number))
    if len(failures) > MAX_FAILURES:
        parts.append(
            f"<div style='{_MUTED}'>… and {len(failures) - MAX_FAILURES:,} more: "
            "report.failures() lists them all</div>"
        )
    parts.append("</div>")
    return "".join(parts)
