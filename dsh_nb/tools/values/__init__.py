"""The values floor: what one call carries, and what became of it.

The bottom of ``dsh_nb.tools``: these modules import nothing above
``errors`` and ``jsonvalue``, so every other module may name them.
:mod:`~dsh_nb.tools.values.execution` holds the call's values (its input,
the live :class:`ToolExecution`, its result, the listeners' decisions);
:mod:`~dsh_nb.tools.values.outcome` says what happened to it (status,
deciding stage, approval answer).
"""

from __future__ import annotations

__all__: list[str] = []
