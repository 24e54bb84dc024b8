"""Schemas: the SchemaSpec DSL, raw JSON Schema, the structured-output subset.

What a tool's parameters are, written once and read three ways: the JSON
Schema a model is shown, the argument check a call goes through, and the
definition-time check that speaks to the tool's author. The package's
names are :mod:`dsh_nb.tools.schema.spec`'s, re-exported under its list.
"""

from __future__ import annotations

from dsh_nb.tools.schema.spec import *  # noqa: F403 - the DSL's public names
from dsh_nb.tools.schema.spec import __all__ as _SPEC_ALL

__all__ = [*_SPEC_ALL]
