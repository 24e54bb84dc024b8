"""A tool talks back while it runs: ``ToolContext`` and what it carries.

:mod:`.toolcontext` is the context a call gets; :mod:`.capture` routes
what the call prints, logs and warns to it; :mod:`.forms` reads the type
of a question into a flat form; :mod:`.values` holds the values a door
receives.
"""

from __future__ import annotations

from dsh_nb.tools.context.binding import current_tool_context
from dsh_nb.tools.context.toolcontext import ToolContext
from dsh_nb.tools.context.values import (
    Answer,
    LogLine,
    Progress,
    Question,
    SampleRequest,
    SamplingUnavailable,
    ToolContextError,
)

__all__ = [
    "Answer",
    "LogLine",
    "Progress",
    "Question",
    "SampleRequest",
    "SamplingUnavailable",
    "ToolContext",
    "ToolContextError",
    "current_tool_context",
]
