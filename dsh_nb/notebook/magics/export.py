"""``%tools export FILE.py [NAMES...]``: the kernel's tools as a module.

A sub-command of ``%tools`` (:mod:`.tools`), its flags declared on it.

This side gathers what only a kernel knows (the cells in execution order,
the namespace, what each ``%%tool`` cell made, the policy table, which
listeners are the extension's own) and hands it to
:mod:`dsh_nb.export`, which picks the statements and writes the
text. Nothing is written unless everything can be: the problems are shown
as a table under the cell, which then fails in one line.

A cell that raised ran only up to the statement that raised: the
statements after it never bound anything, so they are not the code of
any name (:func:`install` records where each cell stopped, and
:func:`kernel_cells` keeps only what ran).
"""

from __future__ import annotations

import ast
import difflib
import os
import tempfile
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from IPython.core.error import UsageError

from dsh_nb.cards.listing import Table
from dsh_nb.export import (
    POLICY_TABLE,
    Cell,
    Hook,
    Problem,
    ToolSource,
    export_module,
    registry_hooks,
)
from dsh_nb.notebook.magics.args import argument
from dsh_nb.notebook.state import policy_decision
from dsh_nb.tools.audit.journalfile import NotRegularFileError, open_regular
from dsh_nb.tools.origin import origin_of

if TYPE_CHECKING:
    from argparse import Namespace

    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.state import KernelState
    from dsh_nb.tools.definition import ToolDefinition

__all__ = ["MARK", "export", "install", "kernel_cells"]

MARK: Final = '"""Tools exported from a notebook with ``%tools export``.'
_USAGE: Final = "%tools export FILE.py [NAMES...] [--force]"

# Per shell: execution count -> the line (of the code that ran) whose
# statement raised, or 0 when that line is not known (nothing is kept).
_stopped: weakref.WeakKeyDictionary[InteractiveShell, dict[int, int]] = (
    weakref.WeakKeyDictionary()
)


def install(shell: InteractiveShell) -> Callable[[], None]:
    """Record where each cell that raised stopped; return the undo."""
    stopped = _stopped.setdefault(shell, {})

    def after(result: Any) -> None:
        error = getattr(result, "error_in_exec", None)
        number = getattr(result, "execution_count", None)
        if error is not None and isinstance(number, int):
            stopped[number] = _raised_at(error)

    shell.events.register("post_run_cell", after)

    def undo() -> None:
        try:
            shell.events.unregister("post_run_cell", after)
        except ValueError:
            pass

    return undo


def _raised_at(error: BaseException) -> int:
    """The cell's line that raised: its ``<module>`` frame, the first one
    in the traceback (the frames before it are IPython's); 0 if none."""
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "<module>":
            return tb.tb_lineno
        tb = tb.tb_next
    return 0


