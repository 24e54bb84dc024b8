"""``python -m dsh_nb demo``: the headless tour."""

from __future__ import annotations

import sys

from dsh_nb.demo import main

sys.exit(main())
