"""dsh_nb: an LLM tool pipeline for Jupyter."""

from __future__ import annotations

__version__ = "0.1.0"
