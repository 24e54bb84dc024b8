"""The stage driver and what its stages share: call state, decisions, traces.

A registry hands one call to :func:`~dsh_nb.tools.pipeline.driver.run` (the
caller's door) or :func:`~dsh_nb.tools.pipeline.driver.execute` (the
contract's ``execute``); everything else here is the driver's own.
"""

from __future__ import annotations

from dsh_nb.tools.pipeline.driver import execute, run

__all__ = ["execute", "run"]
