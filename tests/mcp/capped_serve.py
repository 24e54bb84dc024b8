"""``python -m dsh_nb serve`` with the input-round caps lowered from the env.

The overall cap is 256 calls; a test reaches a lower one in seconds. Only
the two constants change: the process is the real command line otherwise.
"""

from __future__ import annotations

import os
import sys

from dsh_nb.mcp import rounds

rounds.MAX_HELD = int(os.environ["DSH_MAX_HELD"])  # type: ignore[misc]

from dsh_nb.mcp.servecli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
