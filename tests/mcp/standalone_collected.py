"""A module with ``@tool`` functions and no registry: serve collects them."""

from __future__ import annotations

from dsh_nb import tool

# A module that prints as it is imported: on stdio, stdout is the protocol.
print("importing standalone_collected")


@tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"


@tool
def square(x: int) -> str:
    """Square an integer."""
    return str(x * x)


alias = square  # the same tool twice is served once
not_a_tool = 42
