"""A report as JUnit XML: one test case per case, so CI shows failures natively.

Each case of the report is a ``<testcase>`` (``classname`` the suite,
``name`` the case id, ``time`` its trials' seconds). It fails when its
share of passed trials is under ``min_pass`` (the gate the command line
uses); the ``<failure>`` says why each failed trial failed, and what was
asked and expected. A case whose every trial ended in a request error is
an ``<error>``: it measured nothing. Written with :mod:`xml.etree`, so
every string from a case, a model or a tool is escaped as XML, and
redacted of the registered secrets.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from dsh_nb.evals.reporthtml import failure_reason
from dsh_nb.tools.audit.secrets import redact

if TYPE_CHECKING:
    from dsh_nb.evals.report import EvalReport
    from dsh_nb.evals.trial import TrialResult

__all__ = ["junit_xml", "write_junit"]


def _clean(text: str) -> str:
    """XML 1.0 cannot hold most control characters: show them as ``\\xNN``."""
    return "".join(
        c
        if c in "\t\n\r" or (" " <= c and c not in "\ufffe\uffff")
        else f"\\x{ord(c):02x}"
        for c in redact(text)
    )


def junit_xml(report: EvalReport, *, min_pass: float = 1.0, suite: str = "eval") -> str:
    """The report as a JUnit ``<testsuite>`` document."""
    by_case: dict[str, list[TrialResult]] = {c: [] for c in report.cases}
    for trial in report.trials:
        by_case.setdefault(trial.case_id, []).append(trial)
    root = ET.Element("testsuite", name=_clean(suite))
    failures = errors = 0
    total_time = 0.0
    for case_id, trials in by_case.items():
        if not trials:
            continue
        info = report.cases.get(case_id)
        seconds = sum(t.latency for t in trials)
        total_time += seconds
        case = ET.SubElement(
            root,
            "testcase",
            classname=_clean(suite),
            name=_clean(case_id),
            time=f"{seconds:.3f}",
        )
        passed = sum(t.state == "passed" for t in trials)
        if passed / len(trials) >= min_pass:
            continue
        lines = [
            f"trial {t.trial}{f' ({t.variant})' if t.variant else ''}: "
            + failure_reason(t, info)
            for t in trials
            if t.state != "passed"
        ]
        if info is not None:
            lines += [f"asked: {info.prompt}", f"expected: {info.expect}"]
        message = f"{passed} of {len(trials)} trials passed"
        if all(t.state == "error" for t in trials):
            errors += 1
            element = ET.SubElement(case, "error", message=_clean(message))
        else:
            failures += 1
            element = ET.SubElement(case, "failure", message=_clean(message))
        element.text = _clean("\n".join(lines))
    root.set("tests", str(sum(1 for t in by_case.values() if t)))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    root.set("time", f"{total_time:.3f}")
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def write_junit(
    report: EvalReport,
    path: str | os.PathLike[str],
    *,
    min_pass: float = 1.0,
    suite: str = "eval",
) -> None:
    """Write :func:`junit_xml` to ``path``."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(junit_xml(report, min_pass=min_pass, suite=suite) + "\n")
