"""A small module the e2e tests open from a tool card's file location."""

from __future__ import annotations


def greet(name: str) -> str:
    """Say hello."""
    return f"Hello, {name}!"


def add(a: int, b: int) -> int:
    """Line 12 is the body of this function."""
    return a + b


def main() -> None:
    print(greet("world"))
    print(add(2, 3))


if __name__ == "__main__":
    main()
