"""``LogMagics``: ``%tool_log``, the session's events, saved or followed.

The events are the default agent's session log; ``--follow`` hands a
server's journal file to :mod:`dsh_nb.notebook.follow`, which shows each
call appended to it as a card.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class

from dsh_nb.cards.listing import Table
from dsh_nb.notebook.magics.args import argument, magic_arguments, parse_argstring
from dsh_nb.notebook.magics.toolcell import unquote
from dsh_nb.tools.jsonvalue import compact_json, to_plain

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from dsh_nb.notebook.state import KernelState

__all__ = ["LogMagics"]


@magics_class
class LogMagics(Magics):
    """Show, save or follow what the tools did."""

    def __init__(self, shell: InteractiveShell, state: KernelState) -> None:
        super().__init__(shell)
        self.state = state

    @magic_arguments()
    @argument("--save", metavar="FILE", help="write the events as JSON Lines")
    @argument("--follow", metavar="FILE", nargs="?", const="", help="show new calls")
    @argument("--stop", action="store_true", help="with --follow: stop following")
    @line_magic
    def tool_log(self, line: str) -> Table | None:
        """Show the session's events, save them, or follow a server's journal.

        ``--follow FILE`` shows each call another process (a server run
        with ``--journal FILE``) appends to FILE, live, as cards under this
        cell, until ``%tool_log --follow --stop`` or the next ``--follow``.

        Examples
        --------
        ::

            %tool_log
            %tool_log --save session.jsonl
            %tool_log --follow journal.jsonl
            %tool_log --follow --stop
        """
        args = parse_argstring(self.tool_log, line, "%tool_log")  # type: ignore[misc]
        if args.follow is not None or args.stop:
            from dsh_nb.notebook.follow import run

            run(self.state, unquote(args.follow or ""), stop=args.stop)
            return None
        session = self.state.agent.session
        if args.save:
            path = unquote(args.save)
            try:
                session.write_jsonl(path)
            except OSError as exc:
                raise UsageError(
                    f"cannot write {path!r}: {exc.strerror or exc}"
                ) from None
            print(f"wrote {len(session)} events to {path!r}")
            return None
        rows = []
        for index, event in enumerate(session.events):
            text = compact_json(to_plain(event["data"]))
            rows.append(
                (
                    str(index),
                    event["type"],
                    text[:117] + "…" if len(text) > 120 else text,
                )
            )
        return Table("session log", ("#", "type", "data"), rows, empty="no events yet")
