"""An in-process IPython shell with the extension loaded, for magic tests.

``fresh_shell()`` resets the process's ``InteractiveShell`` singleton, loads
``dsh_nb`` and yields it; ``run(ip, code)`` runs one cell and returns what it
displayed (displays and display updates, with their ids), printed and
raised, the way a frontend would receive it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from IPython.core.interactiveshell import ExecutionResult, InteractiveShell
from IPython.utils.capture import capture_output

from dsh_nb.cards import CARD_MIME

__all__ = ["EXT", "Cell", "fresh_shell", "run"]

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


def fresh_shell() -> Iterator[InteractiveShell]:
    """Yield the shell with a freshly loaded extension; unload afterwards."""
    ip = InteractiveShell.instance()
    ip.colors = "nocolor"
    ip.run_cell(f"%unload_ext {EXT}")
    ip.reset(new_session=False)
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
