"""Tool-use evaluation: cases, expectations, runs and reports (no Jupyter).

``run_eval`` runs cases as fresh ``Chat`` conversations through a
registry's pipeline and grades each trial from its journal; an
``EvalReport`` holds the trials, their rates (Wilson 95% intervals) and
paired comparisons (McNemar's exact test).

``dsh_nb.evals.bfcl`` loads the Berkeley Function Calling Leaderboard's
single-turn categories as cases graded the way BFCL grades them.
"""

from __future__ import annotations

from dsh_nb.evals.case import Case
from dsh_nb.evals.compare import CasePair, Comparison
from dsh_nb.evals.expect import (
    ANY,
    ActualCall,
    ArgMatcher,
    Expectation,
    ExpectedCall,
    ExpectedCalls,
    Grade,
    NoCall,
    call,
    calls,
    expected_names,
    grade,
    maybe,
    no_call,
    one_of,
)
from dsh_nb.evals.progress import EvalProgress, TextProgress
from dsh_nb.evals.recording import ReplayError
from dsh_nb.evals.report import CaseInfo, EvalReport
from dsh_nb.evals.runner import run_eval
from dsh_nb.evals.stats import Rate
from dsh_nb.evals.trial import CallRecord, TrialResult

__all__ = [
    "ANY",
    "ActualCall",
    "ArgMatcher",
    "CallRecord",
    "Case",
    "CaseInfo",
    "CasePair",
    "Comparison",
    "EvalProgress",
    "EvalReport",
    "ExpectedCall",
    "ExpectedCalls",
    "Expectation",
    "Grade",
    "NoCall",
    "Rate",
    "ReplayError",
    "TextProgress",
    "TrialResult",
    "call",
    "calls",
    "expected_names",
    "grade",
    "maybe",
    "no_call",
    "one_of",
    "run_eval",
]
