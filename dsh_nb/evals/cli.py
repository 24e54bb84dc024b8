"""``python -m dsh_nb eval``: run cases from a command line, gate CI on them.

::

    python -m dsh_nb eval CASES [--tools MODULE[:ATTR]] [--model M]
        [--base-url U] [--provider P] [--trials N] [--concurrency K]
        [--record F | --replay F] [--min-pass RATE] [--json F] [--junit F]

``CASES`` is ``MODULE:ATTR`` (a list of ``Case``, or a function returning
one) or a BFCL category (``simple_python``: the cases bring their tools).
``--tools`` names the registry the calls run through, as ``serve`` does,
or a dict ``{name: ToolRegistry}``: every case then runs under each, paired.
The summary (each rate with its Wilson 95% interval) goes to stdout, the
progress to stderr. The exit code is the gate: 0 when the pass rate (over
every trial; a request error counts as a failure) is at least
``--min-pass`` (1.0 unless given), 1 when it is not, 2 for a usage error
(a bad flag, cases that do not load, a recording that cannot answer).
``--junit`` writes one test case per case, failed when that case's pass
rate is under ``--min-pass``, so a CI system shows the failures natively;
``--json`` writes the report as ``EvalReport.save`` does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from dsh_nb.models.providers import PROVIDER_TABLE, PROVIDERS

__all__ = ["main"]


class UsageProblem(Exception):
    """A mistake on the command line: one line on stderr, exit 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dsh_nb eval",
        description="Run tool-use cases against a model; exit 1 under --min-pass.",
    )
    parser.add_argument("cases", metavar="CASES", help="MODULE:ATTR or a BFCL category")
    parser.add_argument(
        "--tools", metavar="MODULE[:ATTR]", help="the registry calls run through"
    )
    parser.add_argument("--model", metavar="M", help="the model name")
    parser.add_argument("--base-url", metavar="U", help="an OpenAI-compatible URL")
    parser.add_argument(
        "--provider", choices=tuple(PROVIDER_TABLE), default=None, help="the API"
    )
    parser.add_argument("--trials", metavar="N", type=int, default=1)
    parser.add_argument("--concurrency", metavar="K", type=int, default=8)
    parser.add_argument("--max-steps", metavar="N", type=int, default=3)
    parser.add_argument("--execute", choices=("dry", "real"), default="dry")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--record", metavar="F", help="record (or resume) to F")
    group.add_argument("--replay", metavar="F", help="answer from F, offline")
    parser.add_argument(
        "--min-pass", metavar="RATE", type=_rate, default=1.0, help="0..1 or 80%%"
    )
    parser.add_argument("--json", metavar="F", help="write the report as JSON")
    parser.add_argument("--junit", metavar="F", help="write JUnit XML")
    return parser


def _rate(text: str) -> float:
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a rate: {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"a rate is between 0 and 1: {text!r}")
    return value


