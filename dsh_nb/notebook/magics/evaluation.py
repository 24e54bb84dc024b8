"""``%tool_eval``: run a list of cases against the kernel's tools and model.

The magic runs :func:`dsh_nb.evals.run_eval` on the kernel's registry with
the ``DshChat`` settings (model, base URL, provider, the variable holding
the key), shows a progress bar with the pass rate so far (a text line when
no widget frontend is there), then displays the report. A line magic
cannot await, so (like ``%call``) a token transform rewrites a top-level
``%tool_eval ...`` line into ``await __dsh_nb_tool_eval__(...)`` and
IPython's autoawait runs it in the cell. Kernel -> Interrupt stops the run:
the trials already done stay, shown and bound as a report of their own.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class

from dsh_nb.notebook.magics.args import argument, magic_arguments, parse_argstring
from dsh_nb.notebook.magics.rewrite import (
    Helper,
    can_await,
    line_rest,
    line_transformer,
    remove_magics,
)

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.evals.progress import EvalProgress
    from dsh_nb.evals.report import EvalReport
    from dsh_nb.notebook.state import KernelState

__all__ = ["HELPER", "EvalMagics", "install"]

HELPER = "__dsh_nb_tool_eval__"


@magics_class
class EvalMagics(Magics):
    """``%tool_eval``: is the kernel's tool good enough for the model?"""

    def __init__(self, shell: InteractiveShell, state: KernelState) -> None:
        super().__init__(shell)
        self.state = state
        self._task: asyncio.Future[None] | None = None

    @magic_arguments()
    @argument("cases", metavar="CASES", help="the name of a list of Case")
    @argument(
        "--model",
        metavar="M",
        help="the model (default: DshChat.model), or the name of a variable "
        "holding a practice model (oracle(cases), noisy(cases, ...))",
    )
    @argument("--trials", metavar="N", type=int, default=1, help="trials per case")
    @argument("--concurrency", metavar="K", type=int, default=8, help="trials at once")
    @argument(
        "--max-steps", metavar="N", type=int, default=3, help="requests per trial"
    )
    @argument(
        "--execute",
        choices=("dry", "real"),
        default="dry",
        help="dry: check arguments, never run a body (default); real: run them",
    )
    @argument(
        "--variants",
        metavar="VAR",
        help="the name of a dict {name: ToolRegistry}: each case runs under each",
    )
    @argument("--record", metavar="FILE", help="record requests and verdicts")
    @argument("--replay", metavar="FILE", help="answer from a recording, offline")
    @argument("-o", "--output", metavar="VAR", help="bind the report to VAR")
    @line_magic
    def tool_eval(self, line: str) -> None:
        """Evaluate the kernel's tools on a list of cases; show the report.

        Each trial is a fresh conversation with the ``DshChat`` model,
        whose calls run through the kernel's registry (a dry run: arguments
        are checked, bodies answer a stub). The bar shows the pass rate so
        far; Kernel -> Interrupt stops, keeping the trials done.

        Examples
        --------
        ::

            cases = [Case("Weather in Paris?", expect=call("weather", city="Paris"))]
            %tool_eval cases --trials 5 -o report
            %tool_eval cases --replay run.jsonl
            practice = oracle(cases)         # no key: a function plays the model
            %tool_eval cases --model practice
            %tool_eval cases --variants regs --max-steps 1 --execute real
        """
        coro = self.eval_in_cell(line)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            raise UsageError(
                "%tool_eval needs a running event loop (a Jupyter kernel) and "
                "%autoawait on"
            ) from None
        self._task = asyncio.ensure_future(coro)

    def _cases(self, name: str) -> list[Any]:
        from dsh_nb.evals.case import Case

        shell = self.shell
        assert shell is not None
        if not name.isidentifier() or name not in shell.user_ns:
            raise UsageError(
                f"%tool_eval: no variable named {name!r}; pass the name of a list "
                "of Case, e.g. cases = [Case('...', expect=call('tool'))]"
            )
        value = shell.user_ns[name]
        if isinstance(value, Case):
            return [value]
        if not isinstance(value, (list, tuple)) or not all(
            isinstance(c, Case) for c in value
        ):
            raise UsageError(f"%tool_eval: {name!r} must be a list of Case")
        if not value:
            raise UsageError(f"%tool_eval: {name!r} is an empty list")
        return list(value)

    def _practice(self, name: str | None) -> Any:
        """The practice model a ``--model`` names, if it names one."""
        from dsh_nb.evals.practice import PracticeModel

        shell = self.shell
        if not name or not name.isidentifier() or shell is None:
            return None
        value = shell.user_ns.get(name)
        return value if isinstance(value, PracticeModel) else None

    def _variants(self, name: str | None) -> dict[str, Any] | None:
        from dsh_nb.tools.registry import ToolRegistry

        if name is None:
            return None
        shell = self.shell
        value = shell.user_ns.get(name) if shell and name.isidentifier() else None
        if (
            not isinstance(value, dict)
            or not value
            or not all(
                isinstance(k, str) and isinstance(v, ToolRegistry)
                for k, v in value.items()
            )
        ):
            raise UsageError(
                f"--variants takes the name of a dict {{name: ToolRegistry}}, "
                f"and {name!r} is not one"
            )
        return value

    def _client(self, settings: Any, replay: str | None) -> Any:
        if replay is not None:
            return None
        from dsh_nb.models.chat import make_client

        variable = settings.key_variable()
        key = os.environ.get(variable)
        if not key and not settings.base_url:
            raise UsageError(
                f"no API key: set the {variable} environment variable (or "
                "%config DshChat.api_key_env = 'NAME'), point %config "
                "DshChat.base_url at a local server, or pass --replay FILE"
            )
        return make_client(settings.provider, settings.base_url, key or "unused")

    def _progress(self) -> EvalProgress:
        from dsh_nb.notebook.frontend import is_interactive

        if is_interactive(self.state.config.frontend):
            from dsh_nb.notebook.magics.evalprogress import WidgetProgress

            return WidgetProgress()
        import sys

        from dsh_nb.evals.progress import TextProgress

        return TextProgress(sys.stdout, interval=2.0)

    async def eval_in_cell(self, line: str) -> None:
        """What a rewritten ``%tool_eval`` line awaits."""
        from IPython.display import display

        show: Callable[..., Any] = display
        from dsh_nb.evals.recording import ReplayError
        from dsh_nb.evals.report import CaseInfo, EvalReport
        from dsh_nb.evals.runner import run_eval
        from dsh_nb.notebook.magics.chat import _StopButton

        args = parse_argstring(self.tool_eval, line, "%tool_eval")  # type: ignore[misc]
        if args.output is not None and not args.output.isidentifier():
            raise UsageError(f"-o takes a variable name, not {args.output!r}")
        for flag in ("trials", "concurrency", "max_steps"):
            if getattr(args, flag) < 1:
                raise UsageError(f"--{flag.replace('_', '-')} must be 1 or more")
        cases = self._cases(args.cases)
        settings = _settings(self.shell)
        variants = self._variants(args.variants)
        model: Any = self._practice(args.model) or args.model or settings.model
        if not model:
            raise UsageError(
                "no model: %config DshChat.model = 'NAME', or --model NAME"
            )
        practising = not isinstance(model, str)
        client = None if practising else self._client(settings, args.replay)
        progress = self._progress()
        stop = _StopButton()
        report: EvalReport
        try:
            with stop:
                report = await run_eval(
                    cases,
                    model=model,
                    client=client,
                    provider=settings.provider,
                    registry=None if variants else self.state.registry,
                    variants=variants,
                    trials=args.trials,
                    concurrency=args.concurrency,
                    max_steps=args.max_steps,
                    execute=args.execute,
                    record=args.record,
                    replay=args.replay,
                    progress=progress,
                )
        except asyncio.CancelledError:
            done = progress.results
            ids = [c.id or f"case-{i + 1}" for i, c in enumerate(cases)]
            report = EvalReport(
                done,
                cases={i: CaseInfo.of(c, i) for c, i in zip(cases, ids, strict=True)},
                meta={"model": str(getattr(model, "name", model)), "interrupted": True},
            )
            self._bind(args.output, report)
            show(report)
            if not stop.pressed:
                raise
            raise UsageError(
                f"interrupted: {len(done)} of {progress.total} trials were done; "
                "the report above holds them"
                + (f" (bound to {args.output})" if args.output else "")
            ) from None
        except (ValueError, TypeError, OSError, ReplayError) as exc:
            raise UsageError(f"%tool_eval: {exc}") from None
        self._bind(args.output, report)
        show(report)

    def _bind(self, name: str | None, report: EvalReport) -> None:
        if name is not None and self.shell is not None:
            self.shell.user_ns[name] = report


def _settings(shell: Any) -> Any:
    magics = shell.magics_manager.registry.get("ChatMagics") if shell else None
    settings = getattr(magics, "settings", None)
    if settings is None:
        raise UsageError("%tool_eval needs the dsh_nb extension: %load_ext dsh_nb")
    return settings


def install(shell: InteractiveShell, state: KernelState) -> Callable[[], None]:
    """Add ``%tool_eval`` and its rewrite; return the undo."""
    magics = EvalMagics(shell, state)
    shell.register_magics(magics)
    helper = Helper(shell, HELPER, magics.eval_in_cell)

    def rewrite(lines: list[str], row: int, col: int) -> list[str]:
        helper.put()
        rest, end = line_rest(lines, row, col, "tool_eval")
        return [*lines[:row], f"await {HELPER}({rest!r})\n", *lines[end + 1 :]]

    transformer = line_transformer("tool_eval", rewrite, lambda: can_await(shell))
    tokens: list[Any] = shell.input_transformer_manager.token_transformers
    tokens.insert(0, transformer)

    def undo() -> None:
        remove_magics(shell, magics)
        if transformer in tokens:
            tokens.remove(transformer)
        helper.remove()

    return undo
