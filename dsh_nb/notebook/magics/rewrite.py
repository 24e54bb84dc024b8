"""A magic rewritten into an awaited call: what ``%call``, ``%%chat`` and
``%tool_eval`` share.

A magic cannot await. So, before IPython compiles a cell, an input
transformer rewrites the magic into ``await HELPER(...)``, and IPython's
autoawait runs it in the cell: the call's card, its approval click and the
model's reply all happen while the cell runs, for headless runners and
JupyterLab alike. A line form is found on Python tokens, so a magic inside
a string, a comment or another cell magic's body (``%%writefile``) is never
rewritten; a cell form is the cell's first line. The helper lives in the
user namespace, put back whenever a rewrite needs it (``%reset`` clears
it), and goes with the magics on unload.
"""

from __future__ import annotations

import re
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.inputtransformer2 import (
    TokenTransformBase,
    assemble_continued_line,
    find_end_of_continued_line,
)

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.magic import Magics

__all__ = [
    "Helper",
    "can_await",
    "cell_call",
    "line_rest",
    "line_transformer",
    "magic_start",
    "remove_magics",
]

Start = tuple[int, int]


def can_await(shell: InteractiveShell) -> bool:
    """Whether a cell can await the helper (autoawait on asyncio)."""
    from IPython.core.async_helpers import _asyncio_runner

    return bool(
        shell.autoawait
        and shell.trio_runner is None
        and shell.loop_runner is _asyncio_runner
    )


@dataclass(frozen=True, slots=True)
class Helper:
    """The function a rewritten magic awaits, by its name in the user namespace."""

    shell: InteractiveShell
    name: str
    function: Callable[..., Any]

    def put(self) -> None:
        """Make ``name`` the function again (``%reset`` may have cleared it)."""
        for namespace in (self.shell.user_ns, self.shell.user_ns_hidden):
            if namespace.get(self.name) != self.function:
                namespace[self.name] = self.function

    def remove(self) -> None:
        """Leave a stub that says dsh_nb was unloaded, unless something else
        has taken the name since: a cell rewritten before its own
        ``%unload_ext dsh_nb`` ran still calls it, and would otherwise fail
        with a ``NameError`` naming this private helper."""
        shell = self.shell
        spaces = (shell.user_ns, shell.user_ns_hidden)
        stubbed = False
        for namespace in spaces:
            if namespace.get(self.name) == self.function:
                namespace[self.name] = _unloaded
                stubbed = True
        if not stubbed:
            return

        def gone(*args: Any) -> None:  # after the cell: the name is gone too
            shell.events.unregister("post_run_cell", gone)
            for namespace in spaces:
                if namespace.get(self.name) is _unloaded:
                    del namespace[self.name]

        shell.events.register("post_run_cell", gone)


async def _unloaded(*args: Any) -> None:
    from IPython.core.error import UsageError

    raise UsageError(
        "dsh_nb was unloaded (%unload_ext dsh_nb) before this magic ran; "
        "run %load_ext dsh_nb to use it again"
    )


def magic_start(line: list[Any], magic: str, *, assign: bool = False) -> Start | None:
    """Where a top-level ``%magic`` starts on one line's tokens, or None.

    With ``assign``, ``NAME = %magic`` counts too. ``% magic``, a longer
    name (``%magicx``) and IPython's help (``%magic?``) do not.
    """
    if (
        assign
        and len(line) >= 4
        and line[0].type == tokenize.NAME
        and line[0].start[1] == 0
        and line[1].string == "="
    ):
        line = line[2:]
    elif not line or line[0].start[1] != 0:
        return None
    if len(line) < 2 or line[0].string != "%" or line[1].string != magic:
        return None
    percent, name = line[0], line[1]
    if name.type != tokenize.NAME or name.start != percent.end:
        return None
    after = line[2] if len(line) > 2 else None
    if after is not None and after.start == name.end and after.string == "?":
        return None
    row, col = percent.start
    return int(row), int(col)


def line_rest(lines: list[str], row: int, col: int, magic: str) -> tuple[str, int]:
    """What follows ``%magic`` at ``lines[row][col]``, and the row it ends on.

    A line continued with backslashes is read to its end.
    """
    end = find_end_of_continued_line(lines, row)
    text = assemble_continued_line(lines, (row, col), end)
    return text[len(magic) + 1 :].strip(), end


def line_transformer(
    magic: str,
    rewrite: Callable[[list[str], int, int], list[str]],
    enabled: Callable[[], bool],
    *,
    assign: bool = False,
) -> type[TokenTransformBase]:
    """A ``TokenTransformBase`` subclass that rewrites a top-level ``%magic``.

    IPython calls ``find`` on the class, so the functions ride on it; the
    class is named for the magic (``%tool_eval``: ``ToolEvalLine``). Its
    priority is below ``HelpEnd`` (5, ``%magic?``) and above
    ``EscapedCommand`` and ``MagicAssign`` (10), which would otherwise turn
    the line into a ``run_line_magic`` call that cannot await.
    """

    class MagicLine(TokenTransformBase):
        priority = 6

        @classmethod
        def find(cls, tokens_by_line: list[list[Any]]) -> MagicLine | None:
            if not enabled():
                return None
            for line in tokens_by_line:
                start = magic_start(line, magic, assign=assign)
                if start is not None:
                    return cls(start)
            return None

        def transform(self, lines: list[str]) -> list[str]:
            return rewrite(lines, self.start_line, self.start_col)

    name = "".join(part.title() for part in magic.split("_")) + "Line"
    MagicLine.__name__ = MagicLine.__qualname__ = name
    return MagicLine


def cell_call(lines: list[str], form: re.Pattern[str], helper: Helper) -> list[str]:
    """A cell whose first line matches ``form`` as ``await HELPER(rest, body)``.

    ``form`` captures the rest of the first line as ``rest``; any other
    cell, or one that cannot await, is returned as it is.
    """
    match = form.match(lines[0].rstrip("\r\n")) if lines else None
    if match is None or not can_await(helper.shell):
        return lines
    helper.put()
    body = "".join(lines[1:])
    return [f"await {helper.name}({match['rest'].strip()!r}, {body!r})\n"]


def remove_magics(shell: InteractiveShell, magics: Magics) -> None:
    """Take every magic of ``magics`` out of the shell, if it is still ours."""
    manager = shell.magics_manager
    for kind, table in magics.magics.items():
        for name in table:
            if getattr(manager.magics[kind].get(name), "__self__", None) is magics:
                del manager.magics[kind][name]
    if manager.registry.get(type(magics).__name__) is magics:
        del manager.registry[type(magics).__name__]