@argument("file", nargs="?", metavar="FILE.py", help="the module to write")
@argument("names", nargs="*", metavar="NAME", help="the tools (default: all)")
@argument("--force", action="store_true", help="replace a file we did not write")
def export(state: KernelState, args: Namespace) -> None:
    """Write the kernel's tools as a module that builds ``registry``."""
    flags = [w for w in args.extras if w.startswith("-")]
    if flags:
        raise UsageError(f"%tools export: unknown option {flags[0]!r}; {_USAGE}")
    if args.server_command is not None:
        raise UsageError(f"%tools export takes no '-- COMMAND'; {_USAGE}")
    if args.file is None:
        raise UsageError(f"%tools export needs a file name: {_USAGE}")
    force = args.force
    # argparse stops a NAME list at a flag; the names after it are names too.
    words = [args.file, *args.names, *args.extras]
    path, names = Path(words[0]), words[1:]
    if path.suffix != ".py":
        raise UsageError(f"%tools export writes a .py module, not {str(path)!r}")
    if path.exists() and not force and not _ours(path):
        raise UsageError(
            f"{str(path)!r} exists and was not written by %tools export; "
            "pick another name, or add --force to replace it"
        )
    shell = state.shell
    assert shell is not None
    chosen = _chosen_tools(state, names)
    problems, sources = _sources(chosen, state)
    result = export_module(
        cells=kernel_cells(shell, state),
        namespace=shell.user_ns,
        tools=sources,
        hooks=_hooks(state),
        policies=_policies(state, [d.name for d in chosen]),
        default_timeout_ms=state.config.default_timeout_ms,
        drop_decorators=_decorators(),
        notebook_only=_notebook_only(),
        max_result_rows=state.registry.max_result_rows,
    )
    problems += result.problems
    if problems or result.text is None:
        _show(
            Table(
                "cannot export",
                ("what", "why"),
                [(p.subject, p.reason) for p in problems],
            )
        )
        noun = "problem" if len(problems) == 1 else "problems"
        raise UsageError(
            f"nothing written to {str(path)!r}: {len(problems)} {noun}, listed above"
        )
    _write(path, result.text)
    parts = [f"{len(result.tools)} tool{'s' if len(result.tools) != 1 else ''}"]
    if result.policies:
        parts.append(f"{result.policies} policy rows")
    if result.hooks:
        parts.append(f"{result.hooks} listeners and guards")
    print(
        f"wrote {str(path)!r}: {', '.join(parts)}; it builds `registry` "
        f"(serve it: python -m dsh_nb serve {path})"
    )


def _ours(path: Path) -> bool:
    """Whether ``path`` starts with the mark; a FIFO or a device is refused
    (reading it would block the kernel, or never end)."""
    try:
        with open_regular(path) as fh:
            first = fh.readline(len(MARK) + 2)
    except NotRegularFileError as exc:
        raise UsageError(f"{exc}; pick another name") from None
    except OSError:
        return False
    return first.rstrip(b"\n").decode("utf-8", "replace") == MARK


def _write(path: Path, text: str) -> None:
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def _chosen_tools(state: KernelState, names: list[str]) -> list[ToolDefinition]:
    known = state.registry.view(None)
    if not names:
        if not known:
            raise UsageError("no tools to export; define one with %%tool")
        return list(known.values())
    out = []
    for name in dict.fromkeys(names):
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UsageError(f"unknown tool {name!r}{hint}")
        out.append(known[name])
    return out


def _sources(
    chosen: list[ToolDefinition], state: KernelState
) -> tuple[tuple[Problem, ...], list[ToolSource]]:
    problems: list[Problem] = []
    sources = []
    for definition in chosen:
        cell = state.tool_cells.get(definition.name)
        if cell is not None and cell.definition is definition:
            from dsh_nb.tools.definition import ToolDefinition

            built = not isinstance(cell.found, ToolDefinition)
            sources.append(
                ToolSource(
                    name=definition.name,
                    obj=cell.found,
                    build=built,
                    description=cell.description,
                    timeout_ms=cell.timeout_ms,
                    coerce=cell.coerce,
                )
            )
            continue
        origin = origin_of(definition)
        if str(getattr(origin, "__module__", "")).startswith("dsh_nb."):
            problems.append(
                Problem(
                    f"tool {definition.name!r}",
                    "dsh_nb made it, not a cell (a %tools connect tool?); "
                    "connect to its server where the module runs",
                )
            )
            continue
        sources.append(ToolSource(name=definition.name, obj=definition))
    return tuple(problems), sources


def _hooks(state: KernelState) -> list[Hook]:
    """The registry's hooks, the extension's own left out."""
    out = []
    for hook in registry_hooks(state.registry):
        if hook.fn == state.apply_policy:
            out.append(Hook(hook.seam, POLICY_TABLE))
        elif not _internal(hook.fn):
            out.append(hook)
    return out


