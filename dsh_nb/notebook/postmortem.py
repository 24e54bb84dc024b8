"""``%debug`` after a ``%call`` or ``%%chat`` whose tool raised.

IPython's ``%debug`` opens the post-mortem of ``sys.last_traceback``,
which it sets when a cell fails. A tool's failure is a result, not a
failed cell, so nothing set it: this sets ``sys.last_type``,
``sys.last_value`` and ``sys.last_traceback`` (and ``sys.last_exc`` on
Python 3.12+) as IPython does for a failed cell, so ``%debug`` opens at
the frame that raised, inside the tool.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dsh_nb.tools.audit.failure import Failure

__all__ = ["remember"]


def remember(failure: Failure | None) -> None:
    """Make ``failure``'s exception the one ``%debug`` opens."""
    exc = failure.exception if failure is not None else None
    if exc is None:
        return
    sys.last_type = type(exc)
    sys.last_value = exc
    sys.last_traceback = exc.__traceback__
    if sys.version_info >= (3, 12):
        sys.last_exc = exc
