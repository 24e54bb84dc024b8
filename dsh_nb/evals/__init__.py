"""Tool-use evaluation: cases, expectations and grading (no Jupyter imports).

``dsh_nb.evals.bfcl`` loads the Berkeley Function Calling Leaderboard's
single-turn categories as cases graded the way BFCL grades them.
"""

from __future__ import annotations

from dsh_nb.evals.case import Case
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

__all__ = [
    "ANY",
    "ActualCall",
    "ArgMatcher",
    "Case",
    "ExpectedCall",
    "ExpectedCalls",
    "Expectation",
    "Grade",
    "NoCall",
    "call",
    "calls",
    "expected_names",
    "grade",
    "maybe",
    "no_call",
    "one_of",
]
