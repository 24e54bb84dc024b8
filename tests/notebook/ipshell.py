"""An in-process IPython shell with the extension loaded, for magic tests.

``fresh_shell()`` resets the process's ``InteractiveShell`` singleton, loads
``dsh_nb`` and yields it; ``run(ip, code)`` runs one cell and returns what it
displayed (displays and display updates, with their ids), printed and
raised, the way a frontend would receive it.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from IPython.core.async_helpers import get_asyncio_loop
from IPython.core.interactiveshell import ExecutionResult, InteractiveShell
from IPython.utils.capture import capture_output

from dsh_nb.cards import CARD_MIME

__all__ = ["EXT", "Cell", "fresh_shell", "run", "settle_loop"]

EXT = "dsh_nb.notebook.extension"


@dataclass(frozen=True, slots=True)
class Cell:
    """What one cell produced."""

    result: ExecutionResult
    outputs: tuple[Mapping[str, Any], ...]
    stdout: str
    stderr: str

    @property
    def error(self) -> BaseException | None:
        return self.result.error_in_exec or self.result.error_before_exec

    def cards(self) -> list[dict[str, Any]]:
        """Every card payload displayed or updated, in order."""
        return [o["data"][CARD_MIME] for o in self.outputs if CARD_MIME in o["data"]]

    def statuses(self) -> list[str]:
        return [c["status"] for c in self.cards()]

    def final_cards(self) -> dict[str, dict[str, Any]]:
        """The last payload of each display id: what the notebook keeps."""
        out: dict[str, dict[str, Any]] = {}
        for o in self.outputs:
            if CARD_MIME in o["data"]:
                out[(o["transient"] or {}).get("display_id", "")] = o["data"][CARD_MIME]
        return out


def run(ip: InteractiveShell, code: str) -> Cell:
    """Run ``code`` as one cell and capture its outputs."""
    with capture_output() as captured:
        result = ip.run_cell(code)
    outputs = tuple(
        {
            "data": o.data,
            "metadata": o.metadata,
            "transient": o.transient,
            "update": o.update,
        }
        for o in captured.outputs
    )
    return Cell(result, outputs, captured.stdout, captured.stderr)


def settle_loop() -> None:
    """Run what earlier cells left on IPython's event loop, outside any cell.

    A plain shell (unlike a kernel) runs its one loop only while a cell
    awaits, so a card update scheduled in the last turn of a cell runs at
    the next awaiting cell, in whichever test that is: its displays would
    land in that test's outputs. Tasks left pending are cancelled.
    """
    loop = get_asyncio_loop()
    if loop.is_running():
        return
    for _ in range(3):
        loop.run_until_complete(asyncio.sleep(0))
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _reset(ip: InteractiveShell) -> None:
    """``ip.reset()`` without the full ``gc.collect()`` it ends with.

    IPython's reset flushes the output cache and then collects every
    generation, which walks the whole heap of the test process: late in a
    pytest worker that had run a few hundred tests it cost about 1.5 s per
    fresh shell, most of a notebook test's time. Freezing the heap for the
    reset makes that collection see only what the reset itself made; the
    namespace it drops is freed by reference counting at once, and any
    cycles in it by the collector's next automatic run.
    """
    gc.freeze()
    try:
        ip.reset(new_session=False)
    finally:
        gc.unfreeze()


def fresh_shell() -> Iterator[InteractiveShell]:
    """Yield the shell with a freshly loaded extension; unload afterwards."""
    settle_loop()
    ip = InteractiveShell.instance()
    ip.colors = "nocolor"
    ip.run_cell(f"%unload_ext {EXT}")
    _reset(ip)
    ip.config.pop("DshConfig", None)
    ip.config.pop("DshChat", None)
    loaded = ip.run_cell(f"%load_ext {EXT}")
    assert loaded.success, loaded.error_in_exec
    ip.run_cell('%config DshConfig.frontend = "headless"')
    try:
        yield ip
    finally:
        ip.run_cell("%autoawait on")
        ip.run_cell(f"%unload_ext {EXT}")
        settle_loop()
