"""Tool-use evaluation: cases, expectations, runs and reports (no Jupyter).

``run_eval`` runs cases as fresh ``Chat`` conversations through a
registry's pipeline and grades each trial from its journal; an
``EvalReport`` holds the trials, their rates (Wilson 95% intervals) and
paired comparisons (McNemar's exact test).

``dsh_nb.evals.bfcl`` loads the Berkeley Function Calling Leaderboard's
single-turn categories as cases graded the way BFCL grades them, and its
multi-turn categories as conversations graded as BFCL's multi-turn checker.

A case whose prompt is a list of user turns is a conversation
(:mod:`dsh_nb.evals.conversation`): tools with state built fresh per trial,
checks per turn and at the end, and pass^k / pass@k over cases.

A :class:`PracticeModel` lets a Python function play the model, offline
and with no key; :func:`oracle` and :func:`noisy` are two ready ones.
"""

# ruff: noqa: F401 - the type checkers' view of the names below, which
# are exported by the table: ``__all__`` is built from it, not written out.

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_nb._lazy import lazy_face

if TYPE_CHECKING:
    from dsh_nb.evals.case import Case
    from dsh_nb.evals.compare import CasePair, Comparison
    from dsh_nb.evals.conversation import (
        TrialTools,
        Turn,
        TurnView,
        same_state,
        trial_state,
    )
    from dsh_nb.evals.convrun import play_turns
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
    from dsh_nb.evals.passk import PassK
    from dsh_nb.evals.practice import PracticeModel, PracticeRequest
    from dsh_nb.evals.progress import EvalProgress, TextProgress
    from dsh_nb.evals.recipes import noisy, oracle
    from dsh_nb.evals.recording import ReplayError
    from dsh_nb.evals.report import CaseInfo, EvalReport
    from dsh_nb.evals.runner import run_eval
    from dsh_nb.evals.stats import Rate
    from dsh_nb.evals.trial import CallRecord, TrialResult

# The one list of this face: each public name and the module that defines
# it. ``__all__`` is built from it; the imports above are the type
# checkers' view of the same names (tests/unit/test_lazy_faces.py holds
# the two together).
_PUBLIC = {
    "ANY": "dsh_nb.evals.expect",
    "ActualCall": "dsh_nb.evals.expect",
    "ArgMatcher": "dsh_nb.evals.expect",
    "CallRecord": "dsh_nb.evals.trial",
    "Case": "dsh_nb.evals.case",
    "CaseInfo": "dsh_nb.evals.report",
    "CasePair": "dsh_nb.evals.compare",
    "Comparison": "dsh_nb.evals.compare",
    "EvalProgress": "dsh_nb.evals.progress",
    "EvalReport": "dsh_nb.evals.report",
    "ExpectedCall": "dsh_nb.evals.expect",
    "ExpectedCalls": "dsh_nb.evals.expect",
    "Expectation": "dsh_nb.evals.expect",
    "Grade": "dsh_nb.evals.expect",
    "NoCall": "dsh_nb.evals.expect",
    "PassK": "dsh_nb.evals.passk",
    "PracticeModel": "dsh_nb.evals.practice",
    "PracticeRequest": "dsh_nb.evals.practice",
    "Rate": "dsh_nb.evals.stats",
    "ReplayError": "dsh_nb.evals.recording",
    "TextProgress": "dsh_nb.evals.progress",
    "TrialResult": "dsh_nb.evals.trial",
    "TrialTools": "dsh_nb.evals.conversation",
    "Turn": "dsh_nb.evals.conversation",
    "TurnView": "dsh_nb.evals.conversation",
    "call": "dsh_nb.evals.expect",
    "calls": "dsh_nb.evals.expect",
    "expected_names": "dsh_nb.evals.expect",
    "grade": "dsh_nb.evals.expect",
    "maybe": "dsh_nb.evals.expect",
    "no_call": "dsh_nb.evals.expect",
    "noisy": "dsh_nb.evals.recipes",
    "one_of": "dsh_nb.evals.expect",
    "oracle": "dsh_nb.evals.recipes",
    "play_turns": "dsh_nb.evals.convrun",
    "run_eval": "dsh_nb.evals.runner",
    "same_state": "dsh_nb.evals.conversation",
    "trial_state": "dsh_nb.evals.conversation",
}

__all__ = list(_PUBLIC)

__getattr__, __dir__ = lazy_face(__name__, _PUBLIC)