def _cases(spec: str) -> list[Any]:
    from dsh_nb.evals import bfcl
    from dsh_nb.evals.case import Case

    if spec in bfcl.CATEGORIES:
        try:
            return bfcl.load(spec)
        except (ModuleNotFoundError, FileNotFoundError, ValueError) as exc:
            raise UsageProblem(str(exc)) from None
    name, sep, attr = spec.rpartition(":")
    if not sep or not name or not attr:
        raise UsageProblem(
            f"CASES is MODULE:ATTR (a list of Case) or a BFCL category "
            f"({', '.join(bfcl.CATEGORIES)}), not {spec!r}"
        )
    from dsh_nb.mcp.target import TargetError, import_target_module

    try:
        value: Any = import_target_module(name)
    except TargetError as exc:
        raise UsageProblem(str(exc)) from None
    for part in attr.split("."):
        if not hasattr(value, part):
            raise UsageProblem(f"{spec!r}: {name!r} has no attribute {attr!r}")
        value = getattr(value, part)
    if callable(value) and not isinstance(value, Case):
        value = value()
    if isinstance(value, Case):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise UsageProblem(f"{spec!r} is not a non-empty list of Case")
    for index, case in enumerate(value):
        if not isinstance(case, Case):
            raise UsageProblem(f"{spec!r}[{index}] is a {type(case).__name__}")
    return list(value)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    from dsh_nb.evals.recordfile import Recording

    for flag in ("trials", "concurrency", "max_steps"):
        if getattr(args, flag) < 1:
            raise UsageProblem(f"--{flag.replace('_', '-')} must be 1 or more")
    options: dict[str, Any] = {
        "trials": args.trials,
        "concurrency": args.concurrency,
        "max_steps": args.max_steps,
        "execute": args.execute,
        "record": args.record,
        "replay": args.replay,
        "provider": args.provider or PROVIDERS[0],
        "model": args.model,
    }
    if args.replay is not None:
        try:
            recording = Recording.load(args.replay)
        except (OSError, ValueError) as exc:
            raise UsageProblem(str(exc)) from None
        options["provider"] = args.provider or recording.provider
        options["model"] = args.model or recording.header.get("model")
    if not options["model"]:
        raise UsageProblem("name the model: --model M (or --replay a recording)")
    if args.tools is not None:
        variants = _variants(args.tools)
        if variants is not None:
            options["variants"] = variants
        else:
            from dsh_nb.mcp.target import TargetError, load_target

            try:
                options["registry"] = load_target(args.tools).registry
            except TargetError as exc:
                raise UsageProblem(str(exc)) from None
    if args.replay is None:
        from dsh_nb.models.chat import make_client

        try:
            options["client"] = make_client(options["provider"], args.base_url, None)
        except Exception as exc:  # noqa: BLE001 - a missing key or SDK: one line
            raise UsageProblem(f"cannot make the model client: {exc}") from None
    return options


def _variants(spec: str) -> dict[str, Any] | None:
    """``--tools MODULE:ATTR`` naming a dict ``{name: ToolRegistry}``: variants."""
    from dsh_nb.mcp.target import TargetError, import_target_module
    from dsh_nb.tools.registry import ToolRegistry

    name, sep, attr = spec.rpartition(":")
    if not sep or not name or not attr.isidentifier():
        return None
    try:
        value = getattr(import_target_module(name), attr, None)
    except TargetError as exc:
        raise UsageProblem(str(exc)) from None
    if (
        isinstance(value, dict)
        and value
        and all(
            isinstance(k, str) and isinstance(v, ToolRegistry) for k, v in value.items()
        )
    ):
        return value
    return None


def _summary(report: Any, min_pass: float, rate: float) -> str:
    lines = [str(report)]
    by_tool = report.by_tool()
    if len(by_tool) > 1:
        lines.append("by tool:")
        lines += [f"  {name}: passed {r['passed']}" for name, r in by_tool.items()]
    verdict = "PASS" if rate >= min_pass else "FAIL"
    lines.append(
        f"{verdict}: {rate:.1%} of {len(report.trials)} trials passed "
        f"(--min-pass {min_pass:.1%})"
    )
    return "\n".join(lines)


def pass_rate(trials: Sequence[Any]) -> float:
    """Passed trials over all of them (a request error is a failure)."""
    return sum(t.state == "passed" for t in trials) / len(trials) if trials else 0.0


def main(argv: list[str]) -> int:
    """Run ``python -m dsh_nb eval``; return the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed the usage
        return 0 if exc.code == 0 else 2
    from dsh_nb.evals.recording import ReplayError
    from dsh_nb.evals.runner import run_eval

    try:
        cases = _cases(args.cases)
        options = _options(args)
        report = asyncio.run(run_eval(cases, **options))
    except (UsageProblem, ReplayError, ValueError, TypeError, OSError) as exc:
        print(f"python -m dsh_nb eval: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("python -m dsh_nb eval: interrupted", file=sys.stderr)
        return 130
    rate = pass_rate(report.trials)
    print(_summary(report, args.min_pass, rate))
    if args.json is not None:
        report.save(args.json)
    if args.junit is not None:
        from dsh_nb.evals.junit import write_junit

        write_junit(report, args.junit, min_pass=args.min_pass, suite=args.cases)
    return 0 if rate >= args.min_pass else 1
