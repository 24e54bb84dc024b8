"""Signature tools: a Python function's parameters and return, through pydantic.

``plan`` reads a function once, at definition; ``_binding`` validates and
calls it per call; ``returns`` decides what its return value becomes;
``_dslview`` projects the signature into the SchemaSpec DSL's words.
"""

from __future__ import annotations

from dsh_nb.tools.signature._binding import bind, bind_to_signature
from dsh_nb.tools.signature._dslview import spec_from_signature
from dsh_nb.tools.signature.plan import (
    Param,
    SignaturePlan,
    docstring_summary,
    plan_signature,
)

__all__ = [
    "Param",
    "SignaturePlan",
    "bind",
    "bind_to_signature",
    "docstring_summary",
    "plan_signature",
    "spec_from_signature",
]