def _internal(fn: object) -> bool:
    module = getattr(fn, "__module__", None) or type(fn).__module__
    return isinstance(module, str) and module.startswith("dsh_nb.")


def _policies(state: KernelState, names: list[str]) -> dict[str, object]:
    rows: dict[str, object] = {}
    for name in names:
        entry = state.policies.get(name)
        while entry is not None and entry.agent is not None:
            entry = entry.shadows  # an "Allow for this session" is not a row
        if entry is not None:
            rows[name] = policy_decision(entry.policy, name)
    return rows


def _decorators() -> tuple[object, ...]:
    from dsh_nb.notebook import listeners

    return (
        listeners.pre_execute,
        listeners.guard,
        listeners.post_execute,
        listeners.on_result,
    )


def _notebook_only() -> dict[int, str]:
    import dsh_nb  # its notebook names, loaded by now (the magic runs in one)
    from dsh_nb.notebook.current import current_state

    kernel = "the kernel's registry; the module has its own, `registry`"
    table: dict[int, str] = {id(current_state): f"the kernel state, {kernel}"}
    for name, reason in (
        ("registry", f"dsh_nb.registry(), {kernel}"),
        ("call", "dsh_nb.call, which shows cards in a kernel"),
        ("dispatch", "dsh_nb.dispatch, which shows cards in a kernel"),
        ("replay", "dsh_nb.replay, which shows cards in a kernel"),
        ("remove_listener", "dsh_nb.remove_listener, for a kernel"),
    ):
        table[id(getattr(dsh_nb, name))] = reason
    for decorator in _decorators():
        name = getattr(decorator, "__name__", "a listener decorator")
        table[id(decorator)] = (
            f"dsh_nb.{name} other than as a decorator; the module registers "
            "on `registry`"
        )
    return table


def kernel_cells(shell: InteractiveShell, state: KernelState) -> list[Cell]:
    """The cells the kernel ran, as the Python that ran, in order.

    A ``%%tool`` cell stands for its body; other cell magics ran code of
    their own and are left out. A ``%%tool`` body the history lacks (run
    without storing history) comes from what the cell recorded.
    """
    transform: Callable[[str], str] = shell.transform_cell
    history: list[str] = list(getattr(shell.history_manager, "input_hist_raw", []))
    stopped = _stopped.get(shell, {})
    cells: list[Cell] = []
    for number, raw in enumerate(history):
        code = _cell_code(raw, transform)
        if code is not None and number in stopped:
            code = _what_ran(code, stopped[number])
        if code is not None:
            cells.append(Cell(number, code))
    seen = {cell.code for cell in cells}
    for record in state.tool_cells.values():
        if record.source not in seen:
            seen.add(record.source)
            cells.append(Cell(record.number, record.source))
    cells.sort(key=lambda c: c.number)  # stable: the history's order first
    return cells


def _what_ran(code: str, line: int) -> str | None:
    """The statements of ``code`` before the one spanning ``line``."""
    try:
        body = ast.parse(code).body
    except (SyntaxError, ValueError):
        return None
    for node in body:
        decorators: list[ast.expr] = getattr(node, "decorator_list", None) or []
        first = min([node.lineno, *(d.lineno for d in decorators)])
        if line and first <= line <= (node.end_lineno or node.lineno):
            kept = "\n".join(code.splitlines()[: first - 1])
            return kept if kept.strip() else None
    return None  # where it stopped is not known: none of it is copied


def _cell_code(raw: str, transform: Callable[[str], str]) -> str | None:
    text = raw.lstrip("\n")
    if not text.strip():
        return None
    if text.startswith("%%"):
        head, _, body = text.partition("\n")
        if head.split()[0] != "%%tool":
            return None
        text = body
    try:
        return transform(text)
    except Exception:  # noqa: BLE001 - a cell IPython cannot rewrite ran as nothing
        return None


def _show(table: Any) -> None:
    from IPython.display import display

    show: Callable[..., Any] = display
    show(table)
